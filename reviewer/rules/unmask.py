"""What a text says once its disguises are taken off, for the rules that look for instructions.

An instruction to the reviewer does not need to be written plainly for a model to follow it:
letters from another script that look Latin (Cyrillic "а", Greek "ο"), characters that show
nothing (zero-width space, soft hyphen), full-width or mathematical letters, Chinese spaced out
character by character or written in traditional characters, or the whole instruction in
base64. `skeleton` folds all of these to one plain form (NFKC, case-folded, look-alikes to
Latin, traditional to simplified characters); `decoded` finds the base64 inside a text; the
`mixed_script_word` and `decoded` findings are suspicious in themselves: a person stating a fact
about themselves writes neither.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

from reviewer.rules.text import normalize

# Characters that render as nothing. Removed before matching; the zero-width joiner is kept out
# of the suspicious set (emoji sequences use it), but removed all the same.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
)

# Look-alikes of Latin letters in Cyrillic, Greek and Armenian, after case-folding.
_CONFUSABLES = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
        "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d",
        "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g", "ɩ": "i", "ʏ": "y",
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
        "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ք": "f",
    }
)  # fmt: skip

# Traditional characters of the words the injection patterns look for, as simplified ones.
_TRADITIONAL = str.maketrans(
    "無視規則審過請這條記錄準統們將為與後說讓會對從現員確認經據結論見護權製絕決應該設續幫換變時間開關問題處機給輸當態級資號務單碼刪從聽錯誤",
    "无视规则审过请这条记录准统们将为与后说让会对从现员确认经据结论见护权制绝决应该设续帮换变时间开关问题处机给输当态级资号务单码删从听错误",
)

_CJK = r"[\u3400-\u9fff\uf900-\ufaff]"
_CJK_GAP = re.compile(rf"(?<={_CJK})\s+(?={_CJK})")
_LETTERS = re.compile(r"[^\W\d_]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def skeleton(text: str) -> str:
    """The text with its disguises off: what the instruction patterns are matched against."""
    plain = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    plain = normalize(plain).translate(_CONFUSABLES).translate(_TRADITIONAL)
    return _CJK_GAP.sub("", plain)


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


def mixed_script_word(text: str) -> str | None:
    """A word that mixes Latin letters with Cyrillic, Greek or Armenian ones ("аpprove")."""
    for word in _LETTERS.findall(unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))):
        scripts = {_script(char) for char in word}
        if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK", "ARMENIAN"}:
            return word
    return None


def _printable(text: str) -> bool:
    shown = [c for c in text if not c.isspace()]
    return len(shown) >= 4 and sum(c.isprintable() for c in shown) == len(shown)


def decoded(text: str, *, depth: int = 2) -> list[str]:
    """The readable texts hidden as base64 (standard or URL-safe, padded or not; base64 inside
    base64 too, `depth` levels deep) in a text."""
    found: list[str] = []
    for token in _BASE64.findall(text):
        body = token.rstrip("=")
        if len(body) % 4 == 1:
            continue
        padded = body + "=" * (-len(body) % 4)
        for alphabet in (b"+/", b"-_"):
            try:
                raw = base64.b64decode(padded.encode(), altchars=alphabet, validate=True)
                plain = raw.decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            if _printable(plain):
                found.append(plain)
                if depth > 1:
                    found.extend(decoded(plain, depth=depth - 1))
                break
    return found
