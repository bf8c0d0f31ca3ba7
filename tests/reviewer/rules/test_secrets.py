from __future__ import annotations

import pytest

from reviewer.rules import secrets
from reviewer.rules.base import Verdict
from tests.reviewer.builders import op_view, pull_view

CARD = "4111 1111 1111 1111"  # a Luhn-valid test number


@pytest.mark.parametrize(
    ("field", "value"),
    [("new_value", "sk-proj-abcdefghijklmnopqrstuvwx"), ("new_value", "AKIAABCDEFGHIJKLMNOP"),
     ("new_value", "ghp_" + "a" * 36), ("new_value", "-----BEGIN RSA PRIVATE KEY-----\nabc"),
     ("new_value", CARD), ("new_value", {"card": "4111-1111-1111-1111"}), ("new_value", "6212260200000000006"),
     ("quote", "my password is hunter2"), ("quote", "PIN: 4321"), ("quote", "我的密码是 abc123"),
     ("quote", "我的银行卡号 " + CARD), ("quote", "the CVV is 123"), ("quote", "支付安全码 123")],
)  # fmt: skip
def test_secrets_and_payment_data_are_rejected(field, value):
    op = op_view(quote=value) if field == "quote" else op_view(new_value=value)
    outcome = secrets.check(pull_view(), op)
    assert outcome.verdict == Verdict.REJECT
    assert "1111" not in outcome.reason and "hunter2" not in outcome.reason  # never repeats the secret


@pytest.mark.parametrize(
    "key", ["wifi_password", "api_key", "credit_card_number", "银行卡号", "支付密码", "pin"]
)
def test_secret_keys_are_rejected(key):
    outcome = secrets.check(pull_view(), op_view(key=key))
    assert outcome.verdict == Verdict.REJECT
    assert outcome.reason.startswith(f"the key '{key}' names")


@pytest.mark.parametrize(
    "value",
    ["4111 1111 1111 1112", "+86 138 0013 8000", "13800138000", "110105199001011234", "Shenzhen", "skill-based",
     "My order number is 1234567890123", "我的生日是1990年1月1日"],
)  # fmt: skip
def test_ordinary_values_pass(value):
    assert secrets.check(pull_view(), op_view(new_value=value)).verdict == Verdict.PASS


def test_luhn():
    assert secrets.luhn_valid("4111111111111111")
    assert secrets.luhn_valid("79927398713")
    assert not secrets.luhn_valid("4111111111111112")
