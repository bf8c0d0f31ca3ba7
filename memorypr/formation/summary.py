"""Formation, summary compression: more than five user turns on one topic become one fact.

The seed's formation step (同一主题的对话超过 5 轮时，触发一次摘要生成): a run of user turns
on one topic is sent to the configured model, which answers with one fact (category, key,
value) and a quote. The quote must be a verbatim span of one of the run's user turns, like
every model fact (`extract.model_fact`); otherwise the summary is dropped with the reason.

Topics: consecutive user turns (the assistant's between them are skipped) stay in one group
while each is at least TOPIC_SIMILARITY (cosine, sentence embeddings) to the group's centroid,
the normalised sum of its turns' vectors; a turn below it starts a new group. The threshold
was chosen on the `valid` split of Synthetic-Persona-Chat (see the formation README).

Without a model, or without an embedder to group turns by, nothing is summarised and
`Summaries.skipped` says why: the rules' facts are proposed as always.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memorypr.formation.extract import ExtractedFact, Turn, model_fact
from memorypr.formation.llm import LlmExtractor, LlmUnavailable
from memorypr.formation.text import slug
from memorypr.formation.vocabulary import Embedder

logger = logging.getLogger(__name__)

SUMMARY_MIN_TURNS = 6  # "more than five turns on one topic"
TOPIC_SIMILARITY = 0.33  # cosine to the group's centroid; chosen on the valid split
SUMMARY_PREFIX = "summary."
NO_MODEL = "summary compression skipped: no model configured (OPENAI_BASE_URL)"
NO_EMBEDDER = "summary compression skipped: no embedder to group turns by topic"


@dataclass
class Summaries:
    facts: list[ExtractedFact] = field(default_factory=list)  # through the checks and the gate
    dropped: list[ExtractedFact] = field(default_factory=list)  # with the reasons
    notes: list[str] = field(default_factory=list)  # for the reviewer: the turns each summarises
    skipped: str | None = None  # why nothing was summarised at all
    errors: list[str] = field(default_factory=list)  # model failures, one per group


def topic_groups(
    turns: Sequence[Turn], *, embed: Embedder, threshold: float = TOPIC_SIMILARITY
) -> list[list[int]]:
    """Runs of consecutive user turns on one topic, as indexes into `turns`."""
    users = [index for index, turn in enumerate(turns) if turn.role == "user" and turn.content.strip()]
    if not users:
        return []
    vectors = embed([turns[index].content for index in users])
    groups: list[list[int]] = []
    total: list[float] = []
    for index, vector in zip(users, vectors, strict=True):
        norm = math.sqrt(sum(x * x for x in total)) if total else 0.0
        similarity = sum(a * b for a, b in zip(vector, total, strict=True)) / norm if norm else -1.0
        if groups and similarity >= threshold:
            groups[-1].append(index)
            total = [a + b for a, b in zip(total, vector, strict=True)]
        else:
            groups.append([index])
            total = list(vector)
    return groups


def _turn_names(indexes: Sequence[int]) -> str:
    return ", ".join(str(index + 1) for index in indexes)


def summarize_topics(
    turns: Sequence[Turn],
    *,
    llm: LlmExtractor | None,
    embed: Embedder | None,
    threshold: float = TOPIC_SIMILARITY,
) -> Summaries:
    """One summary fact per run of more than five user turns on one topic, when a model is configured."""
    if llm is None or embed is None:
        summaries = Summaries(skipped=NO_MODEL if llm is None else NO_EMBEDDER)
        logger.info("%s", summaries.skipped)
        return summaries
    summaries = Summaries()
    try:
        groups = topic_groups(turns, embed=embed, threshold=threshold)
    except (OSError, RuntimeError, ValueError) as exc:
        # The embedding model is loaded on first use; a broken one costs the summaries, not the KPR.
        summaries.skipped = f"summary compression skipped: the embedder failed: {exc}"
        logger.warning("%s", summaries.skipped)
        return summaries
    for group in groups:
        if len(group) < SUMMARY_MIN_TURNS:
            continue
        members = [turns[index] for index in group]
        try:
            items = llm.summarize(members)
        except LlmUnavailable as exc:
            logger.warning(
                "formation model unavailable, turns %s not summarised: %s", _turn_names(group), exc
            )
            summaries.errors.append(f"turns {_turn_names(group)}: {exc}")
            continue
        for item in items:
            fact = model_fact(item, members, source="summary", elsewhere="any of the summarised turns")
            if not fact.key.startswith(SUMMARY_PREFIX):
                # Its own key family, so a summary never replaces what the rules read from one sentence.
                fact = replace(
                    fact, key=SUMMARY_PREFIX + slug(fact.key), relation=SUMMARY_PREFIX + slug(fact.key)
                )
            if fact.polarity == "unset":
                fact = replace(
                    fact, importance=0.0, reasons=("a summary states what holds, not what stopped",)
                )
            if fact.passes:
                summaries.facts.append(fact)
                summaries.notes.append(
                    f"{fact.key}: a summary of user turns {_turn_names(group)} ({len(group)} turns on one topic)"
                )
            else:
                summaries.dropped.append(fact)
    return summaries
