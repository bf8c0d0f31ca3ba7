from __future__ import annotations

import inspect

from reviewer import rules
from reviewer.rules.base import Outcome


def test_every_rule_module_is_registered_once_with_a_name_and_a_docstring():
    modules = {
        name
        for name, module in inspect.getmembers(rules, inspect.ismodule)
        if hasattr(module, "check") and hasattr(module, "NAME")
    }
    assert sorted(rule.__name__.rsplit(".", 1)[1] for rule in rules.RULES) == sorted(modules)
    assert len(set(rules.rule_names())) == len(rules.RULES)
    for rule in rules.RULES:
        assert rule.__doc__ and "rotect" in rule.__doc__, rule.NAME  # says what it protects against
        assert inspect.signature(rule.check).return_annotation in (Outcome, "Outcome")


def test_mandatory_rules_exist():
    assert set(rules.rule_names()) >= rules.MANDATORY
