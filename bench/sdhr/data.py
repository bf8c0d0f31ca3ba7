"""The record, the facts and questions the benchmark reads from it."""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench._http import REPO
from memorypr.formation.patterns import template_fact
from memorypr.formation.text import normalize

SOURCE = "factconsolidation_sh_6k"  # the smallest record: the quick run's, and the refresh latencies'
# The single-hop records, smallest first: 455, 2,310, 4,579 and 18,331 facts.
SOURCES = tuple(f"factconsolidation_sh_{size}" for size in ("6k", "32k", "64k", "262k"))
QUICK_FACTS = 150
TOP_K = 5
PLAIN = "bench_sdhr_plain"
Ranked = list[tuple[str, str]]  # (key, value) of each result, best first


@dataclass(frozen=True)
class Fact:
    index: int
    sentence: str
    key: str
    value: str


@dataclass(frozen=True)
class Question:
    text: str
    answers: tuple[str, ...]
    key: str
    current: str
    stale: tuple[str, ...]  # earlier values of the key, none of them the answer

    @property
    def updated(self) -> bool:
        return bool(self.stale)


def data_path() -> Path:
    return Path(
        os.environ.get("MEMORYPR_MAB_DATA")
        or REPO.parent / "shared" / "data" / "memoryagentbench" / "Conflict_Resolution.json"
    )


def sources_chosen() -> list[str]:
    """MEMORYPR_SDHR_RECORDS (comma-separated: sources, or their sizes such as `6k,32k`), or every
    single-hop record; an unknown one fails the benchmark with the ones there are."""
    wanted = [part.strip() for part in os.environ.get("MEMORYPR_SDHR_RECORDS", "").split(",") if part.strip()]
    if not wanted:
        return list(SOURCES)
    by_size = {source.rsplit("_", 1)[1]: source for source in SOURCES}
    unknown = [name for name in wanted if name not in SOURCES and name not in by_size]
    if unknown:
        raise RuntimeError(f"MEMORYPR_SDHR_RECORDS: no record {unknown}; there are {list(SOURCES)}")
    chosen = {by_size.get(name, name) for name in wanted}
    return [source for source in SOURCES if source in chosen]


def record_size(source: str) -> str:
    """A record's size as its source names it ('factconsolidation_sh_32k' → '32k')."""
    return source.rsplit("_", 1)[1]


def load(*, source: str, limit: int | None) -> tuple[list[Fact], list[Question], int]:
    record = next(r for r in json.loads(data_path().read_text()) if r["metadata"]["source"] == source)
    facts: list[Fact] = []
    for line in record["context"].splitlines()[1:]:
        found = re.match(r"^(\d+)\. (.*)$", line)
        parsed = template_fact(found.group(2)) if found else None
        if found and parsed and parsed.value:
            facts.append(Fact(int(found.group(1)), found.group(2), parsed.key, parsed.value))
    facts = facts[:limit] if limit else facts
    history: dict[str, list[str]] = defaultdict(list)
    entity_of: dict[str, str] = {}
    for fact in facts:
        history[fact.key].append(fact.value)
        entity_of[fact.key] = fact.key.rsplit(".", 1)[0]
    questions = []
    for text, answers in zip(record["questions"], record["answers"], strict=True):
        words = re.sub(r"[^\w]+", "_", normalize(text))
        keys = [
            key
            for key, values in history.items()
            if f"_{entity_of[key]}_" in f"_{words}_" and answer_matches(values[-1], answers)
        ]
        if not keys:
            continue
        key = max(keys, key=len)  # the most specific entity the question names
        current = history[key][-1]
        stale = tuple(
            dict.fromkeys(
                v
                for v in history[key][:-1]
                if normalize(v) != normalize(current) and not answer_matches(v, answers)
            )
        )
        questions.append(Question(text, tuple(answers), key, current, stale))
    return facts, questions, len(record["questions"])


def answer_matches(value: str, answers: Sequence[str]) -> bool:
    return any(normalize(answer) in normalize(value) for answer in answers)
