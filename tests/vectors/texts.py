"""Texts the encoders must agree on: facts, mixed scripts, empty, JSON, past the token limit."""

from __future__ import annotations

AGREEMENT_TEXTS = [
    "likes coffee: likes a strong coffee in the morning",
    "home city: 上个月我举家搬迁到了深圳",
    "pet: has a cat called Miso",
    "",
    '{"allergies": ["peanuts", "shellfish"], "severity": "high"}',
    # longer than the model's 256 tokens: every encoder must truncate at the same place
    "travel plan: " + " ".join(f"visit city number {i} by train" for i in range(120)),
    "x",
]
