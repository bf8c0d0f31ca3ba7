"""The reference proposer (docs/architecture.md §8): a conversation in, a knowledge pull request out.

A plain client of the public HTTP API (no Django inside), usable as a library and as
`python -m memorypr.formation`:

1. `extract.extract_facts`: an importance gate (≥ 0.7) and key/value facts, each with the
   verbatim quote of the user turn it comes from (rules for English and Chinese, and an
   OpenAI-compatible model when OPENAI_BASE_URL is set);
2. `diff.diff_facts`: CREATE / UPDATE / DELETE against the subject's current facts, with
   the current value as `oldValue` (the merge's compare-and-swap base), unchanged values
   skipped;
3. `summary.summarize_topics`: with a model, more than five user turns on one topic (by
   sentence-embedding similarity) as one summary fact, its quote verbatim from those turns;
4. `proposer.propose`: post the turns to working memory (so the reviewer can check the
   quotes), submit the KPR with an idempotency key, and wait for its decision.
"""

from memorypr.formation.client import ApiError, Decision, MemoryprClient
from memorypr.formation.diff import Diff, diff_facts
from memorypr.formation.extract import (
    IMPORTANCE_GATE,
    ExtractedFact,
    Extraction,
    Turn,
    extract_facts,
    parse_transcript,
)
from memorypr.formation.proposer import Proposal, propose

__all__ = [
    "IMPORTANCE_GATE",
    "ApiError",
    "Decision",
    "Diff",
    "ExtractedFact",
    "Extraction",
    "MemoryprClient",
    "Proposal",
    "Turn",
    "diff_facts",
    "extract_facts",
    "parse_transcript",
    "propose",
]
