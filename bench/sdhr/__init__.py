"""Stale dependency hit rate and consistency on MemoryAgentBench Conflict_Resolution (docs/architecture.md §10).

Data: the FactConsolidation single-hop record (`factconsolidation_sh_6k` by default: 455
numbered facts, later ones superseding earlier ones about the same entity and relation,
100 questions with substring-matched answers), from shared/data/memoryagentbench (or
MEMORYPR_MAB_DATA). `quick` ingests the first 150 facts and asks the questions whose
answer is settled by them.

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

from bench.sdhr.data import QUICK_FACTS, SOURCE, TOP_K, data_path, load
from bench.sdhr.peers import run_mem0, run_plain
from bench.sdhr.systems import reused_namespace, run_memorypr, run_memorypr_questions, run_worker_refresh


def run(options: dict[str, Any]) -> dict[str, Any]:
    if not data_path().exists():
        raise RuntimeError(f"no MemoryAgentBench data at {data_path()} (set MEMORYPR_MAB_DATA)")
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
        namespace = reused_namespace(reuse)
        if namespace is None:
            raise RuntimeError(f"MEMORYPR_SDHR_REUSE={reuse}: no such namespace in this database")
        result["memorypr"] = run_memorypr_questions(questions, namespace=namespace)
        return result
    result["memorypr"] = run_memorypr(facts, questions, tag=tag)
    result["memoryprPerStatement"] = run_memorypr(facts, questions, tag=tag, window=1)
    try:
        result["memoryprWithWorker"] = run_worker_refresh(facts, tag=tag, updates=10 if quick else 30)
    except Exception as exc:  # reported: the eager figures above stand on their own
        result["memoryprWithWorker"] = {"failed": f"{type(exc).__name__}: {exc}"}
    result["plainVectorStore"] = run_plain(facts, questions)
    # A peer that is missing or fails fails the benchmark: a comparison without it is no pass.
    result["mem0"] = run_mem0(facts, questions, tag=tag)
    return result
