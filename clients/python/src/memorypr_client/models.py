"""The API's wire objects as typed dataclasses, one per component of the OpenAPI schema.

Each class names its schema component in `__schema__`; a test compares every field (its wire
name, type, nullability and whether it is required) with the schema the server serves, so the
two cannot drift apart unnoticed. Wire names are the snake_case field names in camelCase.

Answers are decoded leniently (a field the server adds later is ignored) and requests are
encoded strictly (the API refuses unknown fields).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")

# Values of the API's enumerations, for callers that want to compare with a name.
ACTIONS = ("CREATE", "UPDATE", "DELETE")
CATEGORIES = ("user_profile", "system_preference", "domain_fact", "derived")
RELATIONS = ("UPDATES", "QUALIFIES", "CONTRADICTS", "SUPPORTS", "CONTEXT_FOR")
REVIEW_STATUSES = ("PENDING", "APPROVED", "REJECTED", "NEEDS_HUMAN_REVIEW")
MERGE_STATUSES = ("UNMERGED", "MERGED", "CONFLICT", "FAILED")
FACT_STATUSES = ("active", "superseded", "retracted", "expired", "stale")
ROLES = ("user", "assistant", "system", "tool")
OUTCOMES = ("success", "failure")

# A decision no machine will change any more (a person may, later).
SETTLED_REVIEW = frozenset({"REJECTED", "NEEDS_HUMAN_REVIEW"})
SETTLED_MERGE = frozenset({"MERGED", "CONFLICT", "FAILED"})

# Everything `value`, `oldValue` and `newValue` may hold: any JSON value.
JsonValue = Any


def wire_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(tp: Any, value: Any) -> Any:
    if tp is Any or value is None:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(tp) if arg is not type(None)]
        for option in options:
            try:
                return _decode(option, value)
            except (TypeError, ValueError):
                continue
        return value
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return [_decode(item, element) for element in value]
    if origin is dict:
        _, item = typing.get_args(tp) or (str, Any)
        return {key: _decode(item, element) for key, element in value.items()}
    if tp is datetime:
        if isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            raise TypeError(f"expected an ISO-8601 string, got {value!r}")
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, dict):
            raise TypeError(f"expected an object for {tp.__name__}, got {value!r}")
        return decode(tp, value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp in (int, float, str, bool) and not isinstance(value, tp):
        raise TypeError(f"expected {tp.__name__}, got {value!r}")
    return value


def decode(cls: type[T], data: dict[str, Any]) -> T:
    """A model from the API's JSON; fields it does not know are ignored."""
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        name = wire_name(f.name)
        if name in data:
            kwargs[f.name] = _decode(hints[f.name], data[name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            # A field the schema requires but the answer left out: None, rather than no answer at all.
            kwargs[f.name] = None
    return cls(**kwargs)


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    return value


def encode(model: Any) -> dict[str, Any]:
    """A request body: the fields set, camelCase; optional fields left at their default are omitted."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(model):
        value = getattr(model, f.name)
        optional = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if optional and value is None:
            continue
        out[wire_name(f.name)] = _encode(value)
    return out


# --- requests --------------------------------------------------------------------------


@dataclass
class EvidenceIn:
    """Where a fact comes from: the user's words, verbatim, and when they said them."""

    __schema__: ClassVar[str] = "EvidenceRequest"
    raw_message_quote: str
    # Epoch milliseconds (as the KPR protocol sends it) or an ISO-8601 string.
    timestamp: int | float | str | None = None


@dataclass
class OperationIn:
    """One change a KPR proposes. `old_value` is the compare-and-swap base of an UPDATE or DELETE."""

    __schema__: ClassVar[str] = "OperationRequest"
    action: str
    category: str
    key: str
    confidence: float
    old_value: JsonValue = None
    new_value: JsonValue = None
    importance: float | None = None
    evidence: EvidenceIn | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    derived_from: list[str] | None = None
    relation: str | None = None

    @classmethod
    def create(
        cls, category: str, key: str, value: JsonValue, *, quote: str, confidence: float = 0.9, **extra: Any
    ) -> OperationIn:
        return cls("CREATE", category, key, confidence, None, value, evidence=EvidenceIn(quote), **extra)

    @classmethod
    def update(
        cls,
        category: str,
        key: str,
        old: JsonValue,
        new: JsonValue,
        *,
        quote: str,
        confidence: float = 0.9,
        **extra: Any,
    ) -> OperationIn:
        return cls("UPDATE", category, key, confidence, old, new, evidence=EvidenceIn(quote), **extra)

    @classmethod
    def delete(
        cls, category: str, key: str, old: JsonValue, *, quote: str, confidence: float = 0.9, **extra: Any
    ) -> OperationIn:
        return cls("DELETE", category, key, confidence, old, None, evidence=EvidenceIn(quote), **extra)

    def to_wire(self) -> dict[str, Any]:
        body = encode(self)
        # oldValue and newValue are meaningful when null (no base, a deletion): always sent.
        body["oldValue"], body["newValue"] = _encode(self.old_value), _encode(self.new_value)
        return body


@dataclass
class PullIn:
    __schema__: ClassVar[str] = "PullInRequest"
    operations: list[OperationIn]
    namespace: str | None = None
    subject: str | None = None
    source_session_id: str | None = None
    proposed_by: str | None = None
    idempotency_key: str | None = None

    def to_wire(self) -> dict[str, Any]:
        body = encode(self)
        body["operations"] = [op.to_wire() for op in self.operations]
        return body


@dataclass
class RetrieveIn:
    __schema__: ClassVar[str] = "RetrieveInRequest"
    query: str
    namespace: str | None = None
    subject: str | None = None
    top_k: int | None = None
    categories: list[str] | None = None
    as_of: datetime | None = None
    include_history: bool | None = None


@dataclass
class VerifyIn:
    __schema__: ClassVar[str] = "VerifyInRequest"
    text: str
    namespace: str | None = None
    subject: str | None = None


@dataclass
class FeedbackIn:
    __schema__: ClassVar[str] = "FeedbackInRequest"
    fact_ids: list[int]
    outcome: str
    session_id: str | None = None


@dataclass
class TurnIn:
    __schema__: ClassVar[str] = "TurnInRequest"
    role: str
    content: str
    namespace: str | None = None


@dataclass
class RevertIn:
    __schema__: ClassVar[str] = "RevertInRequest"
    reason: str | None = None
    idempotency_key: str | None = None


# --- answers ---------------------------------------------------------------------------


@dataclass(kw_only=True)
class Evidence:
    # The schema leaves an operation's stored evidence untyped; it is the evidence as sent.
    __schema__: ClassVar[str] = "EvidenceRequest"
    raw_message_quote: str
    timestamp: int | float | str | None = None


@dataclass(kw_only=True)
class Operation:
    __schema__: ClassVar[str] = "OperationOut"
    action: str
    category: str
    key: str
    old_value: JsonValue
    new_value: JsonValue
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    derived_from: list[str]
    importance: float | None = None
    evidence: Evidence | None = None
    relation: str | None = None


@dataclass(kw_only=True)
class ReviewEvent:
    __schema__: ClassVar[str] = "ReviewEventOut"
    created_at: datetime
    reviewer_kind: str
    reviewer: str
    verdict: str
    status_after: str
    excluded_operations: list[int]
    latency_ms: int | None
    findings: Any = None
    reasons: str | None = None
    model: str | None = None
    tokens: int | None = None


@dataclass(kw_only=True)
class ReviewComment:
    """A reviewer's comment on one operation (its position) or, with `operation` None, the KPR."""

    __schema__: ClassVar[str] = "ReviewCommentOut"
    operation: int | None
    author: str
    body: str
    created_at: datetime


@dataclass(kw_only=True)
class Pull:
    """A knowledge pull request as the API stored it, with where its review and merge stand."""

    __schema__: ClassVar[str] = "PullOut"
    id: str
    created_at: datetime
    namespace: str
    subject: str
    source_session_id: str
    proposed_by: str
    agent: str
    idempotency_key: str | None
    operations: list[Operation]
    review_status: str
    reviewer_feedback: str
    # comments from reviewers, on single operations or the whole KPR
    reviewer_feedback_detail: list[ReviewComment]
    reviewed_at: datetime | None
    merge_status: str
    merge_feedback: str
    merged_at: datetime | None
    reverts: str | None

    @property
    def settled(self) -> bool:
        """Rejected, held for a person, merged, in conflict or failed: no machine will change it now."""
        return self.review_status in SETTLED_REVIEW or self.merge_status in SETTLED_MERGE

    @property
    def merged(self) -> bool:
        return self.merge_status == "MERGED"

    @property
    def feedback(self) -> str:
        return self.merge_feedback or self.reviewer_feedback or ""


@dataclass(kw_only=True)
class PullDetail(Pull):
    __schema__: ClassVar[str] = "PullDetailOut"
    reviews: list[ReviewEvent]


@dataclass(kw_only=True)
class Page(Generic[T]):
    """One page of a list answer: `next` is the URL of the following page, if there is one."""

    __schema__: ClassVar[str] = ""
    count: int
    next: str | None
    previous: str | None
    results: list[T]


@dataclass(kw_only=True)
class Fact:
    """A fact version: (namespace, subject, category, key) = value, with its status and scores."""

    __schema__: ClassVar[str] = "FactOut"
    id: int
    namespace: str
    subject: str
    category: str
    key: str
    version: int
    status: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    access_count: int
    last_accessed_at: datetime | None
    created_at: datetime
    retired_at: datetime | None
    pull: str | None
    retired_by_pull: str | None
    action: str | None
    value: JsonValue = None
    importance: float | None = None


@dataclass(kw_only=True)
class FactVersion(Fact):
    __schema__: ClassVar[str] = "FactHistoryOut"
    edges: dict[str, list[dict[str, Any]]]
    written_by: dict[str, Any] | None


@dataclass(kw_only=True)
class FactHistory:
    __schema__: ClassVar[str] = "FactHistoryResponse"
    namespace: str
    subject: str
    key: str
    as_of: datetime | None
    versions: list[FactVersion]


@dataclass(kw_only=True)
class FactBrief:
    __schema__: ClassVar[str] = "FactBrief"
    fact_id: int
    category: str
    key: str
    value: JsonValue
    version: int
    status: str
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    retired_at: datetime | None


@dataclass(kw_only=True)
class Score:
    __schema__: ClassVar[str] = "Score"
    final: float
    relevance: float
    recency: float
    decay_exempt: bool
    vector: dict[str, Any] | None
    full_text: dict[str, Any] | None
    exact_rank: int | None
    rerank: float | None


@dataclass(kw_only=True)
class RetrievedFact:
    __schema__: ClassVar[str] = "Result"
    fact_id: int
    category: str
    key: str
    value: JsonValue
    version: int
    confidence: float
    importance: float
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime
    access_count: int
    last_accessed_at: datetime | None
    score: Score
    # The id of the KPR that wrote this version.
    pull: str | None
    updates: FactBrief | None
    # Only when asked for (include_history).
    history: list[FactBrief] | None = None


@dataclass(kw_only=True)
class Retrieval:
    """What is true now (or at `as_of`), best first, and `context`: a block ready for a prompt."""

    __schema__: ClassVar[str] = "RetrieveOut"
    namespace: str
    subject: str
    query: str
    as_of: datetime | None
    results: list[RetrievedFact]
    context: str
    reformation_needed: bool
    candidate_count: int
    below_confidence: int

    @property
    def fact_ids(self) -> list[int]:
        return [result.fact_id for result in self.results]


@dataclass(kw_only=True)
class VerifyFlag:
    __schema__: ClassVar[str] = "VerifyFlag"
    sentence: str
    index: int
    start: int
    end: int
    reason: str
    matched_value: str | None
    similarity: float | None
    best_active_similarity: float | None
    fact: FactBrief
    replacement: FactBrief | None


@dataclass(kw_only=True)
class Verification:
    """`ok` unless a sentence of the draft rests on a superseded or stale fact (see `flags`)."""

    __schema__: ClassVar[str] = "VerifyOut"
    namespace: str
    subject: str
    ok: bool
    sentences_checked: int
    flags: list[VerifyFlag]


@dataclass(kw_only=True)
class FeedbackFact:
    __schema__: ClassVar[str] = "FeedbackFactOut"
    fact_id: int
    category: str
    key: str
    version: int
    status: str
    confidence_before: float
    confidence: float
    marked_for_forgetting: bool


@dataclass(kw_only=True)
class FeedbackResult:
    __schema__: ClassVar[str] = "FeedbackOut"
    outcome: str
    facts: list[FeedbackFact]


@dataclass(kw_only=True)
class Turn:
    __schema__: ClassVar[str] = "TurnOut"
    turn_id: int
    role: str
    content: str
    created_at: datetime


@dataclass(kw_only=True)
class Session:
    """A session's working memory: its recent turns, and when it expires."""

    __schema__: ClassVar[str] = "SessionOut"
    namespace: str
    session_id: str
    turns: list[Turn]
    total_turns: int
    expired: bool
    expires_at: datetime | None
    store: str


@dataclass(kw_only=True)
class Context:
    """Working memory and long-term retrieval in one block (`context`), ready for the prompt."""

    __schema__: ClassVar[str] = "ContextOut"
    session: Session
    retrieval: Retrieval | None
    context: str


MODELS: tuple[type, ...] = (
    EvidenceIn,
    OperationIn,
    PullIn,
    RetrieveIn,
    VerifyIn,
    FeedbackIn,
    TurnIn,
    RevertIn,
    Evidence,
    Operation,
    ReviewEvent,
    ReviewComment,
    Pull,
    PullDetail,
    Fact,
    FactVersion,
    FactHistory,
    FactBrief,
    Score,
    RetrievedFact,
    Retrieval,
    VerifyFlag,
    Verification,
    FeedbackFact,
    FeedbackResult,
    Turn,
    Session,
    Context,
)
