"""The clause of an evidence quote that carries an operation's fact.

A quote is often a whole turn: "It was an awesome time! We explored nature… Next year we'll go
again." The speech rules (question, hypothetical, joke, future plan, reported speech) must
judge the part that states the fact, and the words that govern it, not every sentence around
it. The quote is cut into sentences and clauses (commas, semicolons, colons and dashes split
clauses, in English and Chinese); each clause is scored against the operation's key and value
by lexical overlap (word stems; character bigrams for CJK text) plus the cosine of their
sentence embeddings (`memorypr.vectors.embedding`). The best clause is the aligned one. When
nothing aligns (no shared word and a low cosine), the whole quote is judged, as before.

Scopes, for the rules: the clause with the clauses before it in its sentence (the lead: "If I
won, | I'd buy a boat", "My friend says | I…"); the tail adds the rest of the sentence and the
next sentence, for cues that follow a statement ("…, just kidding", "…, according to my mom").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from reviewer.rules.text import key_words, normalize, value_text

# A sentence ends at . ! ? … (and their full-width forms) followed by a space or the end, or
# at a line break. Inside a sentence, clauses end at , ; : and dashes.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?…]+(?=\s|$)|[。！？!?…]+|\n|$)")
# A clause also ends before a coordinated main clause: "…skills and I walk dogs", "…, but my…".
_CLAUSE = re.compile(
    r"[^,;:，；：—]*?(?:[,;:，；：—]+|\s+-\s+|(?=\s(?:and|but|so|yet)\s+(?:i|i'm|we|my)\b)|$)", re.I
)
# A clause that opens with a coordinator after a comma starts a new main clause: what comes
# before it in the sentence does not govern it ("I want to be a lawyer, | but I work on my
# family's farm"). Without the comma, an opening "I wish" or "if" still governs it ("I wish I
# could cook and I could fish").
_COORDINATOR = re.compile(r"^\W*(and|but|so|yet|or|然后|但是|不过|可是|而且|所以)(?!\w)", re.I)
_PUNCTUATED = re.compile(r"[,;:，；：—-]\s*$")
_CJK_FUNCTION = frozenset("我你他她它的了是在很也都就吗呢吧啊和与")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u9fff]+")
_STOP = frozenset(
    ["a", "an", "the", "i", "i'm", "im", "my", "me", "we", "our", "you", "your", "is", "are", "am", "was", "were", "be", "been", "to", "of", "in", "on", "at", "for", "and", "or", "but", "with", "that", "this", "it", "its", "it's", "have", "has", "had", "do", "does", "did", "not", "so", "very", "really", "just", "also", "too", "from", "as", "by", "about", "me", "note"]
)  # fmt: skip
# Below this, a clause that shares no word with the fact is not taken as its carrier.
MIN_COSINE = 0.35
SEMANTIC_WEIGHT = 0.5


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "er", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> set[str]:
    """Content word stems; for CJK text, character bigrams and content characters (素食 ~ 吃素)."""
    low = normalize(text)
    found = {stem(w) for w in _WORD.findall(low) if w not in _STOP}
    for run in _CJK.findall(low):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
        found.update(ch for ch in run if ch not in _CJK_FUNCTION)
    return found


@dataclass(frozen=True)
class Clause:
    text: str
    start: int
    end: int
    sentence: int


@dataclass(frozen=True)
class Alignment:
    quote: str
    clauses: tuple[Clause, ...]
    # The aligned clause's position in `clauses`, None when no clause carries the fact.
    index: int | None
    lexical: float = 0.0
    cosine: float = 0.0

    @property
    def clause(self) -> Clause | None:
        return self.clauses[self.index] if self.index is not None else None

    @property
    def whole(self) -> bool:
        """The quote is judged whole: one clause only, or none that carries the fact."""
        return self.index is None or len(self.clauses) == 1

    def lead(self) -> str:
        """The aligned clause and the clauses before it in its sentence: the words that govern it."""
        if self.whole:
            return self.quote
        clause = self.clauses[self.index]  # type: ignore[index]
        first = clause
        for c in reversed(self.clauses[: self.index]):
            if c.sentence != clause.sentence:
                break
            if _COORDINATOR.match(first.text) and _PUNCTUATED.search(self.quote[c.start : c.end]):
                break
            first = c
        return self.quote[first.start : clause.end].strip().rstrip(",;:，；：—-").strip()

    def tail(self) -> str:
        """The rest of the aligned clause's sentence and the sentence after it."""
        if self.whole:
            return ""
        clause = self.clauses[self.index]  # type: ignore[index]
        after = [
            c
            for c in self.clauses
            if (c.sentence == clause.sentence and c.start >= clause.end) or c.sentence == clause.sentence + 1
        ]
        return self.quote[after[0].start : after[-1].end] if after else ""

    def own(self) -> str:
        """The aligned clause alone (the whole quote when there is none)."""
        return self.quote if self.whole else self.clauses[self.index].text  # type: ignore[index]


def clauses_split(quote: str) -> tuple[Clause, ...]:
    found: list[Clause] = []
    sentence = 0
    for s in _SENTENCE.finditer(quote):
        if not s.group(0).strip():
            continue
        for c in _CLAUSE.finditer(s.group(0)):
            text = c.group(0)
            if not text.strip(" ,;:，；：—-\n"):
                continue
            start = s.start() + c.start() + (len(text) - len(text.lstrip()))
            end = s.start() + c.end()
            shown = quote[start:end].strip().rstrip(",;:，；：—-").strip()
            found.append(Clause(text=shown, start=start, end=end, sentence=sentence))
        sentence += 1
    return tuple(found)


def fact_words(*, key: str, value: Any) -> tuple[str, str]:
    """The operation's fact as words: its key ("food_allergy" → "food allergy") and its value."""
    return key_words(key), value_text(value)


def _cosines(target: str, texts: list[str]) -> list[float]:
    from memorypr.vectors.embedding import embed_texts

    vectors = embed_texts([target, *texts])
    head = vectors[0]
    return [
        sum(a * b for a, b in zip(head, v, strict=True)) / (_norm(head) * _norm(v) or 1.0)
        for v in vectors[1:]
    ]


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


@lru_cache(maxsize=2048)
def clause_align(*, quote: str, key: str, value: str) -> Alignment:
    """Align a fact (key words, value words) with the clause of the quote that states it.

    Lexical overlap counts the value's words twice: "home city" is in many clauses, "Shenzhen" in one.
    """
    clauses = clauses_split(quote)
    if len(clauses) <= 1:
        return Alignment(quote=quote, clauses=clauses, index=0 if clauses else None, lexical=1.0, cosine=1.0)
    key_tokens, value_tokens = tokens(key), tokens(value)
    whole = len(key_tokens) + 2 * len(value_tokens) or 1
    lexical = []
    for c in clauses:
        found = tokens(c.text)
        lexical.append((len(key_tokens & found) + 2 * len(value_tokens & found)) / whole)
    cosines = _cosines(f"{key} {value}".strip(), [c.text for c in clauses])
    scores = [lex + SEMANTIC_WEIGHT * cos for lex, cos in zip(lexical, cosines, strict=True)]
    best = max(range(len(clauses)), key=scores.__getitem__)
    if lexical[best] == 0 and cosines[best] < MIN_COSINE:
        return Alignment(quote=quote, clauses=clauses, index=None, lexical=0.0, cosine=cosines[best])
    return Alignment(quote=quote, clauses=clauses, index=best, lexical=lexical[best], cosine=cosines[best])


def part_of_fact(cue: str, fact: str) -> bool:
    """The cue is stated by the fact itself ("wants to become a pilot", key `father`): it does
    not modify the fact, it is what the fact says."""
    cue_n, fact_n = normalize(cue).strip(), normalize(fact)
    if cue_n and re.search(rf"(?<![a-z0-9]){re.escape(cue_n)}(?![a-z0-9])", fact_n):
        return True
    words = [stem(w) for w in _WORD.findall(cue_n) if w not in _STOP and len(w) > 2]
    fact_words = {stem(w) for w in _WORD.findall(fact_n)}
    return bool(words) and all(w in fact_words for w in words)
