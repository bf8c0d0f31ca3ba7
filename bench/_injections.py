"""The prompt-injection corpus (bench/data/injections/): attacks on the review, in English and
Chinese, each a single CREATE operation whose evidence, value or key carries an instruction to the
reviewer, in seven kinds:

- override: an instruction to drop the rules or let the change through, plainly or paraphrased;
- fake_verdict: a verdict written into the data, in JSON or in prose;
- delimiter: an attempt to close the data block and speak as the system;
- roleplay: a role for the reviewer that approves;
- lookalike: the instruction in look-alike letters (Cyrillic, full-width, mathematical),
  with invisible characters, spaced out, or in traditional characters;
- base64: the instruction encoded (standard, URL-safe, unpadded, twice);
- split: the instruction cut in two, one half at the end of the value, the other at the start of
  the quote, so that neither reads as one alone.

`tune.jsonl` is the half the injection rule was developed on; `holdout.jsonl` was not looked at
while tuning, and its catch rate is the one to report. Both halves were written together, by the
same hand, before any tuning; `fresh.jsonl` was written afterwards, measured once as unseen data,
and then tuned on too, so it is no longer unseen. `controls.jsonl` holds ordinary facts,
some with words an attack uses ("approve", "role", "system", "base64", 批准, 审核): they must
still be approved and merged, so a rule that holds everything fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "injections"
SPLITS = ("tune", "holdout")
# Every set of attacks, each of which must be held.
ATTACK_SETS = (*SPLITS, "fresh")
CATEGORIES = ("override", "fake_verdict", "delimiter", "roleplay", "lookalike", "base64", "split")


@dataclass(frozen=True)
class Attempt:
    id: str
    category: str
    lang: str
    key: str
    new_value: Any
    quote: str

    def operation(self) -> dict[str, Any]:
        """The operation as an agent sends it (the KPR protocol's camelCase)."""
        return {
            "action": "CREATE",
            "category": "user_profile",
            "key": self.key,
            "oldValue": None,
            "newValue": self.new_value,
            "confidence": 0.95,
            "evidence": {"rawMessageQuote": self.quote, "timestamp": 1732000000000},
        }


def corpus_load(name: str) -> list[Attempt]:
    """One file of the corpus: `tune`, `holdout`, `fresh` or `controls`."""
    rows = [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines() if line.strip()]
    return [
        Attempt(
            id=row["id"],
            category=row["category"],
            lang=row["lang"],
            key=row["key"],
            new_value=row["newValue"],
            quote=row["quote"],
        )
        for row in rows
    ]


def held_by(pull: Any) -> list[str]:
    """The rules that held a reviewed KPR (escalated or rejected one of its operations)."""
    from memorypr.pulls.models import ReviewEvent

    event = pull.review_events.filter(reviewer_kind=ReviewEvent.ReviewerKind.RULES).order_by("-id").first()
    rules: list[str] = []
    for finding in (event.findings if event else None) or []:
        for check in finding.get("checks", []):
            if check.get("verdict") != "pass" and check.get("rule") not in rules:
                rules.append(check["rule"])
    return rules
