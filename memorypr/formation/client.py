"""The reference proposer's view of the API: memorypr-client, answering the KPR protocol's JSON.

The HTTP, the retries (Retry-After on 429 and 503, backoff on other 5xx) and the errors with
the API's field paths are memorypr-client's (`clients/python`). The proposer reads answers as
the protocol's camelCase dicts because the diff compares them with what it extracted as they
are on the wire; `MemoryprClient.typed` is the typed client underneath, for everything else.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import memorypr_client
from memorypr_client import ApiError, RetryPolicy
from memorypr_client.models import SETTLED_MERGE, SETTLED_REVIEW

__all__ = ["ApiError", "Decision", "MemoryprClient", "decision_of"]


# Key filters per GET /api/v1/facts (the server takes 100 of each kind); keeps the URL short.
FILTERS_PER_REQUEST = 40


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
        max_retries: int = 3,
    ) -> None:
        self.typed = memorypr_client.MemoryprClient(
            base_url,
            token,
            namespace=namespace,
            timeout=timeout,
            retry=RetryPolicy(max_retries=max_retries),
        )
        self.namespace = namespace or None

    def close(self) -> None:
        self.typed.close()

    def __enter__(self) -> MemoryprClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _with_namespace(self, body: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(body)
        if self.namespace and "namespace" not in out:
            out["namespace"] = self.namespace
        return out

    def submit_pull(self, pull: Mapping[str, Any], *, idempotency_key: str | None = None) -> dict[str, Any]:
        """POST /api/v1/pulls: the stored KPR (the first one again for a repeated idempotency key)."""
        body = self._with_namespace(pull)
        if idempotency_key is not None:
            body["idempotencyKey"] = idempotency_key
        # Only a KPR with an idempotency key is safe to send again after a lost answer.
        result: dict[str, Any] = self.typed.request(
            "POST", "/api/v1/pulls", json=body, repeatable="idempotencyKey" in body
        )
        return result

    def get_pull(self, pull_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.typed.request("GET", f"/api/v1/pulls/{quote(str(pull_id))}")
        return result

    def wait_for_decision(
        self, pull: str | Mapping[str, Any], *, timeout: float = 30.0, interval: float = 0.05
    ) -> Decision:
        """Poll the KPR until it is rejected, held for a person, merged or in conflict.

        `pull` is the KPR's id, or the KPR as `submit_pull` answered it: a KPR that answer
        already shows settled (a server that reviews and merges within the request, or an
        idempotent resend of a decided KPR) costs no further request.
        On time-out the last state is returned with `settled=False`: review is asynchronous,
        and a KPR that has not been decided yet is not an error.
        """
        if not isinstance(pull, str):
            answered = decision_of(pull)
            if answered.settled:
                return answered
            pull = answered.pull_id
        pull_id = pull
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
        keys: Collection[str] = (),
        key_prefixes: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        """GET /api/v1/facts, every page: the subject's active facts unless `status` says otherwise.

        With `keys` or `key_prefixes`, only the facts with one of those keys or whose key starts
        with one of the prefixes, asked for FILTERS_PER_REQUEST at a time (a request line stays
        short).
        """
        filters = [("key", key) for key in sorted(keys)] + [("keyPrefix", p) for p in sorted(key_prefixes)]
        if not filters:
            return self._list_pages(subject=subject, category=category, status=status, page_size=page_size)
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(filters), FILTERS_PER_REQUEST):
            chunk = filters[start : start + FILTERS_PER_REQUEST]
            for fact in self._list_pages(
                subject=subject,
                category=category,
                status=status,
                page_size=page_size,
                key=[value for name, value in chunk if name == "key"] or None,
                keyPrefix=[value for name, value in chunk if name == "keyPrefix"] or None,
            ):
                found[int(fact["id"])] = fact
        return list(found.values())

    def list_facts_page(self, *, subject: str, page_size: int = 500) -> tuple[list[dict[str, Any]], bool]:
        """The first page of the subject's active facts, and whether there are more."""
        answer = self._facts_page(subject=subject, page=1, page_size=page_size)
        return list(answer.get("results", [])), bool(answer.get("next"))

    def _list_pages(self, *, subject: str, page_size: int, **filters: Any) -> list[dict[str, Any]]:
        facts: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = self._facts_page(subject=subject, page=page, page_size=page_size, **filters)
            facts.extend(answer.get("results", []))
            if not answer.get("next"):
                return facts
            page += 1

    def _facts_page(self, *, subject: str, page: int, page_size: int, **filters: Any) -> dict[str, Any]:
        params = {
            "namespace": self.namespace,
            "subject": subject,
            **filters,
            "page": page,
            "pageSize": page_size,
        }
        answer: dict[str, Any] = self.typed.request("GET", "/api/v1/facts", params=params)
        return answer

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
        result: dict[str, Any] = self.typed.request(
            "POST", "/api/v1/retrieve", json=self._with_namespace(body), repeatable=True
        )
        return result

    def post_turn(self, *, session_id: str, role: str, content: str) -> dict[str, Any]:
        """POST /api/v1/sessions/{id}/turns: one turn into working memory and the session transcript."""
        body = self._with_namespace({"role": role, "content": content})
        result: dict[str, Any] = self.typed.request(
            "POST", f"/api/v1/sessions/{quote(session_id, safe='')}/turns", json=body
        )
        return result
