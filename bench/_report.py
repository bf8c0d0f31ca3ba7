"""bench/results/: each benchmark's last figures (<name>.json) and the report made of them (README.md).

The report says when and on what each figure was measured (cores, load average, versions),
gives each benchmark's table, and draws the plots with matplotlib (PNG beside it). A
benchmark that failed shows its failure; one never run is listed as missing.
"""

from __future__ import annotations

import json
import os
import platform
import re
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from django.db import connection
from django.utils import timezone

RESULTS = Path(__file__).resolve().parent / "results"
PACKAGES = (
    "Django",
    "psycopg",
    "pgvector",
    "onnxruntime",
    "torch",
    "sentence-transformers",
    "celery",
    "mem0ai",
)


def results_save(*, name: str, result: dict[str, Any], quick: bool, started: datetime) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {
        "benchmark": name,
        "started": started.isoformat(timespec="seconds"),
        "finished": timezone.now().isoformat(timespec="seconds"),
        "quick": quick,
        "machine": machine(),
        "result": result,
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


# The vector instructions that set the embedding model's pace: one processor name ("AMD EPYC")
# covers hosts with and without AVX-512, whose figures differ by more than half.
_VECTOR_FLAGS = {"avx2": "AVX2", "avx512f": "AVX-512", "avx512_bf16": "AVX-512 BF16", "amx_bf16": "AMX"}


def cpu_model() -> str:
    """The processor's name and its vector instructions: machines of one platform string differ,
    and absolute timings with them."""
    name, flags = "", set[str]()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and not name:
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    name = name or platform.processor() or "unknown"
    vector = [label for flag, label in _VECTOR_FLAGS.items() if flag in flags]
    return f"{name} ({', '.join(vector)})" if vector else name


def machine() -> dict[str, Any]:
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('server_version'), (SELECT extversion FROM pg_extension WHERE extname = 'vector')"
        )
        postgres, pgvector = cursor.fetchone() or ("?", "?")
    return {
        "cpus": os.cpu_count(),
        "cpuModel": cpu_model(),
        "loadAverage": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": platform.python_version(),
        "postgres": postgres,
        "pgvectorExtension": pgvector,
        "packages": versions,
    }


def _flat(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows = []
        for key, item in value.items():
            rows += _flat(item, f"{prefix}.{key}" if prefix else str(key))
        return rows
    return [(prefix, value)]


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if cell is None else str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _records() -> dict[str, dict[str, Any]]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(RESULTS.glob("*.json"))}


def _size(label: str) -> int | None:
    match = re.match(r"(\d+)k_", label)
    return int(match.group(1)) * 1000 if match else None


# --- plots ---------------------------------------------------------------------------------


def _plot_latency(records: dict[str, dict[str, Any]], figure: Path) -> str:
    import matplotlib.pyplot as plt

    retrieval = records.get("retrieval", {}).get("result", {})
    one = sorted((_size(k) or 0, v) for k, v in retrieval.items() if k.endswith("_one_subject") and _size(k))
    ab = records.get("retrieval_before_after", {}).get("result", {})
    ab_rows = sorted(
        (int(k.split("-")[0]), v["p50_ms_median_of_3"]) for k, v in ab.items() if k.endswith("-1")
    )
    if not one and not ab_rows:
        return "no `retrieval` figures: no plot"
    fig, ax = plt.subplots(figsize=(6.4, 4))
    if one:
        sizes = [size for size, _ in one]
        ax.plot(
            sizes, [v["hybrid_ms"]["p50"] for _, v in one], "o-", label="memorypr hybrid (bench retrieval)"
        )
        ax.plot(
            sizes,
            [v["plain_vector_ms"]["p50"] for _, v in one],
            "s-",
            label="plain pgvector (bench retrieval)",
        )
    if ab_rows:
        ab_sizes = [size for size, _ in ab_rows]
        ax.plot(ab_sizes, [v["old"] for _, v in ab_rows], "o--", label="memorypr hybrid, before")
        ax.plot(ab_sizes, [v["new"] for _, v in ab_rows], "o-", label="memorypr hybrid, after")
        ax.plot(ab_sizes, [v["plain"] for _, v in ab_rows], "s-", label="plain pgvector")
    note = "mem0: no `sdhr` figures"
    mem0_points = []
    for record in _sdhr_records(records).values():
        mem0 = record.get("mem0", {})
        p50 = next((v for k, v in _flat(mem0) if k.startswith("retrievalMs") and k.endswith(".p50")), None)
        if p50 is not None:
            mem0_points.append((record.get("facts"), p50))
        elif mem0:
            note = f"mem0: {mem0.get('failed') or mem0.get('skipped') or 'no latency'}"
    if mem0_points:
        mem0_points.sort()
        ax.plot(*zip(*mem0_points, strict=True), "^-", label="mem0 (bench sdhr records)")
        note = (
            "mem0 measured at the sizes of the sdhr records ("
            + ", ".join(f"{n} facts" for n, _ in mem0_points)
            + ")"
        )
    ax.set_xscale("log")
    ax.set_xlabel("facts in one subject")
    ax.set_ylabel("p50 latency (ms)")
    ax.set_title("Retrieval latency by fact count")
    ax.legend()
    fig.tight_layout()
    fig.savefig(figure, dpi=100)
    plt.close(fig)
    return note


def _plot_merge(records: dict[str, dict[str, Any]], figure: Path) -> str:
    import matplotlib.pyplot as plt

    merge = records.get("merge", {}).get("result", {})
    batches = merge.get("batchedByKprs")
    if not batches:
        return "no `merge` figures: no plot"
    fig, ax = plt.subplots(figsize=(6.4, 4))
    sizes = sorted(int(size) for size in batches)
    ax.plot(
        sizes, [batches[str(s)]["kprsPerSecond"] for s in sizes], "o-", label="batched merge (in process)"
    )
    ax.axhline(
        merge["transactionOnly"]["kprsPerSecond"], linestyle="--", color="grey", label="transaction only"
    )
    ax.axhline(merge["withEmbedding"]["kprsPerSecond"], linestyle=":", color="red", label="one KPR at a time")
    worker = merge.get("throughWorker", {})
    if "kprsPerSecond" in worker:
        ax.plot([worker["mergeBatch"]], [worker["kprsPerSecond"]], "^", label="real worker (drain)")
    machine = merge.get("throughWorkerMachineSettings", {})
    if "kprsPerSecond" in machine:
        label = f"real worker, bulk {machine.get('embeddingBulk')}, {machine.get('mergeLanes')} lanes"
        ax.plot([machine["mergeBatch"]], [machine["kprsPerSecond"]], "v", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("KPRs per embedding batch")
    ax.set_ylabel("KPRs/s (5 operations each)")
    ax.set_title("Merge throughput by batch size")
    ax.legend()
    fig.tight_layout()
    fig.savefig(figure, dpi=100)
    plt.close(fig)
    return ""


def _scores(system: Any) -> dict[str, Any] | None:
    flat = dict(_flat(system)) if isinstance(system, dict) else {}
    found = {}
    for metric in ("sdhrTop5", "consistencyTop1", "consistencyTop5"):
        found[metric] = next((v for k, v in flat.items() if k.split(".")[-1] == metric), None)
    return found if any(v is not None for v in found.values()) else None


SDHR_SYSTEMS = ("memorypr", "plainVectorStore", "mem0")
SDHR_METRICS = {"sdhrTop5": "SDHR (a stale value in the top 5)", "consistencyTop1": "top-1 current",
                "consistencyTop5": "top-5 current"}  # fmt: skip


def _sdhr_records(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sdhr benchmark's records by source, smallest first."""
    result = records.get("sdhr", {}).get("result", {})
    found = result.get("records", {}) if isinstance(result, dict) else {}
    return dict(sorted(found.items(), key=lambda item: int(item[1].get("facts") or 0)))


def _plot_sdhr(records: dict[str, dict[str, Any]], figure: Path) -> str:
    import matplotlib.pyplot as plt

    by_record = {
        source: {name: _scores(record.get(name)) for name in SDHR_SYSTEMS}
        for source, record in _sdhr_records(records).items()
    }
    if not any(scores for systems in by_record.values() for scores in systems.values()):
        return "no `sdhr` figures: no plot"
    sizes = {source: int(record["facts"]) for source, record in _sdhr_records(records).items()}
    fig, axes = plt.subplots(1, len(SDHR_METRICS), figsize=(12, 3.8), sharey=True)
    for ax, (metric, title) in zip(axes, SDHR_METRICS.items(), strict=True):
        for name, marker in zip(SDHR_SYSTEMS, "osv", strict=True):
            points = [
                (sizes[source], float(scores[metric]))
                for source, systems in by_record.items()
                if (scores := systems.get(name)) and scores.get(metric) is not None
            ]
            if points:
                ax.plot(*zip(*points, strict=True), f"{marker}-", label=name)
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("facts in the record")
        ax.set_title(title)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(figure, dpi=100)
    plt.close(fig)
    return "records: " + ", ".join(f"{source} ({n} facts)" for source, n in sizes.items())


def _sdhr_table(records: dict[str, dict[str, Any]]) -> str:
    rows = []
    for source, record in _sdhr_records(records).items():
        for name in SDHR_SYSTEMS:
            system = record.get(name)
            if not isinstance(system, dict) or "consistencyTop1" not in system:
                continue
            latency = system.get("retrievalMsInProcess", {})
            rows.append([source, record.get("facts"), name, system.get("sdhrTop5"), system.get("sdhrFirstVersion"),
                         system.get("consistencyTop1"), system.get("consistencyTop5"),
                         system.get("ingestFactsPerSecond"), latency.get("p50")])  # fmt: skip
    header = ["record", "facts", "system", "SDHR top 5", "SDHR first version", "top-1", "top-5",
              "ingest facts/s", "retrieval p50 ms (in process)"]  # fmt: skip
    return _table(header, rows)


# --- the report -----------------------------------------------------------------------------


def _retrieval_table(result: dict[str, Any]) -> str:
    rows = []
    for label, v in result.items():
        if isinstance(v, dict) and "hybrid_ms" in v:
            ratio = round(v["hybrid_ms"]["p50"] / v["plain_vector_ms"]["p50"], 2)
            rows.append([label, v["hybrid_ms"]["p50"], v["hybrid_ms"]["p95"], v["plain_vector_ms"]["p50"], ratio,
                         v["vector_stage_recall_at_10"], v["hnsw_recall_at_10"], v["plain_vector_recall_at_10"]])  # fmt: skip
    header = ["layout", "hybrid p50 ms", "hybrid p95 ms", "plain p50 ms", "hybrid/plain", "vector recall@10",
              "HNSW recall@10", "plain recall@10"]  # fmt: skip
    return _table(header, rows)


def report_write() -> Path:
    RESULTS.mkdir(exist_ok=True)
    records = _records()
    now = machine()
    lines = [
        "# Benchmark results",
        "",
        f"Written {timezone.now().isoformat(timespec='seconds')} by `make bench` (`manage.py bench`). Each "
        "benchmark's figures are from its last run (the date, the size and the machine's load are given "
        "per benchmark: other work on the machine moves absolute timings, so compare figures of one run).",
        "",
        "## Machine",
        "",
        _table(
            ["", ""],
            [
                ["cores", now["cpus"]],
                ["processor", now["cpuModel"]],
                ["load average (1, 5, 15 min) now", now["loadAverage"]],
                ["platform", now["platform"]],
                ["python", now["python"]],
                ["PostgreSQL", now["postgres"]],
                ["pgvector", now["pgvectorExtension"]],
                *[[package, version] for package, version in now["packages"].items()],
            ],
        ),  # fmt: skip
        "",
        "## Plots",
        "",
    ]
    for title, name, draw in (
        ("Retrieval latency by fact count", "latency_by_facts.png", _plot_latency),
        ("Merge throughput by batch size", "merge_by_batch.png", _plot_merge),
        ("SDHR and top-1/top-5 by record", "sdhr_by_record.png", _plot_sdhr),
    ):
        note = draw(records, RESULTS / name)
        shown = (RESULTS / name).exists() and not note.startswith("no ")
        lines += [f"### {title}", "", f"![{title}]({name})" if shown else "(no plot)", ""]
        if note:
            lines += [note, ""]
    lines += ["## Benchmarks", ""]
    for name, record in records.items():
        result = record["result"]
        lines += [
            f"### {name}",
            "",
            f"Run {record['started']} → {record['finished']}, {'quick sizes' if record['quick'] else 'full sizes'}, "
            f"load average {record['machine']['loadAverage']} on {record['machine']['cpus']} cores"
            f" ({record['machine'].get('cpuModel', 'processor not recorded')}).",
            "",
        ]
        if "failed" in result:
            lines += [f"**FAILED**: {result['failed']}", ""]
            continue
        if name == "retrieval":
            lines += [_retrieval_table(result), ""]
        if name == "sdhr":
            lines += [_sdhr_table(records), ""]
        lines += [_table(["figure", "value"], [[key, value] for key, value in _flat(result)]), ""]
    path = RESULTS / "README.md"
    path.write_text("\n".join(lines))
    return path
