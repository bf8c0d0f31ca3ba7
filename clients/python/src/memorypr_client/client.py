"""`MemoryprClient` (sync) and `AsyncMemoryprClient`: the agent API over httpx.

from memorypr_client import MemoryprClient, OperationIn

with MemoryprClient("http://127.0.0.1:8000", token, namespace="demo") as memory:
    pull = memory.propose([OperationIn.create("user_profile", "home_city", "Shenzhen",
                                              quote="I moved to Shenzhen.")], subject="u1")
    memory.wait_for_pull(pull.id)
    print(memory.retrieve("Where does the user live?", subject="u1").context)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from memorypr_client import models as m
from memorypr_client._calls import Call, Calls, RetryPolicy, parse_retry_after, retry_delay
from memorypr_client.errors import ApiError, TransportError

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
USER_AGENT = "memorypr-client/0.1"


def _check_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
    return base_url.rstrip("/")


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": USER_AGENT}


def _request_kwargs(call: Call[Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"params": dict(call.params)}
    if call.body is not None:
        kwargs["content"] = json.dumps(call.body, ensure_ascii=False).encode()
        kwargs["headers"] = {"Content-Type": "application/json"}
    return kwargs


def _decoded_body(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def _error(response: httpx.Response) -> ApiError | None:
    if response.status_code < 400:
        return None
    retry_after = parse_retry_after(response.headers.get("Retry-After"))
    return ApiError.from_answer(response.status_code, _decoded_body(response), retry_after=retry_after)


def _raw_call(
    method: str, path: str, params: Mapping[str, Any] | None, body: Any, repeatable: bool | None
) -> Call[Any]:
    method = method.upper()
    safe = method in ("GET", "HEAD", "OPTIONS") if repeatable is None else repeatable
    query = {key: value for key, value in (params or {}).items() if value is not None}
    return Call(method, path, lambda data: data, params=query, body=body, repeatable=safe)


class _Settings:
    def __init__(
        self,
        base_url: str,
        token: str,
        namespace: str | None,
        retry: RetryPolicy | None,
    ) -> None:
        if not token:
            raise ValueError("an agent token is required")
        self.base_url = _check_url(base_url)
        self.token = token
        self.retry = retry or RetryPolicy()
        self.calls = Calls(namespace)


class MemoryprClient:
    """The agent API, synchronously. One client (one connection pool) can serve many threads.

    `namespace` is the default namespace of every call (an agent scoped to one namespace can
    leave it out). `retry` is the RetryPolicy; `sleep` is how the client waits between
    attempts. `transport` is handed to httpx (e.g. `httpx.MockTransport` in tests).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        namespace: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._settings = _Settings(base_url, token, namespace, retry)
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self._settings.base_url,
            headers=_headers(token),
            timeout=timeout,
            transport=transport,
        )

    @property
    def namespace(self) -> str | None:
        return self._settings.calls.namespace

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryprClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        policy = self._settings.retry
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, **_request_kwargs(call))
            except httpx.TransportError as exc:
                delay = retry_delay(policy, call, attempt, error=exc)
                if delay is None:
                    raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
            else:
                error = _error(response)
                if error is None:
                    return call.decode(_decoded_body(response))
                delay = retry_delay(policy, call, attempt, status=error.status, retry_after=error.retry_after)
                if delay is None:
                    raise error
            self._sleep(delay)
            attempt += 1

    # --- KPRs ----------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        repeatable: bool | None = None,
    ) -> Any:
        """Any API call, answered as decoded JSON, with the same retries and errors as the rest.

        `repeatable` says whether sending it twice is harmless; by default reads are.
        """
        return self._run(_raw_call(method, path, params, json, repeatable))

    def propose(
        self,
        operations: Sequence[m.OperationIn | Mapping[str, Any]],
        *,
        subject: str | None = None,
        session_id: str | None = None,
        proposed_by: str | None = None,
        idempotency_key: str | None = None,
        namespace: str | None = None,
    ) -> m.Pull:
        """POST /api/v1/pulls. The same `idempotency_key` again returns the first KPR; without
        one the client makes one per call, so its own retries never propose twice."""
        return self._run(
            self._settings.calls.propose(
                operations,
                subject=subject,
                session_id=session_id,
                proposed_by=proposed_by,
                idempotency_key=idempotency_key,
                namespace=namespace,
            )
        )

    def get_pull(self, pull_id: str) -> m.PullDetail:
        """GET /api/v1/pulls/{id}: the KPR with its review events."""
        return self._run(self._settings.calls.get_pull(pull_id))

    def wait_for_pull(self, pull_id: str, *, timeout: float = 30.0, interval: float = 0.1) -> m.PullDetail:
        """Poll the KPR until it has settled (rejected, held for a person, merged, in conflict).

        Review runs asynchronously; on time-out the last state is returned with `settled`
        False, since a KPR not decided yet is no error.
        """
        deadline = time.monotonic() + timeout
        delay = interval
        while True:
            pull = self.get_pull(pull_id)
            remaining = deadline - time.monotonic()
            if pull.settled or remaining <= 0:
                return pull
            self._sleep(min(delay, remaining))
            delay = min(delay * 1.5, 1.0)

    def list_pulls(
        self,
        *,
        review_status: str | None = None,
        subject: str | None = None,
        since: datetime | None = None,
        namespace: str | None = None,
        page: int = 1,
        page_size: int | None = None,
    ) -> m.Page[m.Pull]:
        """GET /api/v1/pulls: one page of this agent's KPRs, newest first."""
        return self._run(
            self._settings.calls.list_pulls(
                review_status=review_status,
                subject=subject,
                since=since,
                namespace=namespace,
                page=page,
                page_size=page_size,
            )
        )

    def iter_pulls(self, **filters: Any) -> Iterator[m.Pull]:
        """Every KPR `list_pulls` would page through."""
        page = 1
        while True:
            answer = self.list_pulls(page=page, **filters)
            yield from answer.results
            if not answer.next:
                return
            page += 1

    def revert(
        self, pull_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> m.Pull:
        """POST /api/v1/pulls/{id}/revert: a new KPR restoring what a merged one replaced."""
        return self._run(self._settings.calls.revert(pull_id, reason=reason, idempotency_key=idempotency_key))

    # --- recall ----------------------------------------------------------------------

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
    ) -> m.Retrieval:
        """POST /api/v1/retrieve: the facts true now (or at `as_of`) and the context block."""
        return self._run(
            self._settings.calls.retrieve(
                query,
                subject=subject,
                top_k=top_k,
                categories=categories,
                as_of=as_of,
                include_history=include_history,
                namespace=namespace,
            )
        )

    def verify(
        self, text: str, *, subject: str | None = None, namespace: str | None = None
    ) -> m.Verification:
        """POST /api/v1/verify: the sentences of a draft that rest on a superseded or stale fact."""
        return self._run(self._settings.calls.verify(text, subject=subject, namespace=namespace))

    def feedback(
        self, fact_ids: Sequence[int], outcome: str, *, session_id: str | None = None
    ) -> m.FeedbackResult:
        """POST /api/v1/feedback: `success` or `failure` of a task that used these facts."""
        return self._run(self._settings.calls.feedback(fact_ids, outcome, session_id=session_id))

    # --- working memory -----------------------------------------------------------------

    def add_turn(self, session_id: str, role: str, content: str, *, namespace: str | None = None) -> m.Turn:
        """POST /api/v1/sessions/{id}/turns: a turn into working memory and the transcript."""
        return self._run(self._settings.calls.add_turn(session_id, role, content, namespace=namespace))

    def get_session(self, session_id: str, *, namespace: str | None = None) -> m.Session:
        """GET /api/v1/sessions/{id}: the session's recent turns."""
        return self._run(self._settings.calls.get_session(session_id, namespace=namespace))

    def context(
        self,
        session_id: str,
        *,
        query: str | None = None,
        subject: str | None = None,
        top_k: int | None = None,
        namespace: str | None = None,
    ) -> m.Context:
        """GET /api/v1/sessions/{id}/context: recent turns and recalled facts in one block."""
        return self._run(
            self._settings.calls.context(
                session_id, query=query, subject=subject, top_k=top_k, namespace=namespace
            )
        )

    # --- facts ---------------------------------------------------------------------------

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
    ) -> m.Page[m.Fact]:
        """GET /api/v1/facts: one page; active facts unless `status` says otherwise.

        `key` and `key_prefix` (each one or several, up to 100) keep the facts whose key is
        one of `key` or starts with one of `key_prefix`.
        """
        return self._run(
            self._settings.calls.list_facts(
                subject=subject,
                category=category,
                status=status,
                as_of=as_of,
                namespace=namespace,
                page=page,
                page_size=page_size,
                key=key,
                key_prefix=key_prefix,
            )
        )

    def facts(self, **filters: Any) -> list[m.Fact]:
        """Every fact `list_facts` would page through."""
        out: list[m.Fact] = []
        page = 1
        while True:
            answer = self.list_facts(page=page, **filters)
            out.extend(answer.results)
            if not answer.next:
                return out
            page += 1

    def fact_history(
        self,
        key: str,
        *,
        subject: str | None = None,
        category: str | None = None,
        as_of: datetime | None = None,
        namespace: str | None = None,
    ) -> m.FactHistory:
        """GET /api/v1/facts/{key}/history: every version of a key, oldest first."""
        return self._run(
            self._settings.calls.fact_history(
                key, subject=subject, category=category, as_of=as_of, namespace=namespace
            )
        )


class AsyncMemoryprClient:
    """The agent API for asyncio: the same methods as `MemoryprClient`, awaited."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        namespace: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = _Settings(base_url, token, namespace, retry)
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=self._settings.base_url,
            headers=_headers(token),
            timeout=timeout,
            transport=transport,
        )

    @property
    def namespace(self) -> str | None:
        return self._settings.calls.namespace

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryprClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: Call[T]) -> T:
        policy = self._settings.retry
        attempt = 0
        while True:
            try:
                response = await self._http.request(call.method, call.path, **_request_kwargs(call))
            except httpx.TransportError as exc:
                delay = retry_delay(policy, call, attempt, error=exc)
                if delay is None:
                    raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
            else:
                error = _error(response)
                if error is None:
                    return call.decode(_decoded_body(response))
                delay = retry_delay(policy, call, attempt, status=error.status, retry_after=error.retry_after)
                if delay is None:
                    raise error
            await self._sleep(delay)
            attempt += 1

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        repeatable: bool | None = None,
    ) -> Any:
        return await self._run(_raw_call(method, path, params, json, repeatable))

    async def propose(
        self,
        operations: Sequence[m.OperationIn | Mapping[str, Any]],
        *,
        subject: str | None = None,
        session_id: str | None = None,
        proposed_by: str | None = None,
        idempotency_key: str | None = None,
        namespace: str | None = None,
    ) -> m.Pull:
        return await self._run(
            self._settings.calls.propose(
                operations,
                subject=subject,
                session_id=session_id,
                proposed_by=proposed_by,
                idempotency_key=idempotency_key,
                namespace=namespace,
            )
        )

    async def get_pull(self, pull_id: str) -> m.PullDetail:
        return await self._run(self._settings.calls.get_pull(pull_id))

    async def wait_for_pull(
        self, pull_id: str, *, timeout: float = 30.0, interval: float = 0.1
    ) -> m.PullDetail:
        deadline = time.monotonic() + timeout
        delay = interval
        while True:
            pull = await self.get_pull(pull_id)
            remaining = deadline - time.monotonic()
            if pull.settled or remaining <= 0:
                return pull
            await self._sleep(min(delay, remaining))
            delay = min(delay * 1.5, 1.0)

    async def list_pulls(
        self,
        *,
        review_status: str | None = None,
        subject: str | None = None,
        since: datetime | None = None,
        namespace: str | None = None,
        page: int = 1,
        page_size: int | None = None,
    ) -> m.Page[m.Pull]:
        return await self._run(
            self._settings.calls.list_pulls(
                review_status=review_status,
                subject=subject,
                since=since,
                namespace=namespace,
                page=page,
                page_size=page_size,
            )
        )

    async def iter_pulls(self, **filters: Any) -> AsyncIterator[m.Pull]:
        page = 1
        while True:
            answer = await self.list_pulls(page=page, **filters)
            for pull in answer.results:
                yield pull
            if not answer.next:
                return
            page += 1

    async def revert(
        self, pull_id: str, *, reason: str | None = None, idempotency_key: str | None = None
    ) -> m.Pull:
        return await self._run(
            self._settings.calls.revert(pull_id, reason=reason, idempotency_key=idempotency_key)
        )

    async def retrieve(
        self,
        query: str,
        *,
        subject: str | None = None,
        top_k: int | None = None,
        categories: Sequence[str] | None = None,
        as_of: datetime | None = None,
        include_history: bool | None = None,
        namespace: str | None = None,
    ) -> m.Retrieval:
        return await self._run(
            self._settings.calls.retrieve(
                query,
                subject=subject,
                top_k=top_k,
                categories=categories,
                as_of=as_of,
                include_history=include_history,
                namespace=namespace,
            )
        )

    async def verify(
        self, text: str, *, subject: str | None = None, namespace: str | None = None
    ) -> m.Verification:
        return await self._run(self._settings.calls.verify(text, subject=subject, namespace=namespace))

    async def feedback(
        self, fact_ids: Sequence[int], outcome: str, *, session_id: str | None = None
    ) -> m.FeedbackResult:
        return await self._run(self._settings.calls.feedback(fact_ids, outcome, session_id=session_id))

    async def add_turn(
        self, session_id: str, role: str, content: str, *, namespace: str | None = None
    ) -> m.Turn:
        return await self._run(self._settings.calls.add_turn(session_id, role, content, namespace=namespace))

    async def get_session(self, session_id: str, *, namespace: str | None = None) -> m.Session:
        return await self._run(self._settings.calls.get_session(session_id, namespace=namespace))

    async def context(
        self,
        session_id: str,
        *,
        query: str | None = None,
        subject: str | None = None,
        top_k: int | None = None,
        namespace: str | None = None,
    ) -> m.Context:
        return await self._run(
            self._settings.calls.context(
                session_id, query=query, subject=subject, top_k=top_k, namespace=namespace
            )
        )

    async def list_facts(
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
    ) -> m.Page[m.Fact]:
        return await self._run(
            self._settings.calls.list_facts(
                subject=subject,
                category=category,
                status=status,
                as_of=as_of,
                namespace=namespace,
                page=page,
                page_size=page_size,
                key=key,
                key_prefix=key_prefix,
            )
        )

    async def facts(self, **filters: Any) -> list[m.Fact]:
        out: list[m.Fact] = []
        page = 1
        while True:
            answer = await self.list_facts(page=page, **filters)
            out.extend(answer.results)
            if not answer.next:
                return out
            page += 1

    async def fact_history(
        self,
        key: str,
        *,
        subject: str | None = None,
        category: str | None = None,
        as_of: datetime | None = None,
        namespace: str | None = None,
    ) -> m.FactHistory:
        return await self._run(
            self._settings.calls.fact_history(
                key, subject=subject, category=category, as_of=as_of, namespace=namespace
            )
        )
