"""Formation end to end: turns → working memory → facts → diff → KPR → decision."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memorypr.formation.client import Decision, MemoryprClient
from memorypr.formation.diff import Diff, diff_facts
from memorypr.formation.extract import Extraction, Turn, extract_facts
from memorypr.formation.llm import LlmExtractor
from memorypr.formation.summary import Summaries, summarize_topics
from memorypr.formation.vocabulary import Embedder, resolution_scope

PROPOSED_BY = "memorypr-formation"
MAX_OPERATIONS = 100  # the API's default MEMORYPR_MAX_OPERATIONS
# A subject of at most this many active facts (one page of GET /api/v1/facts) is read whole
# before a proposal; a larger one only where the new facts can resolve.
WHOLE_SUBJECT_MAX_FACTS = 500


@dataclass
class Proposal:
    extraction: Extraction
    diff: Diff
    summaries: Summaries = field(default_factory=Summaries)  # `skipped` says why when there are none
    pulls: list[dict[str, Any]] = field(default_factory=list)  # as the API stored them
    decisions: list[Decision] = field(default_factory=list)  # when waited for

    @property
    def pull_ids(self) -> list[str]:
        return [str(pull["id"]) for pull in self.pulls]


def _epoch_ms(moment: Any) -> int | None:
    if not isinstance(moment, str):
        return None
    try:
        return int(datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def idempotency_key(*, subject: str, session_id: str, operations: Sequence[dict[str, Any]]) -> str:
    """The same proposal (same subject, session, operations and bases) is the same KPR."""
    document = json.dumps([subject, session_id, list(operations)], sort_keys=True, ensure_ascii=False)
    return "formation-" + hashlib.sha256(document.encode()).hexdigest()[:40]


def _facts_in_scope(client: MemoryprClient, *, subject: str, keys: Sequence[str]) -> list[dict[str, Any]]:
    """The subject's active facts that resolving these keys can reach (`resolution_scope`)."""
    if not keys:
        return []
    scopes = [resolution_scope(key) for key in dict.fromkeys(keys)]
    return client.list_facts(
        subject=subject,
        keys={key for scope in scopes for key in scope.keys},
        key_prefixes={prefix for scope in scopes for prefix in scope.prefixes},
    )


def propose(
    *,
    client: MemoryprClient,
    subject: str,
    session_id: str,
    turns: Sequence[Turn],
    post_turns: bool = True,
    wait_seconds: float = 30.0,
    llm: LlmExtractor | None = None,
    proposed_by: str = PROPOSED_BY,
    current: Sequence[dict[str, Any]] | None = None,
    embed: Embedder | None = None,
    topics: Embedder | None = None,
) -> Proposal:
    """Propose what the conversation says, as KPRs of at most 100 operations.

    `post_turns` records the turns in the session first, so the reviewer can find every
    evidence quote in the transcript. `current` (the subject's active facts) spares the
    GET /api/v1/facts when the caller already has them. Otherwise, with a model or an embedder,
    a subject whose active facts fit in one page (WHOLE_SUBJECT_MAX_FACTS) is read whole; a
    larger one, or any subject without either, only where the new facts can resolve
    (`vocabulary.resolution_scope`: their keys, aliases and families), so a proposal's cost
    does not grow with the subject. There the model extracting facts is shown the first
    page's keys, and similarity resolution (`embed`) compares with the facts read. With `wait_seconds` > 0 each KPR's
    decision is awaited (review and merge run asynchronously on the server). `embed` (texts →
    vectors) lets the diff resolve a fact to an existing key by similarity of key and value.
    With `llm`, runs of more than five user turns on one topic, grouped by `topics` (or
    `embed`), each add one summary fact to the same KPR; `Proposal.summaries` says which
    turns each sums up, or why none was made.
    """
    now_ms = int(time.time() * 1000)
    if post_turns:
        recorded = []
        for turn in turns:
            stored = client.post_turn(session_id=session_id, role=turn.role, content=turn.content)
            # The evidence's moment is when the turn was recorded, unless the caller knew it.
            moment = (
                turn.timestamp_ms if turn.timestamp_ms is not None else _epoch_ms(stored.get("createdAt"))
            )
            recorded.append(Turn(turn.role, turn.content, moment))
        turns = recorded
    shown: Sequence[dict[str, Any]] = current or ()
    if current is None and (llm is not None or embed is not None):
        # The first page is for the model (the keys it is shown) and for similarity (it compares
        # with every fact read). Without either, the facts the new keys can resolve to are all the
        # diff reads (`vocabulary.resolution_scope`), whatever the subject's size.
        shown, more = client.list_facts_page(subject=subject, page_size=WHOLE_SUBJECT_MAX_FACTS)
        current = None if more else shown
    extraction = extract_facts(turns, llm=llm, known_keys=[str(fact["key"]) for fact in shown])
    summaries = summarize_topics(turns, llm=llm, embed=topics or embed)
    extracted = [*extraction.facts, *summaries.facts]
    if current is None:
        current = _facts_in_scope(client, subject=subject, keys=[fact.key for fact in extracted])
    diff = diff_facts(extracted=extracted, current=current, timestamp_ms=now_ms, embed=embed)
    diff.notes.extend(summaries.notes)
    proposal = Proposal(extraction=extraction, diff=diff, summaries=summaries)
    for start in range(0, len(diff.operations), MAX_OPERATIONS):
        operations = diff.operations[start : start + MAX_OPERATIONS]
        pull = client.submit_pull(
            {
                "subject": subject,
                "sourceSessionId": session_id,
                "proposedBy": proposed_by,
                "operations": operations,
            },
            idempotency_key=idempotency_key(subject=subject, session_id=session_id, operations=operations),
        )
        proposal.pulls.append(pull)
        if wait_seconds > 0:
            proposal.decisions.append(client.wait_for_decision(pull, timeout=wait_seconds))
    return proposal
