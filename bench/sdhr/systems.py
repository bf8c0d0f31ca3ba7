"""memorypr through its API, with the worker in the loop or eager in the web process."""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.conf import settings

from bench._http import gunicorn_server
from bench._processes import celery_worker
from bench.sdhr.data import TOP_K, Fact, Question, Ranked
from bench.sdhr.scoring import ask_all, ms_stats
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.formation import MemoryprClient, Turn, diff_facts, extract_facts
from memorypr.formation.proposer import propose
from memorypr.retrieval.selectors import retrieve
from reviewer.services import review_policy_set

# --- memorypr -----------------------------------------------------------------------------


@contextmanager
def web_server(**env: str) -> Iterator[int]:
    """gunicorn on a free port, started with these environment variables on top of ours."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        with gunicorn_server(workers=1) as port:
            env_restore(saved)
            yield port
    finally:
        env_restore(saved)


def env_restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def sdhr_worker(*, queue: str, broker: str) -> Iterator[None]:
    """A real Celery worker process on its own queue, against this benchmark's database."""
    env = {
        "DJANGO_SETTINGS_MODULE": "memorypr.settings",
        "DATABASE_URL": settings.DATABASE_URL,
        "CELERY_BROKER_URL": broker,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
    }
    with celery_worker(queue=queue, env=env, concurrency=1, ready_timeout=120):
        yield


def wait_served(
    client: MemoryprClient, *, subject: str, query: str, key: str, value: str, timeout: float
) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        results = client.retrieve(subject=subject, query=query, top_k=TOP_K)["results"]
        if any(r["key"] == key and r["value"] == value for r in results):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


# Statements per proposal: an agent proposes what a stretch of conversation said, not each
# sentence on its own (memorypr.formation.propose takes a conversation's turns).
WINDOW = 10


def run_memorypr(
    facts: Sequence[Fact], questions: Sequence[Question], *, tag: str, window: int = WINDOW
) -> dict[str, Any]:
    """Ingest through the formation pipeline (`propose`: the turns recorded, the subject's facts
    listed, facts extracted and diffed, one KPR reviewed and merged), `window` statements at a
    time, then the questions over HTTP and in process.

    With `window=1` every statement is a KPR of its own; each CREATE and UPDATE is then timed
    from the start of its proposal (the turn recorded, the facts listed, the KPR submitted and
    decided) until a retrieval serves it.
    """
    name = f"bench-sdhr-{tag}" if window == WINDOW else f"bench-sdhr-{tag}-w{window}"
    _, token = agent_create(name=name, namespaces=[name])
    namespace = Namespace.objects.get(name=name)
    # The default rules review every KPR; rules only (no model in the loop) and no hourly cap
    # on one agent that sends a whole knowledge base in a minute.
    review_policy_set(namespace=namespace, actor="bench", mode="rules_only", agent_hourly_limit=10**9)
    subject, session = "world", f"sdhr-{tag}-w{window}"
    actions: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    refresh: dict[str, list[float]] = {"CREATE": [], "UPDATE": []}
    not_served = 0
    pipeline_seconds = 0.0
    with (
        web_server(CELERY_TASK_ALWAYS_EAGER="1") as port,
        MemoryprClient(f"http://127.0.0.1:{port}", token, namespace=name) as client,
    ):
        client.list_facts(subject=subject)  # the first request loads the web process
        started = time.perf_counter()
        for first in range(0, len(facts), window):
            chunk = facts[first : first + window]
            t0 = time.perf_counter()
            proposal = propose(
                client=client,
                subject=subject,
                session_id=session,
                turns=[Turn("user", fact.sentence) for fact in chunk],
                proposed_by="bench-sdhr",
            )
            pipeline_seconds += time.perf_counter() - t0
            actions["unchanged"] += len(chunk) - len(proposal.diff.operations)
            actions.update(op["action"] for op in proposal.diff.operations)
            statuses.update(f"{d.review_status}/{d.merge_status}" for d in proposal.decisions)
            if window > 1 or not proposal.decisions or not proposal.decisions[0].merged:
                continue
            (op,) = proposal.diff.operations
            if wait_served(
                client,
                subject=subject,
                query=chunk[0].sentence,
                key=op["key"],
                value=op["newValue"],
                timeout=5,
            ):
                refresh[op["action"]].append((time.perf_counter() - t0) * 1000)
            else:
                not_served += 1
        wall = time.perf_counter() - started

        def ask_http(text: str) -> tuple[Ranked, str]:
            body = client.retrieve(subject=subject, query=text, top_k=TOP_K)
            return [(r["key"], r["value"]) for r in body["results"]], body["context"]

        scores, http_latency = ask_all(questions, ask_http)

    def ask_inprocess(text: str) -> tuple[Ranked, str]:
        found = retrieve(namespace=namespace, subject=subject, query=text, top_k=TOP_K)
        return [(item.fact.key, str(item.fact.value)) for item in found.results], found.context

    _, inprocess_latency = ask_all(questions, ask_inprocess)
    result = {
        **scores,
        "namespace": name,
        "facts": len(facts),
        "statementsPerProposal": window,
        "kprs": sum(statuses.values()),
        "operations": dict(actions),
        "decisions": dict(statuses),
        "ingestFactsPerSecond": round(len(facts) / pipeline_seconds, 2),
        "ingestWallSeconds": round(wall, 1),
        "retrievalMsHttp": ms_stats(http_latency),
        "retrievalMsInProcess": ms_stats(inprocess_latency),
    }
    if window == 1:
        result |= {
            "refreshLatencyMsUpdate": ms_stats(refresh["UPDATE"]),
            "refreshLatencyMsCreate": ms_stats(refresh["CREATE"]),
            "mergedButNotServedIn5s": not_served,
        }
    return result


def run_memorypr_questions(questions: Sequence[Question], *, namespace: Namespace) -> dict[str, Any]:
    """The questions alone, in process, against facts an earlier run ingested."""

    def ask(text: str) -> tuple[Ranked, str]:
        found = retrieve(namespace=namespace, subject="world", query=text, top_k=TOP_K)
        return [(item.fact.key, str(item.fact.value)) for item in found.results], found.context

    ask(questions[0].text)  # loads the model and warms the caches
    scores, latency = ask_all(questions, ask)
    active = FactVersion.objects.filter(
        namespace=namespace, subject="world", status=FactStatus.ACTIVE
    ).count()
    return {
        **scores,
        "namespace": namespace.name,
        "activeFacts": active,
        "retrievalMsInProcess": ms_stats(latency),
    }


def reused_namespace(name: str) -> Namespace | None:
    if name != "latest":
        return Namespace.objects.filter(name=name).first()
    return Namespace.objects.filter(name__regex=r"^bench-sdhr-[0-9a-f]{8}-[0-9]+k$").order_by("-pk").first()


def run_worker_refresh(facts: Sequence[Fact], *, tag: str, updates: int) -> dict[str, Any]:
    """Refresh latency with review and merge on a real worker behind the configured broker.

    The first `updates` keys that the data updates are proposed twice (old value, then new)
    through the proposer; latency is from the update's submission to the first retrieval
    that serves the new value, polling every 20 ms.
    """
    name = f"bench-sdhr-worker-{tag}"
    _, token = agent_create(name=name, namespaces=[name])
    review_policy_set(
        namespace=Namespace.objects.get(name=name), actor="bench", mode="rules_only", agent_hourly_limit=10**9
    )
    pairs: dict[str, list[Fact]] = defaultdict(list)
    for fact in facts:
        if not pairs[fact.key] or pairs[fact.key][-1].value != fact.value:
            pairs[fact.key].append(fact)
    chosen = [versions[:2] for versions in pairs.values() if len(versions) >= 2][:updates]
    broker, queue = settings.CELERY_BROKER_URL, f"bench-sdhr-{tag}"
    latencies, missed = [], 0
    env = {"CELERY_BROKER_URL": broker, "CELERY_TASK_DEFAULT_QUEUE": queue, "CELERY_TASK_ALWAYS_EAGER": "0"}
    with (
        sdhr_worker(queue=queue, broker=broker),
        web_server(**env) as port,
        MemoryprClient(f"http://127.0.0.1:{port}", token, namespace=name) as client,
    ):
        for number, (old, new) in enumerate(chosen):
            subject = f"world-{number}"
            for fact in (old, new):
                current = client.list_facts(subject=subject)
                turn = Turn("user", fact.sentence, int(time.time() * 1000))
                (op,) = diff_facts(extracted=extract_facts([turn]).facts, current=current).operations
                submitted = time.perf_counter()
                client.submit_pull({"subject": subject, "sourceSessionId": queue, "operations": [op]})
                served = wait_served(
                    client,
                    subject=subject,
                    query=fact.sentence,
                    key=op["key"],
                    value=op["newValue"],
                    timeout=30,
                )
                if fact is new:
                    if served:
                        latencies.append((time.perf_counter() - submitted) * 1000)
                    else:
                        missed += 1
    return {
        "broker": broker.split(":", 1)[0],
        "updates": len(chosen),
        "refreshLatencyMsUpdate": ms_stats(latencies),
        "notServedIn30s": missed,
    }
