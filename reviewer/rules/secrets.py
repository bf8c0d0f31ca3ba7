"""Secrets and payment data.

Protects users and the store from credentials and card data kept as memories: API keys and
tokens, private keys, passwords and PINs, card numbers (13–19 digits passing the Luhn check),
CVV codes, in the key, the value or the evidence (English and Chinese). Always rejected; the
feedback names the kind of secret, never the secret itself.
"""

from __future__ import annotations

import re

from reviewer.rules.base import OperationView, Outcome, PullView, passed, reject
from reviewer.rules.text import first_match, key_words, normalize, patterns, value_text

NAME = "secrets"

KEY_PATTERNS = patterns(
    "a credential",
    r"\b(password|passwd|pwd|passcode|passphrase|pin|pin code|secret|api key|apikey|access key|access token|"
    r"auth token|token|private key|otp)\b",
    r"密码|口令|验证码|密钥",
) + patterns(
    "payment data",
    r"\b(card number|credit card|debit card|card no|cvv|cvc|cvv2|security code)\b",
    r"卡号|银行卡|信用卡|安全码",
)

# Matched case-sensitively on the raw text: key formats are case-specific.
_TOKEN_SHAPES = [
    re.compile(source)
    for source in (
        r"\bsk-(proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",
        r"\b(sk|pk|rk)_(live|test)_[A-Za-z0-9]{16,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bxox[abpr]-[A-Za-z0-9\-]{10,}",
        r"\bAIza[0-9A-Za-z_\-]{30,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        r"\bmpr_[A-Za-z0-9_\-]{20,}",
        r"\bBearer [A-Za-z0-9._\-]{20,}",
    )
]

TEXT_PATTERNS = patterns(
    "a password",
    r"\b(password|passwd|passcode|pin|pin code)\b( is|:|=)\s*\S+",
    r"(密码|口令|验证码)(是|为|:|：)",
) + patterns(
    "payment data",
    r"\b(cvv|cvc|cvv2|security code)\b",
    r"安全码",
)

_CARD_CANDIDATE = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
# 18-character mainland ID numbers (region + birth date) are identity data: the protected rule.
_CN_ID = re.compile(r"^\d{6}(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\d{3}[\dXx]$")


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        n = int(char)
        if index % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def has_card_number(text: str) -> bool:
    for found in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"[ -]", "", found.group(0))
        # Card numbers start 2–6 (Mastercard, Amex/JCB/Diners, Visa, Mastercard, Discover/UnionPay);
        # phone numbers with a country code (+86…, +1…) do not.
        if (
            13 <= len(digits) <= 19
            and digits[0] in "23456"
            and not _CN_ID.match(digits)
            and luhn_valid(digits)
        ):
            return True
    return False


def _raw(value: object) -> str:
    return value if isinstance(value, str) else value_text(value)


def check(pull: PullView, op: OperationView) -> Outcome:
    hit = first_match(key_words(op.key), KEY_PATTERNS)
    if hit:
        return reject(f"the key '{op.key}' names {hit[0].label}: secrets and payment data are never stored")
    for where, raw in (
        ("newValue", _raw(op.new_value)),
        ("evidence", op.quote),
        ("oldValue", _raw(op.old_value)),
    ):
        if any(shape.search(raw) for shape in _TOKEN_SHAPES):
            return reject(f"{where} contains an API key or token: secrets are never stored")
        text_hit = first_match(normalize(raw), TEXT_PATTERNS)
        if text_hit:
            return reject(f"{where} contains {text_hit[0].label}: secrets and payment data are never stored")
        if has_card_number(raw):
            return reject(f"{where} contains a card number (Luhn-valid): payment data is never stored")
    return passed("no secrets or payment data")
