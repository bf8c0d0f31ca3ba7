"""Quoted titles: one word while the rules read a sentence, in their marks in the values.

"Sympathy for the Devil", "Paint It Black" and "I Will Always Love You" are names. Read as
words, a list split cut the first at "for", the second was a doing of a pronoun, and the third
a statement of the user's. Before any rule reads a sentence, each quoted title is made one word
of the same length (`quoted_hidden`); the values come back in the sentence's own words and marks
(`value_shown`).
"""

from __future__ import annotations

import re

# A quoted title, whatever its words: "Sympathy for the Devil", "Paint It Black".
_QUOTED = re.compile(r"\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”")
# A list's comma or a full stop set inside the closing quote ('"Under My Thumb," "Paint It Black,"
# and …'), moved after it: one character for another, so offsets stay.
_MARK_IN_QUOTE = re.compile(r"([,.])([\"”])")
# The space inside a hidden title (a title of several words is a word holding it).
TITLE_SPACE = "\x04"
# The full stop inside a name, hidden ("F. Scott Fitzgerald"): a name's word may hold it.
NAME_STOP = "\x07"
# A quoted title stays one word through every reading and clean-up, until the value is shown.
_QUOTE_HIDDEN = str.maketrans({" ": TITLE_SPACE, "\t": TITLE_SPACE, "&": "\x05", ",": "\x06"})
_QUOTE_SHOWN = str.maketrans({TITLE_SPACE: " ", "\x05": "&", "\x06": ",", NAME_STOP: "."})
# The full stops inside a name: of an initial ("F. Scott Fitzgerald", "J. K. Rowling"), of a title
# before the name ("Dr. Seuss"), of letters ("Washington, D.C."). No value ends there ('"The
# Great Gatsby" by F', 'Washington D').
_INITIAL = re.compile(
    r"(?<=(?<![^\s(])[A-Z])\.(?=\s+(?!I\b|I['’])[A-Z])|(?<=\b(?:Dr|Mr|Ms|St|Mt|Jr|Sr))\.(?=\s+[A-Z])|(?<=\bMrs)\.(?=\s+[A-Z])"
    r"|(?<=\b[A-Z])\.(?=[A-Z]\.)|(?<=\b[A-Z]\.[A-Z])\."
)
# A hidden title whose marks the clean-up of the value's edges, or its list, took.
_BARE_TITLE = re.compile(rf"(?<![\"“\S])[^\s\"“”]+{TITLE_SPACE}[^\s\"“”]*+(?![\"”])")


def quoted_hidden(text: str) -> str:
    """The text with each quoted title made one word (of the same length): the rules read no
    statement inside "I Will Always Love You", and no list or clause splits "Sympathy for the
    Devil"; and with the full stops of initials hidden. `quoted_shown` gives the words back."""
    text = _INITIAL.sub(NAME_STOP, text)
    if '"' not in text and "“" not in text:
        return text
    return _QUOTED.sub(
        lambda title: title.group(0).translate(_QUOTE_HIDDEN), _MARK_IN_QUOTE.sub(r"\2\1", text)
    )


def quoted_shown(text: str) -> str:
    return text.translate(_QUOTE_SHOWN)


def value_shown(value: str, *, sentence: str) -> str:
    """A rule's value in the sentence's own words: its quoted titles whole and in their marks
    ('likes "Paint It Black"', a title, not a doing with a pronoun), its quote marks paired."""
    opening, closing = ("“", "”") if "“" in sentence else ('"', '"')
    titled = _BARE_TITLE.sub(lambda title: f"{opening}{title.group(0)}{closing}", value)
    return quotes_balanced(quoted_shown(titled), sentence=sentence)


_QUOTE_PAIRS = (('"', '"'), ("“", "”"))


def quotes_balanced(value: str, *, sentence: str) -> str:
    """The value with the quote mark that the clean-up of an edge took put back where the
    sentence has it: 'likes Bohemian Rhapsody" by Queen' (from 'I love "Bohemian Rhapsody" by
    Queen') is 'likes "Bohemian Rhapsody" by Queen', and a title left open at the end is closed.
    A mark the sentence does not place is dropped."""
    for opening, closing in _QUOTE_PAIRS:
        if opening == closing and value.count(opening) % 2:
            value = _quote_repaired(value, value.rindex(opening), opening, closing, sentence)
        elif opening != closing and value.count(opening) != value.count(closing):
            more_closed = value.count(closing) > value.count(opening)
            stray = value.index(closing) if more_closed else value.rindex(opening)
            value = _quote_repaired(value, stray, opening, closing, sentence)
    return value


def _quote_repaired(value: str, stray: int, opening: str, closing: str, sentence: str) -> str:
    before, after = value[:stray], value[stray + 1 :]
    if value[stray] == closing:
        # Its opening mark stood before the longest run of words the sentence quotes.
        for start in (i for i in range(len(before)) if i == 0 or before[i - 1] == " "):
            if f"{opening}{before[start:]}{closing}" in sentence:
                return f"{before[:start]}{opening}{before[start:]}{closing}{after}"
    opens = after[:1].strip() != "" and (not before or before.endswith(" "))
    if value[stray] == opening and opens and f"{opening}{after}" in sentence:
        return f"{value}{closing}"
    return before + after
