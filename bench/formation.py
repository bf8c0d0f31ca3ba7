"""Formation on real conversation: what the reference proposer finds, what it should not, and
whether a restatement lands on the key it restates.

Persona facts (Synthetic-Persona-Chat, `test` split by default; MEMORYPR_BENCH_SPLIT=valid
to develop on the other split). User 1 is the user, User 2 the assistant. Each conversation
goes through `extract_facts` as it is, and is scored against User 1's listed persona facts:

- a persona fact is *stated* when a User 1 sentence that is not a question carries at least
  60% of its content words (stemmed, stop words out);
- it is *covered* when a fact through the gate quotes such a sentence and its key and value
  carry at least half of the persona fact's content words;
- *noise*: a fact whose value is empty or leans on a pronoun ("it", "their energy", 它,
  这个), or whose quote is in no user turn.

Key stability: `data/formation_paraphrases.tsv`, pairs of a first statement and a later
restatement or change (English and Chinese). The first is proposed into an empty memory
(its CREATEs become the current facts), the second is diffed against it: the pair scores
when the second lands on the first one's key (as an operation or as an unchanged value) and
when it does so with the expected action (NOOP: nothing to change and no new key; UPDATE
with the first value as `oldValue`; DELETE of it). Key resolution by embedding similarity
uses `memorypr.vectors.embedding`.

`--quick`: the first 60 conversations. Ten random extractions (fixed seed) are shown as
they are.
"""

from __future__ import annotations

import csv
import inspect
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorypr.formation import Turn, diff_facts, extract_facts
from memorypr.formation.text import split_sentences

DATA = Path(os.environ.get("MEMORYPR_PERSONA_DATA", "")) if os.environ.get("MEMORYPR_PERSONA_DATA") else None
PARAPHRASES = Path(__file__).resolve().parent / "data" / "formation_paraphrases.tsv"
QUICK_CONVERSATIONS = 60
STATED_SHARE = 0.6
COVERED_SHARE = 0.5
SAMPLES = 10

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "as",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "i",
        "i'm",
        "im",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "our",
        "you",
        "your",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "he",
        "she",
        "his",
        "her",
        "him",
        "there",
        "here",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "not",
        "no",
        "so",
        "very",
        "really",
        "just",
        "also",
        "too",
        "all",
        "any",
        "some",
        "much",
        "many",
        "more",
        "most",
        "like",
        "likes",
        "love",
        "loves",
        "enjoy",
        "enjoys",
        "lot",
        "lots",
        "get",
        "got",
        "go",
        "going",
        "can",
        "could",
        "would",
        "will",
        "should",
        "about",
        "into",
        "than",
        "then",
        "when",
        "what",
        "who",
        "how",
        "which",
        "one",
        "own",
        "s",
        "t",
        "m",
        "ve",
        "ll",
        "d",
        "re",
    ]
)
_PRONOUN_VALUE = re.compile(
    r"^(?:(?:likes|loves|enjoys|dislikes|does not like|no longer likes)\s+)?"
    r"(?:it|them|that|this|these|those|him|her|us|me|you|everything|something|nothing|"
    r"(?:their|its|his|her|your|our)\b.*|the way\b.*|"
    r".*\b(?:it|them|they|their)\b.*)$",
    re.IGNORECASE,
)
_QUOTED_TITLE = re.compile(r'"[^"]+"|“[^”]+”')
_ZH_PRONOUN_VALUE = re.compile(
    r"^(?:喜欢|不再喜欢)?(?:它|它们|他|她|他们|她们|这|那|这个|那个|这些|那些|这样|那样)"
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word.rstrip("e")


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower().replace("'", "")) if w not in _STOP}


def is_question(sentence: str) -> bool:
    return sentence.rstrip(" \"'”’)").endswith(("?", "？"))


def noisy_value(value: Any) -> bool:
    """An empty value, or one that means nothing without the turn it came from."""
    if value is None:
        return False  # a "no longer true" carries no value by design
    text = str(value).strip()
    if not text:
        return True
    # A quoted title is a name, whatever its words: 'likes "Paint It Black"' leans on nothing.
    text = _QUOTED_TITLE.sub("TITLE", text)
    return bool(_PRONOUN_VALUE.match(text) or _ZH_PRONOUN_VALUE.match(text))


@dataclass(frozen=True)
class Conversation:
    personas: list[str]
    turns: list[Turn]


def _data_dir() -> Path:
    if DATA is not None:
        return DATA
    here = Path(__file__).resolve().parent.parent
    for base in (here.parent / "shared", here.parent.parent / "shared", Path("/work/shared")):
        candidate = base / "data" / "synthetic-persona-chat"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("synthetic-persona-chat data not found (set MEMORYPR_PERSONA_DATA)")


def load_conversations(split: str) -> list[Conversation]:
    path = _data_dir() / f"Synthetic-Persona-Chat_{split}.csv"
    out = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            turns = []
            for line in row["Best Generated Conversation"].splitlines():
                speaker, _, content = line.partition(":")
                if speaker.strip() == "User 1":
                    turns.append(Turn("user", content.strip()))
                elif speaker.strip() == "User 2":
                    turns.append(Turn("assistant", content.strip()))
            personas = [p.strip() for p in row["user 1 personas"].splitlines() if p.strip()]
            out.append(Conversation(personas, turns))
    return out


def _share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(whole) if whole else 0.0


def _covers(fact: Any, words: set[str], stating: list[str]) -> bool:
    if not any(fact.quote in sentence or sentence in fact.quote for sentence in stating):
        return False
    said = content_words(f"{fact.key.replace('_', ' ').replace('.', ' ')} {fact.value or ''}")
    return _share(said, words) >= COVERED_SHARE


def score_persona(conversations: Sequence[Conversation]) -> dict[str, Any]:
    stated = covered = facts = noisy = non_user = 0
    extractions: list[tuple[str, str, Any]] = []
    for conversation in conversations:
        user_sentences = [
            sentence
            for turn in conversation.turns
            if turn.role == "user"
            for sentence in split_sentences(turn.content)
            if not is_question(sentence)
        ]
        user_text = [turn.content for turn in conversation.turns if turn.role == "user"]
        extracted = extract_facts(conversation.turns).facts
        facts += len(extracted)
        for fact in extracted:
            extractions.append((fact.quote, fact.key, fact.value))
            if noisy_value(fact.value):
                noisy += 1
            if not any(fact.quote in text for text in user_text):
                non_user += 1
        for persona in conversation.personas:
            words = content_words(persona)
            if not words:
                continue
            stating = [s for s in user_sentences if _share(content_words(s), words) >= STATED_SHARE]
            if not stating:
                continue
            stated += 1
            if any(_covers(fact, words, stating) for fact in extracted):
                covered += 1
    rng = random.Random(10)
    samples = rng.sample(extractions, min(SAMPLES, len(extractions)))
    return {
        "conversations": len(conversations),
        "stated_persona_facts": stated,
        "covered": covered,
        "recall": round(covered / stated, 3) if stated else None,
        "facts": facts,
        "noisy_values": noisy,
        "non_user_quotes": non_user,
        "noise_share": round((noisy + non_user) / facts, 3) if facts else 0.0,
        "samples": [f"{quote!r} → {key} = {value!r}" for quote, key, value in samples],
    }


# --- key stability ------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    lang: str
    first: str
    second: str
    action: str


def load_pairs(path: Path = PARAPHRASES) -> list[Pair]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        lang, first, second, action = line.split("\t")
        pairs.append(Pair(lang, first, second, action))
    return pairs


Embedder = Callable[[list[str]], list[list[float]]]


def _diff(extracted: Any, current: list[dict[str, Any]], embed: Embedder | None) -> Any:
    # The embedder is passed only where the diff takes one, so the same file measures older code.
    if embed is not None and "embed" in inspect.signature(diff_facts).parameters:
        return diff_facts(extracted=extracted, current=current, timestamp_ms=1, embed=embed)  # type: ignore[call-arg]
    return diff_facts(extracted=extracted, current=current, timestamp_ms=1)


def score_pair(pair: Pair, *, embed: Embedder | None) -> tuple[bool, bool, str]:
    """(lands on the first key, with the right action, what happened)."""
    first = _diff(extract_facts([Turn("user", pair.first)]).facts, [], embed)
    current = [
        {"category": op["category"], "key": op["key"], "value": op["newValue"], "status": "active"}
        for op in first.operations
        if op["action"] == "CREATE"
    ]
    if not current:
        return False, False, "the first statement gave no fact"
    first_keys = {row["key"]: row["value"] for row in current}
    second = _diff(extract_facts([Turn("user", pair.second)]).facts, current, embed)
    on_key = [op for op in second.operations if op["key"] in first_keys]
    unchanged = [s for s in second.skipped if s.fact.key in first_keys]
    new_keys = [op["key"] for op in second.operations if op["action"] == "CREATE"]
    seen = (
        "; ".join(
            [f"{op['action']} {op['key']}={op['newValue']!r}" for op in second.operations]
            + [f"skip {s.fact.key}: {s.reason}" for s in second.skipped]
        )
        or "nothing"
    )
    key_ok = bool(on_key or unchanged)
    if pair.action == "NOOP":
        action_ok = not on_key and bool(unchanged) and not new_keys
    else:
        action_ok = (
            any(op["action"] == pair.action and op["oldValue"] == first_keys[op["key"]] for op in on_key)
            and not new_keys
        )
    return key_ok, action_ok, seen


def score_stability(pairs: Sequence[Pair], *, embed: Embedder | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in sorted({p.lang for p in pairs}):
        chosen = [p for p in pairs if p.lang == lang]
        results = [(p, *score_pair(p, embed=embed)) for p in chosen]
        key_ok = sum(1 for _, k, _, _ in results if k)
        action_ok = sum(1 for _, _, a, _ in results if a)
        out[lang] = {
            "pairs": len(chosen),
            "key_stability": round(key_ok / len(chosen), 3),
            "right_action": round(action_ok / len(chosen), 3),
            "misses": [f"{p.first} / {p.second} ({p.action}): {seen}" for p, _, a, seen in results if not a][
                :15
            ],
        }
    return out


def _embedder() -> Embedder | None:
    try:
        from memorypr.vectors.embedding import embed_texts
    except ImportError:
        return None

    def embed(texts: list[str]) -> list[list[float]]:
        return embed_texts(texts)

    return embed


def run(options: dict[str, Any]) -> dict[str, Any]:
    split = str(options.get("split") or os.environ.get("MEMORYPR_BENCH_SPLIT", "test"))
    conversations = load_conversations(split)
    if options.get("quick"):
        conversations = conversations[:QUICK_CONVERSATIONS]
    started = time.perf_counter()
    persona = score_persona(conversations)
    persona["seconds"] = round(time.perf_counter() - started, 2)
    stability = score_stability(load_pairs(), embed=_embedder())
    return {"split": split, "persona": persona, "key_stability": stability}
