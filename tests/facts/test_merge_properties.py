"""Properties of the merge: whatever sequence of KPRs is merged, the fact store stays sound.

Hypothesis proposes sequences of KPRs on a handful of keys (CREATE, UPDATE, QUALIFIES
updates, DELETE, with derivedFrom links), some of them stale on purpose. Each goes through
pull_submit, a system approval and pull_merge. After every merge:

- at most one ACTIVE version per key;
- each key's versions replay: numbered 1..n, every version but the newest retired, each
  retired exactly when its successor was written, and the active values are what a model
  that applies the merged operations (and drops what went stale) expects;
- a KPR whose base no longer holds is a CONFLICT and writes nothing;
- nothing served (active, valid now, not resting directly on a dead fact, as retrieval
  filters) rests on a retired fact, however many DERIVED_FROM hops away;
- the audit chain verifies.

Every example works on a subject of its own, so examples do not see each other's facts.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db.models import Count
from django.utils import timezone
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from memorypr.agents.models import Agent, Namespace
from memorypr.audit.models import AuditEvent
from memorypr.audit.selectors import audit_chain_verify
from memorypr.facts.models import QUALIFIER_SUFFIX, EdgeType, FactEdge, FactStatus, FactVersion
from memorypr.pulls.models import MergeStatus, Relation
from memorypr.pulls.specs import OperationSpec
from memorypr.retrieval.candidates import candidates_servable
from memorypr.vectors.nearest import Scope
from tests.facts.kprs import approve, create, delete, merge, submit, update

pytestmark = pytest.mark.django_db

KEYS = ["a", "b", "c", "d", "e"]
CATEGORY = "user_profile"
_subjects = itertools.count()
# Bounded for `make test`; a soak run sets more.
EXAMPLES = int(os.environ.get("MEMORYPR_PROPERTY_EXAMPLES", "30"))


@dataclass
class Model:
    """What the active facts of the subject should be: key -> value."""

    active: dict[str, Any] = field(default_factory=dict)
    merged: int = 0
    conflicts: int = 0


@dataclass(frozen=True)
class Intent:
    """One operation as drawn, before it is checked against the model."""

    action: str  # CREATE, UPDATE, QUALIFY, DELETE
    key: str
    value: str
    derived_from: tuple[int, ...]  # picks among the keys active when it is proposed
    stale_base: bool  # propose against a value that is not the current one
    dangling: bool  # derive from a key that may have no active fact


intents = st.builds(
    Intent,
    action=st.sampled_from(["CREATE", "UPDATE", "QUALIFY", "DELETE"]),
    key=st.sampled_from(KEYS),
    value=st.sampled_from(["tea", "coffee", "Beijing", "Shenzhen", "remote", "杭州"]),
    derived_from=st.lists(st.integers(0, len(KEYS) - 1), max_size=2).map(tuple),
    stale_base=st.sampled_from([False] * 7 + [True]),
    dangling=st.sampled_from([False] * 7 + [True]),
)
# A KPR: one to three operations on distinct keys.
kprs = st.lists(intents, min_size=1, max_size=3, unique_by=lambda i: i.key)


def _spec(intent: Intent, model: Model) -> tuple[OperationSpec, bool]:
    """The operation for an intent, and whether the model expects it to merge."""
    current = model.active.get(intent.key)
    pool = KEYS if intent.dangling else sorted(k for k in model.active if k in KEYS) or KEYS
    derived = [k for k in dict.fromkeys(pool[i % len(pool)] for i in intent.derived_from) if k != intent.key]
    extra: dict[str, Any] = {"derived_from": derived}
    if intent.action == "CREATE" or (current is None and not intent.stale_base):
        value = f"{intent.value} ({intent.key})"
        return create(intent.key, value, category=CATEGORY, **extra), current is None
    base = current if current is not None and not intent.stale_base else "a value it never had"
    valid = current is not None and not intent.stale_base
    if intent.action == "DELETE":
        return delete(intent.key, base, category=CATEGORY), valid
    value = f"{intent.value} ({intent.key}, {model.merged})"
    if intent.action == "QUALIFY":
        return update(intent.key, base, value, category=CATEGORY, relation=Relation.QUALIFIES, **extra), valid
    return update(intent.key, base, value, category=CATEGORY, **extra), valid


def _expect(ops: list[OperationSpec], model: Model) -> dict[str, Any] | None:
    """The active facts after the KPR merges, or None when the model expects a conflict."""
    after = dict(model.active)
    for op in ops:
        if op.action == "DELETE":
            after.pop(op.key, None)
        elif op.relation == Relation.QUALIFIES:
            after[op.key + QUALIFIER_SUFFIX] = op.new_value
        else:
            after[op.key] = op.new_value
    # derivedFrom names keys that must be active once the KPR is in (its own writes count)
    for op in ops:
        if any(key not in after for key in op.derived_from):
            return None
    return after


def _snapshot(namespace: Namespace, subject: str) -> tuple[list[tuple[int, str]], int]:
    facts = FactVersion.objects.filter(namespace=namespace, subject=subject)
    rows = sorted(facts.values_list("pk", "status"))
    edges = FactEdge.objects.filter(source__in=facts).count()
    return rows, edges


def _active_now(namespace: Namespace, subject: str) -> dict[str, FactVersion]:
    facts = FactVersion.objects.filter(namespace=namespace, subject=subject, status=FactStatus.ACTIVE)
    return {fact.key: fact for fact in facts}


def _check_one_active_per_key(namespace: Namespace, subject: str) -> None:
    doubled = (
        FactVersion.objects.filter(namespace=namespace, subject=subject, status=FactStatus.ACTIVE)
        .values("category", "key")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
    )
    assert not doubled, list(doubled)


def _check_history_replays(namespace: Namespace, subject: str) -> None:
    by_key: dict[tuple[str, str], list[FactVersion]] = {}
    for fact in FactVersion.objects.filter(namespace=namespace, subject=subject).order_by("version"):
        by_key.setdefault((fact.category, fact.key), []).append(fact)
    for key, history in by_key.items():
        assert [f.version for f in history] == list(range(1, len(history) + 1)), key
        for older, newer in itertools.pairwise(history):
            assert older.status != FactStatus.ACTIVE, (key, older.version)
            assert older.retired_at is not None and older.retired_at <= newer.created_at, (key, older.version)
            if older.status == FactStatus.SUPERSEDED:
                # superseded by exactly the next version, at the moment it was written, with an edge
                assert older.retired_at == newer.created_at, (key, older.version)
                assert older.retired_by_pull_id == newer.pull_id, (key, older.version)
                assert FactEdge.objects.filter(
                    source=newer, target=older, edge_type=EdgeType.UPDATES
                ).exists(), (key, newer.version)


def _check_nothing_served_rests_on_a_retired_fact(namespace: Namespace, subject: str) -> None:
    now = timezone.now()
    active = FactVersion.objects.filter(namespace=namespace, subject=subject, status=FactStatus.ACTIVE)
    ids = sorted(active.values_list("pk", flat=True))
    scope = Scope(namespace_id=namespace.pk, subject=subject, at=now)
    served = set(candidates_servable(fact_ids=ids, scope=scope))
    targets: dict[int, list[int]] = {}
    for source, target in FactEdge.objects.filter(
        source__namespace=namespace, source__subject=subject, edge_type=EdgeType.DERIVED_FROM
    ).values_list("source_id", "target_id"):
        targets.setdefault(source, []).append(target)
    status = dict(
        FactVersion.objects.filter(namespace=namespace, subject=subject).values_list("pk", "status")
    )
    for fact_id in served:
        seen, frontier = {fact_id}, [fact_id]
        while frontier:
            for target in targets.get(frontier.pop(), []):
                assert status[target] == FactStatus.ACTIVE, (
                    f"fact {fact_id} is served but rests on fact {target}, which is {status[target]}"
                )
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)


def _step(agent: Agent, namespace: Namespace, subject: str, model: Model, drawn: list[Intent]) -> None:
    specs = [_spec(intent, model) for intent in drawn]
    ops = [op for op, _ in specs]
    expected = _expect(ops, model) if all(valid for _, valid in specs) else None
    before = _snapshot(namespace, subject)

    pull = submit(agent, namespace, *ops, subject=subject)
    approve(pull)
    audit_before = AuditEvent.objects.order_by("-sequence").values_list("sequence", flat=True).first()
    outcome = merge(pull)

    if expected is None:
        # the model saw a conflict: the KPR says so and nothing was written
        assert outcome.merge_status == MergeStatus.CONFLICT, pull.merge_feedback
        assert _snapshot(namespace, subject) == before
        assert list(
            AuditEvent.objects.filter(pull_id=pull.pk, sequence__gt=audit_before).values_list(
                "event_type", flat=True
            )
        ) == ["pull.merge_conflict"]
        model.conflicts += 1
    else:
        assert outcome.merge_status == MergeStatus.MERGED, pull.merge_feedback
        model.merged += 1
        model.active = expected
    # what went stale leaves the model: a stale version is never active again
    active = _active_now(namespace, subject)
    for key in set(model.active) - set(active):
        latest = FactVersion.objects.filter(namespace=namespace, subject=subject, key=key).latest("version")
        assert latest.status == FactStatus.STALE, (key, latest.status)
        del model.active[key]
    assert {key: fact.value for key, fact in active.items()} == model.active

    _check_one_active_per_key(namespace, subject)
    _check_history_replays(namespace, subject)
    _check_nothing_served_rests_on_a_retired_fact(namespace, subject)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(sequence=st.lists(kprs, min_size=1, max_size=8))
def test_any_sequence_of_merges_keeps_the_fact_store_sound(
    proposer: Agent, namespace: Namespace, no_review_handoff: None, no_merge_handoff: None, sequence: list
) -> None:
    subject = f"prop-{next(_subjects)}"
    model = Model()
    for drawn in sequence:
        _step(proposer, namespace, subject, model, drawn)
    event(f"KPRs merged: {model.merged}, conflicted: {model.conflicts}")
    stale = FactVersion.objects.filter(namespace=namespace, subject=subject, status=FactStatus.STALE).count()
    event(f"stale versions: {min(stale, 3)}{'+' if stale >= 3 else ''}")
    checked, broken = audit_chain_verify()
    assert broken is None and checked == AuditEvent.objects.count()
