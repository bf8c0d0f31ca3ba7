"""What a rule sees and what it answers.

A rule is a module with a `NAME` and a `check(pull, op) -> Outcome` function; the module
docstring says what it protects against. Rules read only these views (built once per
review by reviewer.context), so they stay pure and cheap to test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cached_property
from typing import Any, Protocol

from memorypr.common.canonical import canonical_json, same_value
from reviewer.rules.text import transcript_parse


class Verdict(StrEnum):
    PASS = "pass"
    ESCALATE = "escalate"
    REJECT = "reject"


SEVERITY = {Verdict.PASS: 0, Verdict.ESCALATE: 1, Verdict.REJECT: 2}


def most_severe(verdicts: Iterable[Verdict]) -> Verdict:
    return max(verdicts, key=SEVERITY.__getitem__, default=Verdict.PASS)


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    reason: str
    # The operation would leave the store as it is (duplicate of the current value).
    noop: bool = False
    # For the rules that read the evidence: the clause that carries the fact, and the words
    # that made the verdict (shown highlighted to reviewers).
    clause: str | None = None
    cue: str | None = None


def passed(reason: str) -> Outcome:
    return Outcome(Verdict.PASS, reason)


def escalate(reason: str) -> Outcome:
    return Outcome(Verdict.ESCALATE, reason)


def reject(reason: str) -> Outcome:
    return Outcome(Verdict.REJECT, reason)


def show(value: Any, limit: int = 80) -> str:
    """A value as a reviewer reads it in feedback: JSON, shortened."""
    text = canonical_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class CurrentFact:
    """The active version of the operation's key when the review ran."""

    value: Any
    version: int
    importance: float
    confidence: float
    valid_from: datetime | None = None
    valid_to: datetime | None = None


@dataclass(frozen=True)
class OperationView:
    position: int
    action: str
    category: str
    key: str
    old_value: Any
    new_value: Any
    confidence: float
    importance: float | None
    evidence: dict[str, Any] | None
    valid_from: datetime | None
    valid_to: datetime | None
    derived_from: list[str]
    relation: str
    current: CurrentFact | None

    @property
    def quote(self) -> str:
        raw = (self.evidence or {}).get("rawMessageQuote")
        return raw if isinstance(raw, str) else ""

    @property
    def label(self) -> str:
        return f"{self.action} {self.category}/{self.key}"


@dataclass(frozen=True)
class PolicyView:
    """A namespace's review policy with the defaults filled in (see reviewer.policy)."""

    mode: str
    human_categories: frozenset[str]
    allowed_categories: frozenset[str]
    key_patterns: tuple[str, ...]
    protected_key_patterns: tuple[str, ...]
    protected_importance: float
    confidence_reject_floor: float
    confidence_approve_bar: float
    agent_hourly_limit: int
    disabled_rules: frozenset[str]
    # rules whose findings are shown to the reviewer but never hold an operation
    suggestion_rules: frozenset[str] = frozenset()


@dataclass
class PullView:
    """The KPR under review. Expensive facts (transcript, recent volume) load on first use."""

    pull_id: str
    namespace_id: int
    namespace: str
    subject: str
    agent_id: int
    agent_name: str
    agent_trust: str
    session_id: str
    created_at: datetime
    policy: PolicyView
    loaders: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def transcript(self) -> str | None:
        """The known transcript of the source session, or None when it is unknown."""
        loader = self.loaders.get("transcript")
        return loader() if loader else None

    @cached_property
    def turns(self) -> list[tuple[str, str]] | None:
        """The source session's turns as (role, content), or None when the session is unknown."""
        loader = self.loaders.get("turns")
        if loader:
            return loader()  # type: ignore[no-any-return]
        text = self.transcript
        return transcript_parse(text) if text is not None else None

    def user_turns_containing(self, fragment: str, *, recent: int | None = None) -> list[str] | None:
        """The source session's recorded user turns that contain `fragment` (any case), or None
        when they cannot be searched (no such loader): a narrow read for a long session. With
        `recent`, among the session's last `recent` turns only."""
        loader = self.loaders.get("user_turns_containing")
        return list(loader(fragment, recent=recent)) if loader else None

    def quote_elsewhere(self, quote: str) -> list[tuple[str, tuple[str, ...]]]:
        """Other sessions of the namespace with a user turn that holds the quote, with the
        subjects their KPRs name: (session_id, subjects)."""
        loader = self.loaders.get("quote_elsewhere")
        return list(loader(quote)) if loader else []

    @cached_property
    def agent_pulls_last_hour(self) -> int:
        loader = self.loaders.get("agent_pulls_last_hour")
        return int(loader()) if loader else 0


SYSTEM_PROPOSER = "system"


def keeps_value(op: OperationView) -> bool:
    """A CREATE or UPDATE whose newValue already is the current value."""
    return op.action != "DELETE" and op.current is not None and same_value(op.new_value, op.current.value)


def is_noop(pull: PullView, op: OperationView) -> bool:
    """The operation would write nothing new: the current value again, with no stated change.

    Stated changes are an importance or valid time that differs from the current version's.
    The `system` proposer (evolution jobs) repeats a value only to change its confidence,
    importance or valid time (consolidation), so its operations are never no-ops.
    """
    if not keeps_value(op) or pull.agent_name == SYSTEM_PROPOSER:
        return False
    current = op.current
    assert current is not None
    return not (
        (op.importance is not None and op.importance != current.importance)
        or (op.valid_from is not None and op.valid_from != current.valid_from)
        or (op.valid_to is not None and op.valid_to != current.valid_to)
    )


class Rule(Protocol):
    NAME: str

    def check(self, pull: PullView, op: OperationView) -> Outcome: ...
