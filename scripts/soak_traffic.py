"""The agents of `make soak`: closed-loop clients of mixed traffic, and what they measured.

Each agent has its own token and subject and loops over conversation turns: the user says
something (a working-memory turn), the agent retrieves; now and then it proposes a memory
citing the turn (a KPR with an idempotency key, retried on 5xx and connection errors as a
well-behaved client does), reads its earlier proposals, and sends feedback.
"""

from __future__ import annotations

import http.client
import json
import random
import select
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

THINGS = ["color", "food", "city", "sport", "band", "movie", "book", "drink", "season", "animal"]
VALUES = ["blue", "green", "sushi", "Lisbon", "tennis", "jazz", "tea", "autumn", "otters", "Dune", "Osaka"]


@dataclass(frozen=True)
class Reply:
    status_code: int
    headers: dict[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


class KeepAliveClient:
    """One agent's keep-alive HTTP/1.1 connection to one web node.

    The agents share the machine with the stack they load, so their client is the standard
    library's: a general-purpose client (httpx) spent about 1.5 ms of CPU per request here,
    taken from the processes under test. A connection the server closed while idle is replaced
    before use; a failed one is dropped and made anew on the next request.
    """

    def __init__(self, base_url: str, *, headers: dict[str, str], timeout: float) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.headers = {**headers, "Accept": "application/json"}
        self.timeout = timeout
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: object = None) -> Reply:
        """The answer; OSError or http.client.HTTPException when no answer came."""
        headers = dict(self.headers)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection = self._connection()
        try:
            connection.request(method, path, body=payload, headers=headers)
        except OSError:
            # The server closed the connection before this request went out (between the check
            # and the send): nothing was read, so it goes once more over a new connection.
            self.close()
            connection = self._connection()
            try:
                connection.request(method, path, body=payload, headers=headers)
            except OSError:
                self.close()
                raise
        try:
            response = connection.getresponse()
            content = response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if response.will_close:
            self.close()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, content)

    def _connection(self) -> http.client.HTTPConnection:
        """The open connection, unless the server has closed it while idle (keep-alive timeout)."""
        if self.connection is not None and self.connection.sock is not None:
            readable, _, _ = select.select([self.connection.sock], [], [], 0)
            if readable:  # an idle HTTP/1.1 connection has nothing to read but its end
                self.close()
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self.connection

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_agent: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    sent_keys: set[str] = field(default_factory=set)
    accepted: dict[str, str] = field(default_factory=dict)  # idempotency key -> KPR id

    def record(self, endpoint: str, status: int, seconds: float, *, agent: int = 0) -> None:
        with self.lock:
            self.latencies[endpoint].append(seconds)
            self.by_agent[agent].append(seconds)
            self.statuses[endpoint][status] += 1

    def record_error(self, endpoint: str) -> None:
        with self.lock:
            self.errors[endpoint] += 1


class Agent(threading.Thread):
    def __init__(self, *, index: int, base_urls: list[str], token: str, namespace: str, stats: Stats,
                 stop_at: float, think: float, audited_writes: bool = True) -> None:  # fmt: skip
        super().__init__(name=f"soak-agent-{index}", daemon=True)
        self.index = index
        self.base_urls = base_urls
        self.headers = {"Authorization": f"Bearer {token}"}
        self.namespace = namespace
        self.subject = f"soak-subject-{index}"
        self.stats = stats
        self.stop_at = stop_at
        self.think = think
        # Without audited writes an agent only talks and recalls: the read path's own capacity.
        self.audited_writes = audited_writes
        self.random = random.Random(index)
        self.known: dict[str, str] = {}  # key -> value this agent saw merged
        self.proposed: dict[str, str] = {}  # key -> value of its latest proposal
        self.awaiting: dict[str, str] = {}  # KPR id -> key, until the KPR is decided
        self.clients = [KeepAliveClient(url, headers=self.headers, timeout=30.0) for url in base_urls]

    def call(self, endpoint: str, method: str, path: str, body: object = None) -> Reply | None:
        client = self.clients[self.random.randrange(len(self.clients))]
        started = time.monotonic()
        try:
            response = client.request(method, path, body)
        except (OSError, http.client.HTTPException):
            self.stats.record_error(endpoint)
            return None
        self.stats.record(endpoint, response.status_code, time.monotonic() - started, agent=self.index)
        return response

    def run(self) -> None:
        iteration = 0
        while time.monotonic() < self.stop_at:
            iteration += 1
            self.one_round(iteration)
        for client in self.clients:
            client.close()

    def pause(self) -> None:
        if self.think:
            time.sleep(self.random.uniform(0.5, 1.5) * self.think)

    def one_round(self, iteration: int) -> None:
        """One conversation turn: the user speaks, the agent recalls; every third turn it also
        proposes what it learned and reads the result of its last proposal; every fourth turn
        it reports whether a recalled memory helped."""
        session = f"soak-{self.index}-{iteration // 6}"
        thing = self.random.choice(THINGS)
        key = f"favorite_{thing}"
        value = self.random.choice([v for v in VALUES if v != self.known.get(key)])
        quote = f"My favorite {thing} is {value}."
        self.call("POST turns", "POST", f"/api/v1/sessions/{session}/turns",
                  {"namespace": self.namespace, "role": "user", "content": quote})  # fmt: skip
        self.pause()
        response = self.call("POST retrieve", "POST", "/api/v1/retrieve",
                             {"namespace": self.namespace, "subject": self.subject,
                              "query": f"What is my favorite {thing}?", "topK": 3})  # fmt: skip
        self.pause()
        if not self.audited_writes:
            return
        if iteration % 4 == 0 and response is not None and response.status_code == 200:
            fact_ids = [r["factId"] for r in response.json().get("results", [])][:1]
            if fact_ids:
                self.call(
                    "POST feedback", "POST", "/api/v1/feedback", {"factIds": fact_ids, "outcome": "success"}
                )
                self.pause()
        if iteration % 3 == 0:
            self.read_last_proposal()
            if key not in self.awaiting.values():
                pull_id = self.propose(session=session, key=key, value=value, quote=quote)
                if pull_id:
                    self.awaiting[pull_id] = key
                    self.proposed[key] = value
            self.pause()

    def read_last_proposal(self) -> None:
        """Read the KPRs still awaiting a decision; what merged is what the agent now knows."""
        for pull_id, key in list(self.awaiting.items()):
            response = self.call("GET pull", "GET", f"/api/v1/pulls/{pull_id}")
            if response is None or response.status_code != 200:
                continue
            body = response.json()
            if body.get("mergeStatus") == "MERGED":
                self.known[key] = self.proposed[key]
            decided = body.get("reviewStatus") in ("REJECTED", "NEEDS_HUMAN_REVIEW")
            if decided or body.get("mergeStatus") != "UNMERGED":
                del self.awaiting[pull_id]

    def propose(self, *, session: str, key: str, value: str, quote: str) -> str | None:
        idempotency_key = f"soak-{uuid.uuid4().hex}"
        old = self.known.get(key)
        body = {
            "namespace": self.namespace,
            "subject": self.subject,
            "sourceSessionId": session,
            "proposedBy": f"soak-agent-{self.index}",
            "idempotencyKey": idempotency_key,
            "operations": [{
                "action": "UPDATE" if old is not None else "CREATE",
                "category": "user_profile", "key": key, "oldValue": old, "newValue": value,
                "confidence": 0.9, "importance": 0.5,
                "evidence": {"rawMessageQuote": quote, "timestamp": int(time.time() * 1000)},
            }],
        }  # fmt: skip
        with self.stats.lock:
            self.stats.sent_keys.add(idempotency_key)
        # A client whose submit failed cannot know whether it was stored: it sends the same
        # idempotency key again until it gets an answer (for a bounded time).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            response = self.call("POST pulls", "POST", "/api/v1/pulls", body)
            if response is not None and response.status_code in (200, 201):
                pull_id = str(response.json()["id"])
                with self.stats.lock:
                    self.stats.accepted[idempotency_key] = pull_id
                return pull_id
            if response is not None and response.status_code < 500 and response.status_code != 429:
                return None
            retry_after = response.headers.get("retry-after") if response is not None else None
            time.sleep(min(float(retry_after or 0.5), 5.0))
        return None


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
