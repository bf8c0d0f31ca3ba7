"""POST /api/v1/pulls latency over real HTTP against gunicorn (the production web process)."""

from __future__ import annotations

import http.client
import json
import time
import uuid
from typing import Any

from bench._http import gunicorn_server, percentile
from memorypr.agents.services import agent_create


def _body(i: int) -> bytes:
    return json.dumps(
        {
            "subject": f"bench-user-{i % 50}",
            "sourceSessionId": f"bench-{i}",
            "operations": [
                {
                    "action": "CREATE",
                    "category": "user_profile",
                    "key": f"pref_{i}",
                    "oldValue": None,
                    "newValue": f"value {i}",
                    "confidence": 0.9,
                    "evidence": {"rawMessageQuote": f"I prefer value {i}.", "timestamp": 1732000000000},
                }
            ],
        }  # fmt: skip
    ).encode()


def run(options: dict[str, Any]) -> dict[str, Any]:
    requests = 200 if options.get("quick") else 1000
    _, token = agent_create(name=f"bench-{uuid.uuid4().hex[:6]}", namespaces=["bench"])
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    latencies: list[float] = []
    with gunicorn_server() as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for i in range(20):  # warm-up: connections, imports
            conn.request("POST", "/api/v1/pulls", body=_body(-i - 1), headers=headers)
            conn.getresponse().read()
        started = time.perf_counter()
        for i in range(requests):
            t0 = time.perf_counter()
            conn.request("POST", "/api/v1/pulls", body=_body(i), headers=headers)
            response = conn.getresponse()
            response.read()
            latencies.append((time.perf_counter() - t0) * 1000)
            if response.status != 201:
                raise RuntimeError(f"POST returned {response.status}")
        elapsed = time.perf_counter() - started
    return {
        "requests": requests,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "max_ms": round(max(latencies), 2),
        "requests_per_s_sequential": round(requests / elapsed, 1),
    }
