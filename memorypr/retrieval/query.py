"""Turning a free-text query into full-text and exact-match terms.

Documents are indexed with memorypr.vectors.text.search_text (the `simple` configuration,
application-made tokens), so queries are tokenised by the same function. Two query-side
refinements: a small stop list (the `simple` configuration keeps every word, and "the"
would match every fact), and single CJK characters are dropped when the segmenter found
real words, since single characters match almost everything.
"""

from __future__ import annotations

import re

from memorypr.vectors.text import search_tokens

MAX_QUERY_TOKENS = 32
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

_STOP_TEXT = """a an and are as at be by can could did do does for from had has have he her his how i if in
    is it its me my of on or our she so that the their them they this to was we were what when where
    which who whom why will with would you your user users 的 了 吗 呢 是 我 你 他 她 在 和 有 吧 啊
    什么 哪里 哪儿 怎么 用户"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def query_tokens(text: str) -> list[str]:
    tokens = [t for t in dict.fromkeys(search_tokens(text)) if t not in STOP_WORDS]
    if any(len(t) > 1 and _CJK.search(t) for t in tokens):
        tokens = [t for t in tokens if not (len(t) == 1 and _CJK.search(t))]
    return tokens[:MAX_QUERY_TOKENS]


def tsquery_text(tokens: list[str], *, operator: str = "|") -> str:
    """An OR (or AND) of quoted lexemes for to_tsquery('simple', ...); quoting keeps operators inert."""
    quoted = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in tokens]
    return f" {operator} ".join(quoted)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def exact_key_terms(text: str) -> list[str]:
    """Keys a query may name verbatim: 'home city' or 'home_city' both mean key home_city."""
    words = _words(text)
    terms: set[str] = set()
    stripped = text.strip().lower()
    if stripped:
        terms.add(stripped)
    for size in (1, 2, 3):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            for sep in ("_", ".", "-", ""):
                terms.add(sep.join(gram))
    return sorted(t for t in terms if t and t not in STOP_WORDS)[:200]


def exact_value_terms(text: str) -> list[str]:
    """Values (entities) a query may name verbatim, e.g. 'Shenzhen' or 深圳."""
    words = _words(text)
    terms: set[str] = set()
    stripped = text.strip().lower()
    if stripped:
        terms.add(stripped)
    for size in (1, 2, 3, 4):
        for start in range(len(words) - size + 1):
            terms.add(" ".join(words[start : start + size]))
    terms.update(t for t in search_tokens(text) if len(t) > 1 or not _CJK.search(t))
    return sorted(t for t in terms if t and t not in STOP_WORDS)[:300]
