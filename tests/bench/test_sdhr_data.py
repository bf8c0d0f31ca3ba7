"""bench.sdhr.data: which MemoryAgentBench records the sdhr benchmark runs."""

from __future__ import annotations

import pytest

from bench.sdhr.data import SOURCES, record_size, sources_chosen


def test_every_single_hop_record_runs_by_default_smallest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # given no choice of records
    monkeypatch.delenv("MEMORYPR_SDHR_RECORDS", raising=False)
    # when the benchmark chooses
    chosen = sources_chosen()
    # then it takes every single-hop size, smallest first
    assert [record_size(source) for source in chosen] == ["6k", "32k", "64k", "262k"]


def test_records_are_chosen_by_size_or_source_in_size_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a choice written largest first, one by size and one by its source's name
    monkeypatch.setenv("MEMORYPR_SDHR_RECORDS", "262k, factconsolidation_sh_32k")
    # when the benchmark chooses
    chosen = sources_chosen()
    # then it runs those two, smallest first
    assert chosen == ["factconsolidation_sh_32k", "factconsolidation_sh_262k"]


def test_an_unknown_record_fails_with_the_ones_there_are(monkeypatch: pytest.MonkeyPatch) -> None:
    # given a size the data does not have
    monkeypatch.setenv("MEMORYPR_SDHR_RECORDS", "6k,128k")
    # when the benchmark chooses, then it fails and names the records there are
    with pytest.raises(RuntimeError, match="128k") as failure:
        sources_chosen()
    assert all(source in str(failure.value) for source in SOURCES)
