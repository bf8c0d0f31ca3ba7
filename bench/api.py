"""The agent API over HTTP, against the processes `make run` starts (scripts/run.py).

The server runs on this benchmark's database (the embedded PostgreSQL under .data/bench-pg)
with its own Redis, gunicorn, a Celery worker and beat, as `make run` does. The facts are
the ones `bench retrieval` loads (COPY of valid fact rows with their real all-MiniLM-L6-v2
embeddings and search text, the HNSW index built after); they are loaded here the same way
when they are missing. Sizes: 10k and 100k facts in one subject (with --quick: those when
loaded, else 1k and 5k; --quick also sends fewer requests).

Measured, with 1 and with 8 concurrent clients (one agent and one HTTP connection each):
- POST /api/v1/retrieve (top 10): latency p50/p95 and requests/s, and the CPU each request
  cost: in the web processes, the worker, PostgreSQL, this benchmark's client threads and the
  whole machine (whose cores bound the requests/s that more clients could get). PostgreSQL's
  figure holds its background work too (autovacuum, checkpoints), which weighs most in the
  short runs of one client;
- submit → merged: POST /api/v1/pulls of one CREATE whose evidence is a turn posted first,
  reviewed by the rules (`rules_only` policy) and merged by the worker; the clock runs from
  the POST until GET /api/v1/pulls/{id} says MERGED. KPRs/s is over the whole run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench import retrieval
from bench._http import REPO, free_port, percentile
from bench._processes import cpu_meter, cpu_ms_per, database_server_group, process_tree, processes_settled
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.facts.models import FactVersion
from memorypr.formation import MemoryprClient
from reviewer.services import review_policy_set

CLIENTS = (1, 8)
SUBJECT = "s0"


@contextmanager
def made_run_server(*, data: Path) -> Iterator[tuple[str, int]]:
    """`scripts/run.py` on this benchmark's database; yields its base URL and its process id once
    /healthz answers 200."""
    port = free_port()
    drop = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "PROMETHEUS_MULTIPROC_DIR")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env |= {"MEMORYPR_REDIS_DIR": str(data / "redis"), "DJANGO_SETTINGS_MODULE": "memorypr.settings"}
    log_path = data / "run.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(REPO / "scripts" / "run.py"), "--port", str(port), "--data", str(data), "--no-demo"],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"`make run` did not become healthy:\n{tail}")
                time.sleep(1)
            # Healthy is not idle: the worker's children load their models in the background.
            processes_settled(proc.pid)
            yield base, proc.pid
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _loaded(sizes: list[int]) -> bool:
    return all(
        FactVersion.objects.filter(namespace__name=f"{retrieval.PREFIX}{size}-1", subject=SUBJECT).count()
        >= size
        for size in sizes
    )


def _namespaces(*, quick: bool) -> dict[int, Namespace]:
    """The one-subject layouts `bench retrieval` loads: the full sizes when they are loaded
    (with --quick too), else this run's sizes, loaded here the same way when missing."""
    sizes = retrieval.sizes_of(quick=False)
    if not _loaded(sizes):
        sizes = retrieval.sizes_of(quick=quick)
        if not _loaded(sizes):
            retrieval.load(sizes=sizes)
    return {size: Namespace.objects.get(name=f"{retrieval.PREFIX}{size}-1") for size in sizes}


def _agents(namespace: Namespace, count: int) -> list[str]:
    tag = uuid.uuid4().hex[:6]
    return [agent_create(name=f"bench-api-{tag}-{i}", namespaces=[namespace.name])[1] for i in range(count)]


def _concurrently(clients: int, work: Callable[[int], list[float]]) -> tuple[list[float], float]:
    """Run `work(i)` in `clients` threads; their latencies together, and the wall time."""
    results: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            results[i] = work(i)
        except BaseException as exc:  # reported below: a failed request fails the benchmark
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"{len(errors)} client(s) failed: {errors[0]!r}") from errors[0]
    return [x for r in results for x in r], time.perf_counter() - started


Groups = dict[str, Callable[[], list[Any]]]


def _server_groups(run_pid: int) -> Groups:
    """The processes whose CPU a run counts: the server's web and worker processes, PostgreSQL's,
    and this process (the clients' threads)."""

    def of_server(word: str) -> Callable[[], list[Any]]:
        def find() -> list[Any]:
            found = []
            for process in process_tree(run_pid):
                with contextlib.suppress(psutil.Error):
                    if word in " ".join(process.cmdline()):
                        found.append(process)
            return found

        return find

    return {
        "web": of_server("gunicorn"),
        "worker": of_server("celery"),
        "postgres": database_server_group(),
        "client": lambda: [psutil.Process()],
    }


def _stats(latencies: list[float], seconds: float, unit: str, cpu: dict[str, float]) -> dict[str, Any]:
    per = "request" if unit == "requests" else "kpr"
    cpu_ms = cpu_ms_per(cpu, len(latencies))
    return {
        "requests": len(latencies),
        "p50Ms": round(percentile(latencies, 50) * 1000, 1),
        "p95Ms": round(percentile(latencies, 95) * 1000, 1),
        f"{unit}PerSecond": round(len(latencies) / seconds, 1),
        f"cpuMsPer{per.capitalize()}": cpu_ms,
        # what all the machine's cores would serve at this cost, whatever the number of clients
        f"cpuBound{unit.capitalize()}PerSecond": round(
            (os.cpu_count() or 1) * 1000 / max(cpu_ms["machine"], 1e-3), 1
        ),
    }


def _retrieve_run(
    base: str, groups: Groups, namespace: Namespace, tokens: list[str], per_client: int
) -> dict[str, Any]:
    queries = retrieval._queries(per_client * len(tokens) + 1, seed=23)

    def work(i: int) -> list[float]:
        latencies = []
        with MemoryprClient(base, tokens[i], namespace=namespace.name) as client:
            client.retrieve(subject=SUBJECT, query=queries[-1], top_k=10)  # the connection, warm
            for query in queries[i * per_client : (i + 1) * per_client]:
                started = time.perf_counter()
                body = client.retrieve(subject=SUBJECT, query=query, top_k=10)
                latencies.append(time.perf_counter() - started)
                if not body["results"]:
                    raise RuntimeError(
                        f"no results for {query!r}: {body.get('candidateCount')} candidates,"
                        f" {body.get('belowConfidence')} below the confidence bar,"
                        f" reformationNeeded={body.get('reformationNeeded')}"
                    )
        return latencies

    with cpu_meter(groups) as cpu:
        latencies, seconds = _concurrently(len(tokens), work)
    return _stats(latencies, seconds, "requests", cpu)


def _submit_run(
    base: str, groups: Groups, namespace: Namespace, tokens: list[str], per_client: int
) -> dict[str, Any]:
    run = uuid.uuid4().hex[:6]

    def work(i: int) -> list[float]:
        latencies = []
        with MemoryprClient(base, tokens[i], namespace=namespace.name) as client:
            for n in range(per_client):
                sentence = f"My locker number at the {run} gym is {i * 1000 + n}."
                session = f"bench-api-{run}-{i}"
                client.post_turn(session_id=session, role="user", content=sentence)
                started = time.perf_counter()
                pull = client.submit_pull(
                    {
                        "subject": SUBJECT,
                        "sourceSessionId": session,
                        "proposedBy": "bench-api",
                        "operations": [
                            {
                                "action": "CREATE", "category": "user_profile", "key": f"locker_{run}_{i}_{n}",
                                "oldValue": None, "newValue": str(i * 1000 + n), "confidence": 0.9,
                                "importance": 0.5,
                                "evidence": {"rawMessageQuote": sentence, "timestamp": int(time.time() * 1000)},
                            }
                        ],
                    }
                )  # fmt: skip
                decision = client.wait_for_decision(str(pull["id"]), timeout=120, interval=0.01)
                if not decision.merged:
                    raise RuntimeError(f"KPR {pull['id']}: {decision.review_status}/{decision.merge_status}")
                latencies.append(time.perf_counter() - started)
        return latencies

    with cpu_meter(groups) as cpu:
        latencies, seconds = _concurrently(len(tokens), work)
    return _stats(latencies, seconds, "kprs", cpu)


def run(options: dict[str, Any]) -> dict[str, Any]:
    quick = bool(options.get("quick"))
    per_client = {"retrieve": 20 if quick else 50, "submit": 5 if quick else 15}
    namespaces = _namespaces(quick=quick)
    for namespace in namespaces.values():
        # rules only (no model in the loop) and no hourly cap: the clients send as fast as answered
        review_policy_set(namespace=namespace, actor="bench", mode="rules_only", agent_hourly_limit=10**9)
    tokens = {size: _agents(namespace, max(CLIENTS)) for size, namespace in namespaces.items()}
    results: dict[str, Any] = {
        "server": "scripts/run.py (gunicorn, one Celery worker, beat, Redis) on .data/bench-pg",
        "facts": "bench retrieval's one-subject layouts (COPY-loaded rows with real embeddings)",
        "loadAverage1m": round(os.getloadavg()[0], 2),
    }
    with (
        tempfile.TemporaryDirectory(prefix="bench-api-") as data,
        made_run_server(data=Path(data)) as (base, pid),
    ):
        groups = _server_groups(pid)
        for size, namespace in namespaces.items():
            for clients in CLIENTS:
                label = f"{size // 1000}k_{clients}_clients"
                results[f"retrieve_{label}"] = _retrieve_run(
                    base, groups, namespace, tokens[size][:clients], per_client["retrieve"]
                )
                results[f"submit_to_merged_{label}"] = _submit_run(
                    base, groups, namespace, tokens[size][:clients], per_client["submit"]
                )
    return results
