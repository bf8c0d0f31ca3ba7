"""What each endpoint sends and how its answer decodes, shared by the sync and async clients.

A `Call` is a request not yet sent; the clients only differ in how they send it. Retrying is
decided here too (`retry_delay`), so both clients follow the same policy.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from memorypr_client import models as m

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before sending a request again.

    429 and 503 mean the server did not do the work: they are retried for every request, after
    the `Retry-After` the server asked for (up to `max_retry_after`; a longer wait is the
    caller's decision, so the error is raised at once). Other 5xx answers and lost connections
    may come after the work was done, so they are retried only for requests that are safe to
    repeat (reads, and writes carrying an idempotency key), with exponential backoff and jitter.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0


NO_RETRIES = RetryPolicy(max_retries=0)


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    decode: Callable[[Any], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    # Whether sending it twice does no harm (see RetryPolicy).
    repeatable: bool = True


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """`Retry-After` in seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_delay(
    policy: RetryPolicy,
    call: Call[Any],
    attempt: int,
    *,
    status: int | None = None,
    retry_after: float | None = None,
    error: Exception | None = None,
) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None to give up now."""
    if attempt >= policy.max_retries:
        return None
    backoff = min(policy.max_backoff, policy.backoff * 2**attempt) * random.uniform(0.5, 1.0)
    if status in (429, 503):
        if retry_after is None:
            return backoff
        return retry_after if retry_after <= policy.max_retry_after else None
    if status is not None and status >= 500:
        return backoff if call.repeatable else None
    if isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return backoff  # the request never left: always safe to send again
    if isinstance(error, httpx.TransportError):
        return backoff if call.repeatable else None
    return None


def decode_page(item: type[T]) -> Callable[[Any], m.Page[T]]:
    def decode(data: Any) -> m.Page[T]:
        return m.Page(
            count=int(data.get("count", 0)),
            next=data.get("next"),
            previous=data.get("previous"),
            results=[m.decode(item, row) for row in data.get("results", [])],
        )

    return decode


def _decoder(cls: type[T]) -> Callable[[Any], T]:
    return lambda data: m.decode(cls, data)


def _operation(op: m.OperationIn | Mapping[str, Any]) -> Any:
    return op.to_wire() if isinstance(op, m.OperationIn) else dict(op)


def _segment(value: str, *, safe: str = "") -> str:
    return quote(str(value), safe=safe)


def _query(**params: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        out[m.wire_name(name)] = value.isoformat() if isinstance(value, datetime) else value
    return out


def _repeated(values: str | Sequence[str] | None) -> list[str] | None:
    """A query parameter given once or several times (`?key=a&key=b`); an empty list sends none."""
    if values is None:
        return None
    listed = [values] if isinstance(values, str) else list(values)
    return listed or None


class Calls:
    """The agent API, one method per endpoint; `namespace` defaults to the client's."""

    def __init__(self, namespace: str | None) -> None:
        self.namespace = namespace or None

    def _ns(self, namespace: str | None) -> str | None:
        return namespace or self.namespace

    def propose(
        self,
        operations: Sequence[m.OperationIn | Mapping[str, Any]],
        *,
        subject: str | None = None,
        session_id: str | None = None,
        proposed_by: str | None = None,
        idempotency_key: str | None = None,
        namespace: str | None = None,
    ) -> Call[m.Pull]:
        # Without a key of the caller's, one per call: a retried POST then returns the KPR the
        # first attempt stored instead of proposing it twice.
        key = idempotency_key or f"client-{uuid.uuid4().hex}"
        body = m.PullIn(
            operations=[],
            namespace=self._ns(namespace),
            subject=subject,
            source_session_id=session_id,
            proposed_by=proposed_by,
            idempotency_key=key,
        ).to_wire()
        body["operations"] = [_operation(op) for op in operations]
        return Call("POST", "/api/v1/pulls", _decoder(m.Pull), body=body)

    def get_pull(self, pull_id: str) -> Call[m.PullDetail]:
        return Call("GET", f"/api/v1/pulls/{_segment(pull_id)}", _decoder(m.PullDetail))

    def list_pulls(
        self,
        *,
        review_status: str | None = None,
        subject: str | None = None,
        since: datetime | None = None,
        namespace: str | None = None,
        page: int = 1,
        page_size: int | None = None,
    ) -> Call[m.Page[m.Pull]]:
        params = _query(
            review_status=review_status,
            subject=subject,
            since=since,
            namespace=self._ns(namespace),
            page=page,
            page_size=page_size,
        )
        return Call("GET", "/api/v1/pulls", decode_page(m.Pull), params=params)

    def revert(
        self, pull_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> Call[m.Pull]:
        key = idempotency_key or f"client-{uuid.uuid4().hex}"
        body = m.encode(m.RevertIn(reason=reason, idempotency_key=key))
        return Call("POST", f"/api/v1/pulls/{_segment(pull_id)}/revert", _decoder(m.Pull), body=body)

    def retrieve(
        self,
        query: str,
        *,
        subject: str | None = None,
        top_k: int | None = None,
        categories: Sequence[str] | None = None,
        as_of: datetime | None = None,
        include_history: bool | None = None,
        namespace: str | None = None,
    ) -> Call[m.Retrieval]:
        body = m.encode(
            m.RetrieveIn(
                query=query,
                namespace=self._ns(namespace),
                subject=subject,
                top_k=top_k,
                categories=list(categories) if categories else None,
                as_of=as_of,
                include_history=include_history,
            )
        )
        return Call("POST", "/api/v1/retrieve", _decoder(m.Retrieval), body=body)

    def verify(
        self, text: str, *, subject: str | None = None, namespace: str | None = None
    ) -> Call[m.Verification]:
        body = m.encode(m.VerifyIn(text=text, namespace=self._ns(namespace), subject=subject))
        return Call("POST", "/api/v1/verify", _decoder(m.Verification), body=body)

    def feedback(
        self, fact_ids: Sequence[int], outcome: str, *, session_id: str | None = None
    ) -> Call[m.FeedbackResult]:
        body = m.encode(m.FeedbackIn(fact_ids=list(fact_ids), outcome=outcome, session_id=session_id))
        # Feedback moves confidences each time it arrives: never sent twice.
        return Call("POST", "/api/v1/feedback", _decoder(m.FeedbackResult), body=body, repeatable=False)

    def add_turn(
        self, session_id: str, role: str, content: str, *, namespace: str | None = None
    ) -> Call[m.Turn]:
        body = m.encode(m.TurnIn(role=role, content=content, namespace=self._ns(namespace)))
        path = f"/api/v1/sessions/{_segment(session_id)}/turns"
        # A turn sent twice is in the transcript twice.
        return Call("POST", path, _decoder(m.Turn), body=body, repeatable=False)

    def get_session(self, session_id: str, *, namespace: str | None = None) -> Call[m.Session]:
        params = _query(namespace=self._ns(namespace))
        return Call("GET", f"/api/v1/sessions/{_segment(session_id)}", _decoder(m.Session), params=params)

    def context(
        self,
        session_id: str,
        *,
        query: str | None = None,
        subject: str | None = None,
        top_k: int | None = None,
        namespace: str | None = None,
    ) -> Call[m.Context]:
        params = _query(query=query, subject=subject, top_k=top_k, namespace=self._ns(namespace))
        path = f"/api/v1/sessions/{_segment(session_id)}/context"
        return Call("GET", path, _decoder(m.Context), params=params)

    def list_facts(
        self,
        *,
        subject: str | None = None,
        category: str | None = None,
        status: str | None = None,
        as_of: datetime | None = None,
        namespace: str | None = None,
        page: int = 1,
        page_size: int | None = None,
        key: str | Sequence[str] | None = None,
        key_prefix: str | Sequence[str] | None = None,
    ) -> Call[m.Page[m.Fact]]:
        params = _query(
            subject=subject,
            category=category,
            status=status,
            as_of=as_of,
            namespace=self._ns(namespace),
            key=_repeated(key),
            key_prefix=_repeated(key_prefix),
            page=page,
            page_size=page_size,
        )
        return Call("GET", "/api/v1/facts", decode_page(m.Fact), params=params)

    def fact_history(
        self,
        key: str,
        *,
        subject: str | None = None,
        category: str | None = None,
        as_of: datetime | None = None,
        namespace: str | None = None,
    ) -> Call[m.FactHistory]:
        params = _query(subject=subject, category=category, as_of=as_of, namespace=self._ns(namespace))
        # Keys may hold "/" and ":"; the route takes the key as a path up to "/history".
        path = f"/api/v1/facts/{_segment(key, safe='/:')}/history"
        return Call("GET", path, _decoder(m.FactHistory), params=params)
