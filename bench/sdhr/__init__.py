"""Stale dependency hit rate and consistency on MemoryAgentBench Conflict_Resolution (docs/architecture.md §10).

Data: the FactConsolidation single-hop records, each a list of numbered facts (later ones
superseding earlier ones about the same entity and relation) and 100 questions with
substring-matched answers, from shared/data/memoryagentbench (or MEMORYPR_MAB_DATA): every
size by default (6k, 32k, 64k and 262k: 455, 2,310, 4,579 and 18,331 facts), or those
MEMORYPR_SDHR_RECORDS names (`6k,32k`). `quick` ingests the first 150 facts of the smallest
and asks the questions whose answer is settled by them.

Systems, each fed the facts in order and asked every mapped question (top 5):
- memorypr: the formation pipeline (`memorypr.formation.propose`) over HTTP against gunicorn
  (turns recorded → extract → diff against GET /api/v1/facts → KPR → the real rule review →
  merge; Celery eager inside the web process, so review and merge run as the submission
  commits), ten statements per proposal as an agent proposes a stretch of conversation;
  POST /api/v1/retrieve. `memoryprPerStatement` ingests the same facts one statement per KPR
  (the refresh latencies are its);
- plain: a pgvector table of the fact sentences, top-k cosine, no versions;
- mem0 (`mem0ai` 2.2.1, the `bench` extra): `add(sentence, infer=False)` into its pgvector
  store on the same server, `search(top_k=5)`. Missing data, or mem0 missing or failing,
  fails the benchmark with the reason (never a silent pass).

Each question is mapped to its key (the entity it names whose latest value is the answer);
an update scenario is a question whose key had earlier, different values. Measured:
consistency (the top result / any of the top 5 is the key's current value; the benchmark's
loose check, answer substring of the context, too), SDHR (a superseded value of the key
among the top 5 / as the first version of the key in the ranking), ingest throughput,
context refresh latency (an update proposed → first retrieval that serves it) and retrieval
p50/p95. Multi-hop questions chain 2–4 facts through reasoning; with no model in the loop
they are not asked.

MEMORYPR_SDHR_REUSE=<namespace> (or `latest`) skips ingestion and the other systems: the
questions are asked in process against the facts an earlier run left in that namespace
(its name is in the result), to iterate on retrieval in seconds. Use it with the data
folder and the `--quick` choice of the run that ingested.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from bench.sdhr.data import QUICK_FACTS, SOURCE, SOURCES, TOP_K, data_path, load, record_size, sources_chosen
from bench.sdhr.peers import run_mem0, run_plain
from bench.sdhr.systems import reused_namespace, run_memorypr, run_memorypr_questions, run_worker_refresh


def run(options: dict[str, Any]) -> dict[str, Any]:
    if not data_path().exists():
        raise RuntimeError(f"no MemoryAgentBench data at {data_path()} (set MEMORYPR_MAB_DATA)")
    quick = bool(options.get("quick"))
    sources = [SOURCE] if quick else sources_chosen()
    tag = uuid.uuid4().hex[:8]
    result: dict[str, Any] = {
        "topK": TOP_K,
        "multiHop": "not asked: its questions chain 2-4 facts by reasoning, and no model is in the loop",
        "records": {},
    }
    reuse = os.environ.get("MEMORYPR_SDHR_REUSE", "").strip()
    if reuse:
        namespace = reused_namespace(reuse)
        if namespace is None:
            raise RuntimeError(f"MEMORYPR_SDHR_REUSE={reuse}: no such namespace in this database")
        source = next((s for s in SOURCES if namespace.name.endswith(f"-{record_size(s)}")), SOURCE)
        _, questions, _ = load(source=source, limit=QUICK_FACTS if quick else None)
        result["records"][source] = {"memorypr": run_memorypr_questions(questions, namespace=namespace)}
        return result
    for source in sources:
        result["records"][source] = _run_record(source, quick=quick, tag=tag, refresh=source == sources[0])
    return result


def _run_record(source: str, *, quick: bool, tag: str, refresh: bool) -> dict[str, Any]:
    """Every system on one record; with `refresh`, the refresh latencies too (one statement per
    KPR, and a real worker), which do not depend on the record's size."""
    facts, questions, asked = load(source=source, limit=QUICK_FACTS if quick else None)
    tag = f"{tag}-{record_size(source)}"
    record: dict[str, Any] = {
        "facts": len(facts),
        "questions": {
            "inRecord": asked,
            "mapped": len(questions),
            "updateScenarios": sum(q.updated for q in questions),
        },
        "memorypr": run_memorypr(facts, questions, tag=tag),
    }
    if refresh:
        record["memoryprPerStatement"] = run_memorypr(facts, questions, tag=tag, window=1)
        try:
            record["memoryprWithWorker"] = run_worker_refresh(facts, tag=tag, updates=10 if quick else 30)
        except Exception as exc:  # reported: the eager figures above stand on their own
            record["memoryprWithWorker"] = {"failed": f"{type(exc).__name__}: {exc}"}
    record["plainVectorStore"] = run_plain(facts, questions)
    # A peer that is missing or fails fails the benchmark: a comparison without it is no pass.
    record["mem0"] = run_mem0(facts, questions, tag=tag)
    return record
