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

SOURCE = "factconsolidation_sh_6k"
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
