"""bench._report: the sdhr benchmark's table and plot, one row and one point per record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench._report import _plot_latency, _plot_sdhr, _sdhr_table


def _system(sdhr: float, top1: float, p50: float) -> dict[str, Any]:
    return {
        "sdhrTop5": sdhr,
        "sdhrFirstVersion": sdhr,
        "consistencyTop1": top1,
        "consistencyTop5": 1.0,
        "ingestFactsPerSecond": 20.0,
        "retrievalMsInProcess": {"p50": p50, "p95": p50 * 2},
    }


def _records() -> dict[str, dict[str, Any]]:
    # written largest first, as a dict from JSON may hold them
    records = {
        "factconsolidation_sh_32k": {
            "facts": 2310,
            "memorypr": _system(0.0, 0.97, 9.0),
            "plainVectorStore": _system(0.9, 0.3, 3.0),
            "mem0": _system(0.9, 0.3, 12.5),
        },
        "factconsolidation_sh_6k": {
            "facts": 455,
            "memorypr": _system(0.0, 1.0, 8.0),
            "plainVectorStore": _system(0.86, 0.36, 2.0),
            "mem0": _system(0.86, 0.36, 11.0),
        },
    }
    return {"sdhr": {"result": {"records": records}}}


def test_the_sdhr_table_has_a_row_per_record_and_system_smallest_record_first() -> None:
    # given the figures of two records
    # when the table is written
    lines = _sdhr_table(_records()).splitlines()
    # then it has a header, a rule and three systems for each record, the smaller record first
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [(row[0], row[2]) for row in rows] == [
        ("factconsolidation_sh_6k", "memorypr"),
        ("factconsolidation_sh_6k", "plainVectorStore"),
        ("factconsolidation_sh_6k", "mem0"),
        ("factconsolidation_sh_32k", "memorypr"),
        ("factconsolidation_sh_32k", "plainVectorStore"),
        ("factconsolidation_sh_32k", "mem0"),
    ]
    assert rows[3][3:7] == ["0.0", "0.0", "0.97", "1.0"]


def test_the_sdhr_plot_is_drawn_over_every_record(tmp_path: Path) -> None:
    # given the figures of two records
    figure = tmp_path / "sdhr.png"
    # when the plot is drawn
    note = _plot_sdhr(_records(), figure)
    # then it is a PNG and its note names both records with their sizes
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert note == "records: factconsolidation_sh_6k (455 facts), factconsolidation_sh_32k (2310 facts)"


def test_the_latency_plot_puts_mem0_at_every_record_size(tmp_path: Path) -> None:
    # given retrieval figures for memorypr and the plain table, and mem0's from two sdhr records
    records = _records() | {
        "retrieval": {
            "result": {
                "10k_one_subject": {"hybrid_ms": {"p50": 8.8}, "plain_vector_ms": {"p50": 4.5}},
                "100k_one_subject": {"hybrid_ms": {"p50": 8.7}, "plain_vector_ms": {"p50": 3.9}},
            }
        }
    }
    figure = tmp_path / "latency.png"
    # when the plot is drawn
    note = _plot_latency(records, figure)
    # then mem0 is drawn at both record sizes
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert note == "mem0 measured at the sizes of the sdhr records (455 facts, 2310 facts)"
