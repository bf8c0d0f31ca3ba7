from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewer.rules import schema
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view


def test_passes_by_default():
    assert schema.check(pull_view(), op_view()).verdict == Verdict.PASS


def test_rejects_a_category_the_namespace_does_not_keep():
    outcome = schema.check(pull_view(allowed_categories=frozenset({"domain_fact"})), op_view())
    assert outcome.verdict == Verdict.REJECT
    assert "category 'user_profile' is not kept in namespace 'demo' (allowed: domain_fact)" in outcome.reason


@pytest.mark.parametrize(
    ("key", "verdict"), [("home_city", Verdict.PASS), ("HomeCity", Verdict.REJECT), ("家乡", Verdict.REJECT)]
)
def test_key_patterns(key, verdict):
    pull = pull_view(key_patterns=(r"[a-z][a-z0-9_]*",))
    assert schema.check(pull, op_view(key=key)).verdict == verdict


def test_chinese_keys_allowed_by_a_pattern():
    pull = pull_view(key_patterns=(r"[\u4e00-\u9fff]+",))
    assert schema.check(pull, op_view(key="家乡")).verdict == Verdict.PASS


@pytest.mark.parametrize("value", ["", "   ", [], {}])
def test_rejects_empty_values(value):
    outcome = schema.check(pull_view(), op_view(new_value=value))
    assert outcome.verdict == Verdict.REJECT
    assert "send a DELETE" in outcome.reason


def test_rejects_a_fact_whose_validity_has_ended():
    outcome = schema.check(pull_view(), op_view(valid_to=datetime(2000, 1, 1, tzinfo=UTC)))
    assert outcome.verdict == Verdict.REJECT


def test_derived_conclusion_needs_its_basis():
    op = op_view(
        category="derived", key="offer_coffee", action="CREATE", old_value=None, new_value="offer coffee"
    )
    assert schema.check(pull_view(), op).verdict == Verdict.ESCALATE
    op = op_view(
        category="derived", key="offer_coffee", action="CREATE", old_value=None, new_value="offer coffee",
        derived_from=["likes_coffee"],
    )  # fmt: skip
    assert schema.check(pull_view(), op).verdict == Verdict.PASS
