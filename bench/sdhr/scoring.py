"""Consistency and stale dependency hits of ranked answers."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from bench._http import percentile
from bench.sdhr.data import Question, Ranked, answer_matches
from memorypr.formation.patterns import template_fact
from memorypr.formation.text import normalize

# --- scoring ------------------------------------------------------------------------------


def score(questions: Sequence[Question], ranked: Sequence[Ranked], contexts: Sequence[str]) -> dict[str, Any]:
    top1 = topk = loose = 0
    stale_any = stale_first = 0
    for question, items, context in zip(questions, ranked, contexts, strict=True):
        own = [value for key, value in items if key == question.key]
        if items and items[0][0] == question.key and answer_matches(items[0][1], question.answers):
            top1 += 1
        topk += any(answer_matches(value, question.answers) for value in own)
        loose += answer_matches(context, question.answers)
        if question.updated:
            old = {normalize(v) for v in question.stale}
            stale_any += any(normalize(value) in old for value in own)
            stale_first += bool(own) and normalize(own[0]) in old
    n, updates = len(questions), sum(q.updated for q in questions)
    return {
        "consistencyTop1": share(top1, n),
        "consistencyTop5": share(topk, n),
        "answerInContext": share(loose, n),
        "sdhrTop5": share(stale_any, updates),
        "sdhrFirstVersion": share(stale_first, updates),
        "staleHits": stale_any,
    }


def share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else float("nan")


def ms_stats(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(list(values), 50), 2), "p95": round(percentile(list(values), 95), 2)}


def ask_all(
    questions: Sequence[Question], ask: Callable[[str], tuple[Ranked, str]]
) -> tuple[dict[str, Any], list[float]]:
    ranked, contexts, latencies = [], [], []
    for question in questions:
        started = time.perf_counter()
        items, context = ask(question.text)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked.append(items)
        contexts.append(context)
    return score(questions, ranked, contexts), latencies


def parse_ranked(texts: Sequence[str]) -> Ranked:
    items = []
    for text in texts:
        found = template_fact(text)
        items.append((found.key, found.value or "") if found else ("", text))
    return items
