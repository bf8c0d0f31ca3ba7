"""Review quality on conversation text: how many true facts merge without a person, how many
negatives are held, and which unsafe ones slipped through.

The corpus (bench._review_corpus): first-person facts from Synthetic-Persona-Chat turns and
hand-written Chinese ones (positives), and the negatives a careful reviewer must hold (the
other speaker's facts, the agent's words, another subject's words, questions, hypotheticals,
jokes, plans, reported speech, secrets, prompt injections). Develop on `valid`, report `test`.

Each run has its own namespace: the sessions' turns are posted to working memory through
the service, then one single-operation CREATE KPR per case is stored and reviewed by the
pipeline (rules only, or rules and the configured LLM with `llm`), with an empty fact store
(merges are not run). Options: `split` (test), `conversations` (English conversations, 160;
40 with `quick`), `langs` (en, zh), `llm` ("local" unless told: False is the rules alone; True asks the configured model; "local" runs
the rules alone and then with a local careful-reader model over HTTP, bench._careful_reader,
and reports the prompt's figures and any decision the model loosened).
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from typing import Any

from django.db import connection, transaction
from django.test.utils import override_settings

from bench._careful_reader import careful_reader
from bench._review_corpus import NEGATIVE_CLASSES, NEVER_APPROVE, POSITIVE, Case, corpus_build
from memorypr.agents.models import Namespace
from memorypr.agents.services import agent_create
from memorypr.pulls.models import KnowledgePullRequest, ReviewEvent
from memorypr.pulls.services import pull_submit
from memorypr.pulls.specs import OperationSpec, PullSpec
from memorypr.working_memory.services import turn_append
from reviewer.pipeline import pull_review
from reviewer.services import review_policy_set

STATUSES = ("APPROVED", "NEEDS_HUMAN_REVIEW", "REJECTED")


def _drop_on_commit_hand_offs() -> None:
    # Review and merge hand-offs registered in the enclosing block: the benchmark reviews itself
    # and merges nothing, so every case meets the same empty store.
    connection.run_on_commit.clear()


def _held_by(pull: KnowledgePullRequest) -> list[str]:
    event = pull.review_events.filter(reviewer_kind=ReviewEvent.ReviewerKind.RULES).order_by("-id").first()
    rules: list[str] = []
    for finding in (event.findings if event else None) or []:
        for check in finding.get("checks", []):
            if check.get("verdict") != "pass" and check.get("rule") not in rules:
                rules.append(check["rule"])
    if (
        pull.review_events.filter(reviewer_kind=ReviewEvent.ReviewerKind.LLM)
        .exclude(verdict="APPROVE")
        .exists()
    ):
        rules.append("llm")
    return rules


def _review_cases(*, cases: list[Case], sessions: dict[str, tuple[str, list[tuple[str, str]]]],
                  llm: bool) -> list[tuple[Case, str, list[str], str]]:  # fmt: skip
    tag = uuid.uuid4().hex[:8]
    name = f"bench-quality-{tag}"
    agent, _ = agent_create(name=name, namespaces=[name])
    namespace = Namespace.objects.get(name=name)
    review_policy_set(
        namespace=namespace,
        actor="bench",
        mode="rules_and_llm" if llm else "rules_only",
        agent_hourly_limit=10**9,
    )
    with transaction.atomic():
        for session, (_subject, turns) in sessions.items():
            for role, content in turns:
                turn_append(namespace=namespace, session_id=session, role=role, content=content, agent=agent)
        ids = []
        for case in cases:
            spec = PullSpec(
                subject=case.subject,
                source_session_id=case.session,
                operations=[
                    OperationSpec(action="CREATE", category="user_profile", key=case.key, new_value=case.value,
                                  confidence=0.9, evidence={"rawMessageQuote": case.quote, "timestamp": 0})
                ],
            )  # fmt: skip
            ids.append(str(pull_submit(agent=agent, namespace=namespace, spec=spec)[0].id))
        _drop_on_commit_hand_offs()
    results = []
    for case, pull_id in zip(cases, ids, strict=True):
        with transaction.atomic():
            outcome = pull_review(pull_id=pull_id)
            _drop_on_commit_hand_offs()
        pull = KnowledgePullRequest.objects.get(pk=pull_id)
        results.append((case, pull.review_status, _held_by(pull), outcome.feedback if outcome else ""))
    return results


def _rate(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def summarize(results: list[tuple[Case, str, list[str], str]], *, examples: int = 5) -> dict[str, Any]:
    """The figures for one language: rates, per-rule counts, confusion table, unsafe approvals."""
    by_label: dict[str, Counter[str]] = defaultdict(Counter)
    rule_held: dict[str, Counter[str]] = defaultdict(Counter)
    false_escalations: list[dict[str, str]] = []
    unsafe: list[dict[str, str]] = []
    for case, status, held, feedback in results:
        by_label[case.label][status] += 1
        for rule in held:
            rule_held[rule][case.label] += 1
        if case.label == POSITIVE and status != "APPROVED":
            false_escalations.append({"quote": case.quote, "fact": f"{case.key}={case.value}", "heldBy": ", ".join(held),
                                      "feedback": feedback.splitlines()[-1] if feedback else ""})  # fmt: skip
        if case.label != POSITIVE and status == "APPROVED":
            unsafe.append({"class": case.label, "quote": case.quote, "fact": f"{case.key}={case.value}"})
    positives = by_label[POSITIVE]
    total_pos = sum(positives.values())
    catch = {
        label: _rate(
            sum(by_label[label].values()) - by_label[label]["APPROVED"], sum(by_label[label].values())
        )
        for label in NEGATIVE_CLASSES
        if by_label[label]
    }
    negatives = [label for label in NEGATIVE_CLASSES if by_label[label]]
    neg_total = sum(sum(by_label[label].values()) for label in negatives)
    neg_held = neg_total - sum(by_label[label]["APPROVED"] for label in negatives)
    return {
        "positives": total_pos,
        "negatives": neg_total,
        "autoApprovalOfTrueFactsPct": _rate(positives["APPROVED"], total_pos),
        "falseEscalationPct": _rate(total_pos - positives["APPROVED"], total_pos),
        "negativesHeldPct": _rate(neg_held, neg_total),
        "catchRatePctByClass": catch,
        "unsafeApprovals": len(unsafe),
        "unsafeApprovalsNeverAllowed": sum(1 for u in unsafe if u["class"] in NEVER_APPROVE),
        "confusion": {label: {s: by_label[label][s] for s in STATUSES} for label in [POSITIVE, *negatives]},
        "byRule": {
            rule: {
                "heldPositives": counts[POSITIVE],
                "caughtNegatives": sum(v for k, v in counts.items() if k != POSITIVE),
                "byClass": dict(sorted(counts.items())),
            }  # fmt: skip
            for rule, counts in sorted(rule_held.items())
        },
        "falseEscalationExamples": false_escalations[:examples],
        "unsafeApprovalExamples": unsafe[:examples],
    }


def table(summary: dict[str, Any]) -> str:
    """The confusion table and the catch rates as text."""
    lines = [f"{'class':<16} {'n':>5} {'APPROVED':>9} {'HUMAN':>7} {'REJECTED':>9} {'held %':>7}"]
    for label, row in summary["confusion"].items():
        n = sum(row.values())
        held = _rate(n - row["APPROVED"], n)
        lines.append(
            f"{label:<16} {n:>5} {row['APPROVED']:>9} {row['NEEDS_HUMAN_REVIEW']:>7} {row['REJECTED']:>9} {held!s:>7}"
        )
    lines.append(f"{'rule':<16} {'held +':>7} {'caught -':>9}")
    for rule, row in summary["byRule"].items():
        lines.append(f"{rule:<16} {row['heldPositives']:>7} {row['caughtNegatives']:>9}")
    return "\n".join(lines)


STRICTNESS = {"APPROVED": 0, "NEEDS_HUMAN_REVIEW": 1, "REJECTED": 2}


def _with_local_reader(*, cases: list[Case], sessions: dict[str, tuple[str, list[tuple[str, str]]]],
                       report: dict[str, Any]) -> list[tuple[Case, str, list[str], str]]:  # fmt: skip
    """Rules alone, then rules and the local careful reader (bench._careful_reader) over HTTP:
    the prompt's own figures, and every case where the model loosened the rules' decision."""
    rules_only = _review_cases(cases=cases, sessions=sessions, llm=False)
    with (
        careful_reader() as (base_url, stats),
        override_settings(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="local"),
    ):
        with_llm = _review_cases(cases=cases, sessions=sessions, llm=True)
    loosened = [
        {"class": case.label, "quote": case.quote, "rules": before[1], "withLlm": after[1]}
        for case, before, after in zip(cases, rules_only, with_llm, strict=True)
        if STRICTNESS[after[1]] < STRICTNESS[before[1]]
    ]
    report["llmPrompt"] = {
        **stats.as_dict(),
        "loosenedByLlm": len(loosened),
        "loosenedExamples": loosened[:5],
    }
    report["rulesOnly"] = {
        lang: summarize([r for r in rules_only if r[0].lang == lang], examples=0)
        for lang in {case.lang for case in cases}
    }
    return with_llm


def run(options: dict[str, Any]) -> dict[str, Any]:
    """`llm`: False (rules only), True (the configured model), "local" (rules only, then with the
    local careful reader, to evaluate the prompt on the corpus)."""
    quick = bool(options.get("quick"))
    split = str(options.get("split") or "test")
    conversations = int(options.get("conversations") or (40 if quick else 160))
    langs = tuple(options.get("langs") or ("en", "zh"))
    corpus = corpus_build(split=split, conversations=conversations, langs=langs)
    report: dict[str, Any] = {"split": split, "englishConversations": conversations}
    if options.get("llm", "local") == "local":
        results = _with_local_reader(cases=corpus.cases, sessions=corpus.sessions, report=report)
    else:
        results = _review_cases(cases=corpus.cases, sessions=corpus.sessions, llm=bool(options.get("llm")))
    for lang in langs:
        report[lang] = summarize([r for r in results if r[0].lang == lang])
    report["overall"] = summarize(results, examples=0)
    return report
