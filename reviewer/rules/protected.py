"""Protected keys and high-importance facts always need a person.

Protects what hurts most when wrong: health, allergies, identity and finance (by default;
a namespace may set its own key patterns), and any fact whose importance — proposed or
current — reaches the policy's threshold (default 0.9). Changing or contradicting such a fact
is never automatic.
"""

from __future__ import annotations

import re

from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed
from reviewer.rules.text import Pattern, first_match, key_words, patterns, value_text

NAME = "protected"

# Matched against the key as words ("food_allergy" → "food allergy"); allergies also against
# the values: "notes: severe peanut allergy" is as protected as a key named allergy. A key
# often names an entity ("gordon_banks.position_played", "big_yellow_taxi.performer",
# "cosimo_de_medici.spouse"): a stem that is also the start of common names ends where its
# own words end, so the name is no protected topic.
DEFAULT_KEY_PATTERNS: dict[str, tuple[str, ...]] = {
    "allergy": (r"\ballerg", r"\banaphyla", r"过敏"),
    "health": (
        r"\bhealth",
        r"\bmedic(al|ally|ation|ations|ine|ines|aid|are)?\b",
        r"\bdiagnos",
        r"\bdisease",
        r"\billness",
        r"\bblood type",
        r"\bpregnan",
        r"\bdisabilit",
        r"\bmental(ly)?\b",
        r"\bdiet(ary)? restriction",
        r"健康",
        r"疾病",
        r"病史",
        r"药",
        r"诊断",
        r"血型",
        r"怀孕",
    ),
    "identity": (
        r"\bidentity",
        r"\bpassport",
        r"\bssn\b",
        r"\bsocial security",
        r"\bnational id",
        r"\bid (number|card)",
        r"\bdriver'?s? licen[cs]e",
        r"\bbirth ?date",
        r"\bdate of birth",
        r"\bdob\b",
        r"\blegal name",
        r"\bgender",
        r"身份",
        r"护照",
        r"出生",
        r"性别",
    ),
    "finance": (
        r"\bfinanc",
        r"\bbank(ing)?\b",
        r"\bbank ?(account|card|details|statement)s?",
        r"\biban\b",
        r"\bsalary",
        r"\bincome",
        r"\bcredit",
        r"\bdebt",
        r"\bloan",
        r"\btax(es|ation|payers?)?\b",
        r"\binvestment",
        r"银行",
        r"工资",
        r"收入",
        r"贷款",
        r"信用",
        r"债",
        r"税",
    ),
}
_VALUE_TOPICS = ("allergy",)
_DEFAULT = [p for topic, sources in DEFAULT_KEY_PATTERNS.items() for p in patterns(topic, *sources)]
_DEFAULT_VALUES = [p for p in _DEFAULT if p.label in _VALUE_TOPICS]


def _key_patterns(pull: PullView) -> list[Pattern]:
    configured = pull.policy.protected_key_patterns
    if not configured:
        return _DEFAULT
    return [Pattern("protected key", re.compile(source)) for source in configured]


def check(pull: PullView, op: OperationView) -> Outcome:
    hit = first_match(key_words(op.key), _key_patterns(pull))
    if hit:
        return escalate(f"protected key ({hit[0].label}): '{op.key}' always needs a person")
    for value in (op.new_value, op.old_value):
        hit = first_match(value_text(value), _DEFAULT_VALUES)
        if hit:
            return escalate(f"protected content ({hit[0].label}: '{hit[1]}') always needs a person")
    threshold = pull.policy.protected_importance
    if op.importance is not None and op.importance >= threshold:
        return escalate(f"importance {op.importance:.2f} ≥ {threshold:.2f}: a critical fact needs a person")
    if op.current is not None and op.current.importance >= threshold:
        return escalate(
            f"the current value is critical (importance {op.current.importance:.2f} ≥ {threshold:.2f}): "
            "changing it needs a person"
        )
    return passed("not a protected key; importance below the threshold")
