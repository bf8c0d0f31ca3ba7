"""Embedding benchmark: each backend's batched throughput, query latency, memory and agreement.

Texts: 1,000 fact texts and distinct queries, generated as the retrieval benchmark does.
Each backend (torch = sentence-transformers, onnx = ONNX Runtime) runs in a fresh child process,
so its memory is its own, with MEMORYPR_EMBEDDING_THREADS as set (default 1 intra-op thread,
as web and worker processes run). Rounds alternate torch and onnx and the medians are reported:
on a shared machine the figures are noisy, and the ratio of a round's two figures less so.

Measured per child, through the public `embed_texts` / `embed_text`:
- load: model load plus one warm-up text (the ONNX export is cached under .data/models and
  reused, so this is not the one-off export);
- batched: the 1,000 texts in batches of 64, sentences/s (all cache misses);
- query: one text at a time, p50/p95 ms (all misses), then the same queries again (cache hits);
- RSS after loading and after the run (MB), and peak RSS.
Agreement: cosine of every text's onnx vector to its torch vector (min and mean).
int8: ONNX Runtime's dynamic quantisation (per channel) of the cached graph, measured the same
way on the model directly, in two variants: every matrix product (`int8`), and only the layers
whose rounding moves the vectors least (`int8Layers`: the feed-forward expansions, the attention
output projections, and the attention of every layer but the first and the last). A variant is
acceptable only if its cosine to the torch vectors is at least 0.99 on every text: the generated
texts and queries, and the turns and persona lines of real conversations (Synthetic-Persona-Chat,
valid split), embedded after the timed part.
bf16: the bulk encoder of merges (`memorypr.vectors.bulk`: torch with its linear layers in
bfloat16, on the CPU's matrix unit where it has one), measured the same way on the encoder
directly; used by merges only if its cosine to the torch vectors is at least 0.999 on every text.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memorypr.vectors.bulk import MIN_COSINE as BULK_MIN_COSINE
from memorypr.vectors.encoders import Encoder

REPO = Path(__file__).resolve().parent.parent
INT8_MIN_COSINE = 0.99
CONVERSATION_TEXTS = 600


def _matrix_products(graph: Any) -> list[str]:
    return [node.name for node in graph.graph.node if node.op_type in ("MatMul", "Attention")]


def _quiet_layers(graph: Any) -> list[str]:
    """The feed-forward expansions, the attention output projections, and the fused attention
    of every layer but the first and the last: measured on the generated texts, the products
    whose int8 rounding moves the sentence vectors least for the time it saves."""
    names = _matrix_products(graph)
    attentions = sorted(name for name in names if name.startswith("Attention_"))
    return [
        name
        for name in names
        if "/intermediate/dense/" in name or "/attention/output/dense/" in name or name in attentions[1:-1]
    ]


INT8_VARIANTS = {"int8": _matrix_products, "int8Layers": _quiet_layers}


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def _rss_mb() -> float:
    import psutil

    return round(psutil.Process().memory_info().rss / 2**20, 1)


def _measure(embed_batch: Any, embed_one: Any, texts: list[str], queries: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    batch_vectors = embed_batch(texts)
    batch_seconds = time.perf_counter() - started
    latencies, query_vectors = [], []
    for query in queries:
        started = time.perf_counter()
        query_vectors.append(embed_one(query))
        latencies.append((time.perf_counter() - started) * 1000)
    return {
        "figures": {
            "sentencesPerSecond": round(len(texts) / batch_seconds, 1),
            "queryMs": {
                "p50": round(_percentile(latencies, 50), 2),
                "p95": round(_percentile(latencies, 95), 2),
            },
        },
        "vectors": np.asarray(list(batch_vectors) + list(query_vectors), dtype=np.float32),
    }


def _threads() -> int:
    return int(os.environ.get("MEMORYPR_EMBEDDING_THREADS", "1") or "1")


def _variant_encoder(backend: str, workdir: Path) -> tuple[Encoder, str, float]:
    """The encoder of a variant measured beside the backends (not loaded through memorypr's
    choice): the bfloat16 bulk encoder, or an int8 quantisation of the ONNX export; with its
    name and the seconds it took to load and warm (the quantisation not counted)."""
    if backend == "bf16":
        from memorypr.vectors.bulk import Bf16Encoder

        started = time.perf_counter()
        bulk = Bf16Encoder.load(threads=_threads())
        bulk.encode(["warm"], batch_size=1)
        return bulk, bulk.name, time.perf_counter() - started
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from memorypr.vectors.encoders import OnnxEncoder
    from memorypr.vectors.onnx_model import onnx_model_path, package_model_dir, session_open

    quantized = workdir / f"{backend}.onnx"
    # The fused graph's contrib ops carry no type information for the quantiser: they are float.
    quantize_dynamic(
        onnx_model_path(),
        quantized,
        per_channel=True,
        weight_type=QuantType.QInt8,
        nodes_to_quantize=INT8_VARIANTS[backend](onnx.load(str(onnx_model_path()))),
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    started = time.perf_counter()
    encoder = OnnxEncoder(
        session=session_open(quantized, threads=_threads()),
        tokenizer=OnnxEncoder.tokenizer_load(package_model_dir()),
    )
    encoder.encode(["warm"], batch_size=1)
    return encoder, backend, time.perf_counter() - started


def _child(backend: str, workdir: Path) -> None:
    """One backend in this fresh process; figures to workdir/<backend>.json, vectors to .npy."""
    data = json.loads((workdir / "texts.json").read_text())
    texts, queries = data["texts"], data["queries"]
    rss_start = _rss_mb()
    cached: dict[str, Any]
    if backend == "bf16" or backend in INT8_VARIANTS:
        encoder, name, load_seconds = _variant_encoder(backend, workdir)
        rss_loaded = _rss_mb()
        result = _measure(
            lambda items: encoder.encode(items, batch_size=64),
            lambda item: encoder.encode([item], batch_size=1)[0],
            texts,
            queries,
        )
        conversation = np.asarray(encoder.encode(data["conversation"], batch_size=64), dtype=np.float32)
        cached = {}
    else:
        os.environ["MEMORYPR_EMBEDDING_BACKEND"] = backend
        from memorypr.vectors import embedding

        started = time.perf_counter()
        embedding.embedding_model_warm()
        load_seconds = time.perf_counter() - started
        rss_loaded = _rss_mb()
        name = embedding.embedding_backend_name()
        result = _measure(
            lambda items: embedding.embed_texts(items, batch_size=64), embedding.embed_text, texts, queries
        )
        hits = []
        for query in queries:
            started = time.perf_counter()
            embedding.embed_text(query)
            hits.append((time.perf_counter() - started) * 1000)
        cached = {
            "cachedQueryMs": {"p50": round(_percentile(hits, 50), 3), "p95": round(_percentile(hits, 95), 3)}
        }
        conversation = np.asarray(
            embedding.embed_texts(data["conversation"], batch_size=64), dtype=np.float32
        )
    np.save(workdir / f"{backend}.npy", result["vectors"])
    np.save(workdir / f"{backend}-conversation.npy", conversation)
    figures = {
        "backend": name,
        "loadSeconds": round(load_seconds, 2),
        **result["figures"],
        **cached,
        "rssMB": {
            "start": rss_start,
            "loaded": rss_loaded,
            "after": _rss_mb(),
            "peak": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        },
        "torchImported": "torch" in sys.modules,
    }
    (workdir / f"{backend}.json").write_text(json.dumps(figures))


def _run_child(backend: str, workdir: Path) -> dict[str, Any]:
    subprocess.run(  # noqa: S603 - this module, run by this interpreter
        [sys.executable, "-m", "bench.embedding", "--child", backend, str(workdir)],
        cwd=str(REPO),
        check=True,
    )
    return dict(json.loads((workdir / f"{backend}.json").read_text()))


def _cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {"min": round(float(cosines.min()), 6), "mean": round(float(cosines.mean()), 6)}


def _median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(float(value))
    return round(statistics.median(values), 2)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    summary = {
        "backend": runs[0]["backend"],
        "sentencesPerSecond": _median(runs, "sentencesPerSecond"),
        "queryMs": {"p50": _median(runs, "queryMs", "p50"), "p95": _median(runs, "queryMs", "p95")},
        "loadSeconds": _median(runs, "loadSeconds"),
        "rssMB": {
            "loaded": _median(runs, "rssMB", "loaded"),
            "after": _median(runs, "rssMB", "after"),
            "peak": _median(runs, "rssMB", "peak"),
        },
        "torchImported": runs[0]["torchImported"],
        "rounds": [{k: r[k] for k in ("sentencesPerSecond", "queryMs")} for r in runs],
    }
    if "cachedQueryMs" in runs[0]:
        summary["cachedQueryMs"] = {
            "p50": _median(runs, "cachedQueryMs", "p50"),
            "p95": _median(runs, "cachedQueryMs", "p95"),
        }
    return summary


def run(options: dict[str, Any]) -> dict[str, Any]:
    from bench.retrieval import _facts, _queries
    from memorypr.vectors.embedding import fact_text

    quick = bool(options.get("quick"))
    rounds = 2 if quick else 3
    texts = [fact_text(key=key, value=value) for key, value in _facts(1_000)]
    queries = _queries(100 if quick else 300, seed=23)
    conversation = _conversation_texts(CONVERSATION_TEXTS)
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {
        "torch": [], "onnx": [], "bf16": [], **{name: [] for name in INT8_VARIANTS}
    }  # fmt: skip
    vectors: dict[str, dict[str, np.ndarray]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-embedding-") as tmp:
        workdir = Path(tmp)
        (workdir / "texts.json").write_text(
            json.dumps({"texts": texts, "queries": queries, "conversation": conversation})
        )
        for _ in range(rounds):
            for backend in ("torch", "onnx"):
                runs[backend].append(_run_child(backend, workdir))
                vectors.setdefault(backend, _vectors(workdir, backend, texts=len(texts)))
            for variant in ("bf16", *INT8_VARIANTS):
                runs[variant].append(_run_child(variant, workdir))
                vectors.setdefault(variant, _vectors(workdir, variant, texts=len(texts)))
    torch_summary, onnx_summary = _summary(runs["torch"]), _summary(runs["onnx"])
    per_round = [
        {
            "sentencesPerSecond": round(o["sentencesPerSecond"] / t["sentencesPerSecond"], 2),
            "queryP50": round(t["queryMs"]["p50"] / o["queryMs"]["p50"], 2),
        }
        for t, o in zip(runs["torch"], runs["onnx"], strict=True)
    ]
    return {
        "texts": len(texts),
        "queries": len(queries),
        "batchSize": 64,
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "loadAverage1m": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
        "threads": _threads(),
        "torch": torch_summary,
        "onnx": onnx_summary,
        "onnxOverTorch": {
            "sentencesPerSecond": round(
                onnx_summary["sentencesPerSecond"] / torch_summary["sentencesPerSecond"], 2
            ),
            "queryP50Speedup": round(torch_summary["queryMs"]["p50"] / onnx_summary["queryMs"]["p50"], 2),
            "queryP95Speedup": round(torch_summary["queryMs"]["p95"] / onnx_summary["queryMs"]["p95"], 2),
            "rssLoadedMB": round(onnx_summary["rssMB"]["loaded"] - torch_summary["rssMB"]["loaded"], 1),
            "perRound": per_round,
        },
        "conversationTexts": len(conversation),
        "agreement": {
            "onnxToTorchCosine": {
                part: _cosines(vectors["onnx"][part], vectors["torch"][part]) for part in vectors["torch"]
            }
        },
        "bf16": _variant_figures(
            _summary(runs["bf16"]),
            onnx_summary,
            vectors["bf16"],
            vectors["torch"],
            min_cosine=BULK_MIN_COSINE,
        ),
        **{
            variant: _variant_figures(
                _summary(runs[variant]),
                onnx_summary,
                vectors[variant],
                vectors["torch"],
                min_cosine=INT8_MIN_COSINE,
            )
            for variant in INT8_VARIANTS
        },
    }


def _variant_figures(
    summary: dict[str, Any],
    onnx: dict[str, Any],
    vectors: dict[str, np.ndarray],
    torch: dict[str, np.ndarray],
    *,
    min_cosine: float,
) -> dict[str, Any]:
    """A reduced-precision variant's speed beside fp32 ONNX's, and its agreement with torch on each set of texts."""
    agreement = {part: _cosines(vectors[part], torch[part]) for part in torch}
    return {
        "sentencesPerSecond": summary["sentencesPerSecond"],
        "queryMs": summary["queryMs"],
        "queryP50OverOnnx": round(summary["queryMs"]["p50"] / onnx["queryMs"]["p50"], 2),
        "sentencesPerSecondOverOnnx": round(summary["sentencesPerSecond"] / onnx["sentencesPerSecond"], 2),
        "rssMB": summary["rssMB"],
        "perRound": summary["rounds"],
        "cosineToTorch": agreement,
        "accepted": min(part["min"] for part in agreement.values()) >= min_cosine,
    }


def _vectors(workdir: Path, backend: str, *, texts: int) -> dict[str, np.ndarray]:
    """A child's vectors by set of texts: generated fact texts, queries, conversation lines."""
    timed = np.load(workdir / f"{backend}.npy")
    return {
        "generatedTexts": timed[:texts],
        "queries": timed[texts:],
        "conversation": np.load(workdir / f"{backend}-conversation.npy"),
    }


def _conversation_texts(count: int) -> list[str]:
    """Turns and persona lines of the valid split's conversations, in order, each once."""
    from bench.formation import load_conversations

    lines: dict[str, None] = {}
    for conversation in load_conversations("valid"):
        for line in [*conversation.personas, *(turn.content for turn in conversation.turns)]:
            lines.setdefault(line, None)
            if len(lines) >= count:
                return list(lines)
    return list(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", required=True, choices=["torch", "onnx", "bf16", *INT8_VARIANTS])
    parser.add_argument("workdir", type=Path)
    args = parser.parse_args()
    _child(args.child, args.workdir)
