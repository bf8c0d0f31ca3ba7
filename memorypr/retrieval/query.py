"""Turning a free-text query into full-text and exact-match terms.

Documents are indexed with memorypr.vectors.text.search_text (the `simple` configuration,
application-made tokens), so queries are tokenised by the same function. Two query-side
refinements: a small stop list (the `simple` configuration keeps every word, and "the"
would match every fact), and single CJK characters are dropped when the segmenter found
real words, since single characters match almost everything.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from memorypr.common.text import CJK_CHAR
from memorypr.vectors.text import search_tokens

MAX_QUERY_TOKENS = 32
MAX_KEY_PART_WORDS = 6
MAX_KEY_TERMS = 200
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

_STOP_TEXT = """a an and are as at be by can could did do does for from had has have he her his how i if in
    is it its me my of on or our she so that the their them they this to was we were what when where
    which who whom why will with would you your user users like likes 的 了 吗 呢 是 我 你 他 她 在 和 有 吧 啊
    什么 哪里 哪儿 怎么 用户"""
# "like" and "likes" say how every preference is stored ("likes jazz", "does not like cats"): as
# query words, "does the user like jazz?" ranked every dislike by its text before any fact about jazz.
# What an apostrophe leaves of a contraction or possessive ("user's", "what's", "doesn't"): words
# split at the apostrophe, so "s" would join the all-words phase of every possessive question
# and match no fact whose text says it without one ("favorite food: pizza").
_CONTRACTION_PARTS = """s t d m ll re ve aren couldn didn doesn hadn hasn haven isn shouldn wasn weren
    wouldn"""
STOP_WORDS = frozenset(_STOP_TEXT.split()) | frozenset(_CONTRACTION_PARTS.split())


def query_tokens(text: str) -> list[str]:
    tokens = [t for t in dict.fromkeys(search_tokens(text)) if t not in STOP_WORDS]
    if any(len(t) > 1 and CJK_CHAR.search(t) for t in tokens):
        tokens = [t for t in tokens if not (len(t) == 1 and CJK_CHAR.search(t))]
    return tokens[:MAX_QUERY_TOKENS]


def tsquery_text(tokens: list[str], *, operator: str = "|") -> str:
    """An OR (or AND) of quoted lexemes for to_tsquery('simple', ...); quoting keeps operators inert."""
    quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in tokens]
    return f" {operator} ".join(quoted)


def _words(text: str) -> list[str]:
    # NFKC and case folding, as keys are made ('Rogério', 'ＡＢＣ' and 'Straße' match their keys).
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def key_part_terms(text: str) -> list[str]:
    """Key parts a query may name: runs of its words joined by '_', and its Chinese words.

    Keys are slugs with dot-separated parts ('home_city', 'japan.official_language',
    'allergy.花生'), so "What is the official language of Japan?" names the parts
    'official_language' and 'japan'. Runs go up to MAX_KEY_PART_WORDS words, for entity
    names such as 'University of California, Berkeley'. Chinese has no spaces, so the
    segmenter's words stand for the runs (日本的官方语言 names 日本 and 官方语言).
    """
    return _key_parts(text, _words(text))


def _key_parts(text: str, words: list[str]) -> list[str]:
    terms = [
        "_".join(words[start : start + size])
        for size in range(1, MAX_KEY_PART_WORDS + 1)
        for start in range(len(words) - size + 1)
    ]
    terms.extend(t for t in search_tokens(text) if len(t) > 1 and CJK_CHAR.search(t))
    return [t for t in dict.fromkeys(terms) if t not in STOP_WORDS][:MAX_KEY_TERMS]


def key_terms(text: str) -> list[str]:
    """Whole keys a query may name: its key parts, the query itself, and '.', '-' and ''
    joins of up to three words for keys written otherwise ('home city' → 'homecity')."""
    return _whole_keys(text, _words(text), key_part_terms(text))


def _only_stop_words(words: list[str]) -> bool:
    return all(word in STOP_WORDS for word in words)


def _whole_keys(text: str, words: list[str], parts: list[str]) -> list[str]:
    """The whole keys of `key_terms`. A run of stop words alone ("what_is", "the_user") names no
    key a fact holds, and each is one more lookup of the key index for every retrieval: a
    question such as "what is the user's bank?" made 43 keys, 30 of them of stop words only."""
    terms = [text.strip().lower(), *(part for part in parts if not _only_stop_words(part.split("_")))]
    for size in (1, 2, 3):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if not _only_stop_words(run):
                terms.extend(sep.join(run) for sep in (".", "-", ""))
    return [t for t in dict.fromkeys(terms) if t and t not in STOP_WORDS][: 2 * MAX_KEY_TERMS]


def name_inside(shorter: str, longer: str) -> bool:
    """Whether a key name is a proper part of a longer one: whole words ('windows_server' in
    'windows_server_2008', not 'japan' in 'japanese'), or characters for Chinese (日本 in 日本国)."""
    if shorter == longer:
        return False
    return f"_{shorter}_" in f"_{longer}_" or (bool(CJK_CHAR.search(shorter)) and shorter in longer)


class QueryTerms(NamedTuple):
    """What retrieval reads of a query's text: its full-text tokens, the key parts and the whole
    keys it may name (`query_tokens`, `key_part_terms`, `key_terms`)."""

    tokens: tuple[str, ...]
    key_parts: tuple[str, ...]
    keys: tuple[str, ...]


@lru_cache(maxsize=1024)
def query_terms(text: str) -> QueryTerms:
    """The terms of a query, worked out once: a retrieval asks for them in several places (its
    statement's text, its parameters, the common-words test), and agents repeat their questions."""
    words = _words(text)
    parts = _key_parts(text, words)
    return QueryTerms(tuple(query_tokens(text)), tuple(parts), tuple(_whole_keys(text, words, parts)))
