"""A small typed client of memorypr's public HTTP API, on the standard library alone.

It keeps one HTTP/1.1 keep-alive connection, so a client object belongs to one thread.
Errors raise `ApiError`, which carries the API's field paths (`operations[0].oldValue`)
as well as its message, so a caller can point at what was wrong.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

SETTLED_REVIEW = frozenset({"REJECTED", "NEEDS_HUMAN_REVIEW"})
SETTLED_MERGE = frozenset({"MERGED", "CONFLICT", "FAILED"})


class ApiError(Exception):
    """An error answer of the API: status, message and `[{"field", "message"}]`."""

    def __init__(
        self, *, status: int, detail: str, errors: list[dict[str, str]] | None = None, body: Any = None
    ):
        super().__init__(status, detail)
        self.status = status
        self.detail = detail
        self.errors = list(errors or [])
        self.body = body

    @property
    def fields(self) -> list[str]:
        """The field paths the API named, e.g. ['operations[0].oldValue']."""
        return [error.get("field", "") for error in self.errors]

    def __str__(self) -> str:
        where = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in self.errors)
        return f"HTTP {self.status}: {self.detail}" + (f" [{where}]" if where else "")


@dataclass(frozen=True)
class Decision:
    """Where a KPR stands: its review status, its merge status, and whether it has settled."""

    pull_id: str
    review_status: str
    merge_status: str
    feedback: str
    settled: bool
    pull: dict[str, Any]

    @property
    def merged(self) -> bool:
        return self.merge_status == "MERGED"


def decision_of(pull: Mapping[str, Any]) -> Decision:
    review, merge = str(pull.get("reviewStatus", "")), str(pull.get("mergeStatus", ""))
    return Decision(
        pull_id=str(pull.get("id", "")),
        review_status=review,
        merge_status=merge,
        feedback=str(pull.get("mergeFeedback") or pull.get("reviewerFeedback") or ""),
        # Settled: a decision no machine will change any more (a person may, later).
        settled=review in SETTLED_REVIEW or merge in SETTLED_MERGE,
        pull=dict(pull),
    )


class MemoryprClient:
    """`MemoryprClient("http://127.0.0.1:8000", token, namespace="demo")`; usable as a context manager."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        namespace: str | None = None,
        timeout: float = 30.0,
        max_throttle_retries: int = 3,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._throttle_retries = max_throttle_retries
        self.namespace = namespace or None
        self._connection: http.client.HTTPConnection | None = None
        self._served = 0  # requests answered on the current connection

    # --- transport -----------------------------------------------------------------

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> MemoryprClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            self._connection = cls(self._host, self._port, timeout=self._timeout)
            self._served = 0
        return self._connection

    def _send(self, method: str, path: str, body: bytes | None) -> tuple[int, dict[str, str], bytes]:
        headers = {"Authorization": f"Bearer {self._token}", "Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            connection = self._connect()
            reused = self._served > 0
            try:
                connection.request(method, self._prefix + path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                # A keep-alive connection the server had already closed: the request never
                # reached it, so sending it again on a fresh connection is safe.
                if reused and attempt == 1:
                    continue
                raise
            self._served += 1
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        raise AssertionError("unreachable")

    def request(
        self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None
    ) -> Any:
        """One API call; the decoded JSON answer, or `ApiError`."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        url = path + (f"?{urlencode(params)}" if params else "")
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        for attempt in range(self._throttle_retries + 1):
            status, headers, data = self._send(method, url, payload)
            if status == 429 and attempt < self._throttle_retries:
                time.sleep(min(5.0, float(headers.get("retry-after") or 1)))
                continue
            break
        decoded: Any = None
        if data:
            try:
                decoded = json.loads(data)
            except ValueError:
                decoded = data.decode(errors="replace")
        if status >= 400:
            detail = decoded.get("detail", "") if isinstance(decoded, dict) else str(decoded or "")
            errors = decoded.get("errors", []) if isinstance(decoded, dict) else []
            raise ApiError(
                status=status, detail=str(detail) or f"HTTP {status}", errors=list(errors), body=decoded
            )
        return decoded

    def _with_namespace(self, body: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(body)
        if self.namespace and "namespace" not in out:
            out["namespace"] = self.namespace
        return out

    # --- the API ---------------------------------------------------------------------

    def submit_pull(self, pull: Mapping[str, Any], *, idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /api/v1/pulls: the stored KPR (the first one again for a repeated idempotency key)."""
        body = self._with_namespace(pull)
        if idempotency_key is not None:
            body["idempotencyKey"] = idempotency_key
        result: dict[str, Any] = self.request("POST", "/api/v1/pulls", body=body)
        return result

    def get_pull(self, pull_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.request("GET", f"/api/v1/pulls/{quote(str(pull_id))}")
        return result

    def wait_for_decision(self, pull_id: str, *, timeout: float = 30.0, interval: float = 0.05) -> Decision:
        """Poll the KPR until it is rejected, held for a person, merged or in conflict.

        On time-out the last state is returned with `settled=False`: review is asynchronous,
        and a KPR that has not been decided yet is not an error.
        """
        deadline = time.monotonic() + timeout
        delay = interval
        while True:
            decision = decision_of(self.get_pull(pull_id))
            if decision.settled or time.monotonic() >= deadline:
                return decision
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 1.5, 1.0)

    def list_facts(
        self,
        *,
        subject: str,
        category: str | None = None,
        status: str | None = None,
        page_size: int = 500,
    ) -> list[dict[str, Any]]:
        """GET /api/v1/facts, every page: the subject's active facts unless `status` says otherwise."""
        facts: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = self.request(
                "GET",
                "/api/v1/facts",
                query={
                    "namespace": self.namespace,
                    "subject": subject,
                    "category": category,
                    "status": status,
                    "page": page,
                    "pageSize": page_size,
                },
            )
            facts.extend(answer.get("results", []))
            if not answer.get("next"):
                return facts
            page += 1

    def retrieve(
        self,
        *,
        subject: str,
        query: str,
        top_k: int = 5,
        categories: list[str] | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """POST /api/v1/retrieve: ranked active facts and the prompt-ready context block."""
        body: dict[str, Any] = {"subject": subject, "query": query, "topK": top_k}
        if categories:
            body["categories"] = categories
        if as_of:
            body["asOf"] = as_of
        result: dict[str, Any] = self.request("POST", "/api/v1/retrieve", body=self._with_namespace(body))
        return result

    def post_turn(self, *, session_id: str, role: str, content: str) -> dict[str, Any]:
        """POST /api/v1/sessions/{id}/turns: one turn into working memory and the session transcript."""
        body = self._with_namespace({"role": role, "content": content})
        result: dict[str, Any] = self.request(
            "POST", f"/api/v1/sessions/{quote(session_id, safe='')}/turns", body=body
        )
        return result
