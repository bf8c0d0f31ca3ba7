"""Formation, step one: which user statements deserve long-term memory, and what they say.

Rules first (deterministic, English and Chinese first-person statements, templated world
facts); a model behind an OpenAI-compatible endpoint adds what the rules do not know when
one is configured. Every fact keeps the sentence it comes from, verbatim, as its evidence,
and passes the importance gate (≥ 0.7) or lands in `dropped` with the reasons why.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from memorypr.common.text import CJK_CHAR, KEY_RE
from memorypr.formation import gate, patterns, personal, quotes
from memorypr.formation.gate import IMPORTANCE_GATE
from memorypr.formation.llm import LlmExtractor, LlmFact, LlmUnavailable
from memorypr.formation.patterns import Found, Polarity
from memorypr.formation.text import normalize, slug, split_sentences

__all__ = ["IMPORTANCE_GATE", "ExtractedFact", "Extraction", "Turn", "extract_facts", "parse_transcript"]

logger = logging.getLogger(__name__)

RULE_CONFIDENCE = 0.9
CATEGORIES = frozenset({patterns.USER_PROFILE, patterns.SYSTEM_PREFERENCE, patterns.DOMAIN_FACT})


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    timestamp_ms: int | None = None


@dataclass(frozen=True)
class ExtractedFact:
    """One statement as a memory candidate: (category, key) = value, with its evidence."""

    category: str
    key: str
    value: str | None
    quote: str
    importance: float
    confidence: float
    polarity: Polarity = "set"
    entity: str | None = None
    relation: str = ""
    timestamp_ms: int | None = None
    reasons: tuple[str, ...] = ()
    source: str = "rules"

    @property
    def passes(self) -> bool:
        return self.importance >= IMPORTANCE_GATE


@dataclass
class Extraction:
    facts: list[ExtractedFact] = field(default_factory=list)  # through the gate, in conversation order
    dropped: list[ExtractedFact] = field(default_factory=list)  # below it, with reasons
    llm_error: str | None = None


def _rule_facts(
    sentence: str, *, following: str, context: str, timestamp_ms: int | None
) -> list[ExtractedFact]:
    zh = bool(CJK_CHAR.search(sentence))
    # The rules read the sentence with each quoted title as one word (the same offsets).
    read = sentence if zh else quotes.quoted_hidden(sentence)
    templated = patterns.template_fact(read)
    found: list[Found] = [templated] if templated else []
    if templated is None:
        rules = patterns.ZH_RULES if zh else patterns.EN_RULES
        for rule in rules:
            for match in rule.regex.finditer(read):
                item = rule.build(match)
                if item is not None and (not zh or patterns.zh_plausible(item, sentence)):
                    found.append(item)
        structural = personal.read_zh(sentence) if zh else personal.read_en(read, context=context)
        ruled = {item.key for item in found}
        # The older rules read home, allergies, name and employer; where both read a key, theirs stands.
        found.extend(item for item in structural if item.key not in ruled)
        if zh:
            found = [item for item in found if patterns.zh_plausible(item, sentence)]
    out: list[ExtractedFact] = []
    seen: set[tuple[str, str, str | None]] = set()
    for item in found:
        ident = (item.key, item.polarity, item.value)
        if ident in seen:
            continue
        seen.add(ident)
        scored = gate.score(base=item.base, sentence=sentence, following=following, spans=item.spans)
        out.append(
            ExtractedFact(
                category=item.category,
                key=item.key,
                value=_value_shown(item.value, sentence=sentence),
                quote=sentence,
                importance=scored.importance,
                confidence=RULE_CONFIDENCE,
                polarity=item.polarity,
                entity=item.entity,
                relation=item.relation or item.key,
                timestamp_ms=timestamp_ms,
                reasons=scored.reasons,
            )
        )
    return out


def _value_shown(value: str | None, *, sentence: str) -> str | None:
    return quotes.value_shown(value, sentence=sentence) if value else value


def user_turns(turns: Iterable[Turn]) -> list[Turn]:
    return [turn for turn in turns if turn.role == "user" and turn.content.strip()]


def model_fact(
    item: LlmFact, users: Sequence[Turn], *, source: str = "llm", elsewhere: str = "any user turn"
) -> ExtractedFact:
    """A model's fact held to the rules' bar: its quote verbatim in one of `users` (else
    importance 0, "the quote is not in {elsewhere}"), a value that means something on its own,
    a valid key, and the importance gate reading the quote."""
    home = next(
        (t for t in users if normalize(item.quote) and normalize(item.quote) in normalize(t.content)),
        None,
    )
    category = item.category if item.category in CATEGORIES else patterns.USER_PROFILE
    key = item.key if KEY_RE.match(item.key) and len(item.key) <= 200 else slug(item.key)
    reasons: tuple[str, ...] = ()
    importance = item.importance
    if home is None:
        importance, reasons = 0.0, (f"the quote is not in {elsewhere}",)
    elif item.value is not None and personal.leans_on_context(item.value):
        # The rules' bar for a value holds for the model's too: "it", "their energy" mean nothing later.
        importance, reasons = 0.0, ("the value is empty or leans on a pronoun",)
    else:
        scored = gate.score(base=item.importance, sentence=item.quote)
        importance, reasons = scored.importance, scored.reasons
    return ExtractedFact(
        category=category,
        key=key,
        value=item.value,
        quote=item.quote,
        importance=importance,
        confidence=item.confidence,
        polarity="unset" if item.polarity == "unset" else "set",
        relation=key,
        timestamp_ms=home.timestamp_ms if home else None,
        reasons=reasons,
        source=source,
    )


def _llm_facts(llm: LlmExtractor, turns: Sequence[Turn], *, known_keys: Sequence[str]) -> list[ExtractedFact]:
    users = user_turns(turns)
    return [model_fact(item, users) for item in llm.extract(turns, known_keys=known_keys)]


def extract_facts(
    turns: Sequence[Turn],
    *,
    llm: LlmExtractor | None = None,
    known_keys: Sequence[str] = (),
) -> Extraction:
    """Facts from the user turns of a conversation, gated by importance.

    With `llm`, the model's facts are added for keys the rules did not find; the rules'
    reading wins where both have one (it is deterministic and tested). A model that fails
    leaves the rules' facts and records why in `llm_error`.
    """
    candidates: list[ExtractedFact] = []
    previous = ""
    for turn in turns:
        if turn.role == "user" and turn.content.strip():
            sentences = split_sentences(turn.content)
            for index, sentence in enumerate(sentences):
                following = sentences[index + 1] if index + 1 < len(sentences) else ""
                # A pronoun may stand for what the previous turn named (the other speaker's, mostly).
                context = sentences[index - 1] if index else previous
                candidates.extend(
                    _rule_facts(
                        sentence, following=following, context=context, timestamp_ms=turn.timestamp_ms
                    )
                )
        previous = turn.content
    extraction = Extraction()
    if llm is not None:
        try:
            ruled = {(fact.category, fact.key) for fact in candidates}
            keys = [*known_keys, *(key for _, key in ruled)]
            candidates.extend(
                fact
                for fact in _llm_facts(llm, turns, known_keys=keys)
                if (fact.category, fact.key) not in ruled
            )
        except LlmUnavailable as exc:
            logger.warning("formation model unavailable, rules only: %s", exc)
            extraction.llm_error = str(exc)
    for fact in candidates:
        (extraction.facts if fact.passes else extraction.dropped).append(fact)
    return extraction


# --- transcripts ----------------------------------------------------------------------------

_ROLE_PREFIX = re.compile(
    r"^\s*(?P<role>user|assistant|system|tool|用户|助手|系统)\s*[:：]\s?(?P<content>.*)$", re.IGNORECASE
)
_ROLE_NAMES = {"用户": "user", "助手": "assistant", "系统": "system"}


def parse_transcript(text: str, *, timestamp_ms: int | None = None) -> list[Turn]:
    """Turns from a plain-text transcript: one turn per non-empty line.

    A line may start with its role (`user:`, `assistant:`, `用户：`…); a line without one is
    a user turn.
    """
    turns = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _ROLE_PREFIX.match(line)
        if match:
            role = match.group("role").lower()
            turns.append(Turn(_ROLE_NAMES.get(role, role), match.group("content").strip(), timestamp_ms))
        else:
            turns.append(Turn("user", line.strip(), timestamp_ms))
    return [turn for turn in turns if turn.content]


def with_timestamp(facts: Iterable[ExtractedFact], timestamp_ms: int) -> list[ExtractedFact]:
    """Facts whose turn had no time get `timestamp_ms` (evidence needs one moment or another)."""
    return [
        fact if fact.timestamp_ms is not None else replace(fact, timestamp_ms=timestamp_ms) for fact in facts
    ]
