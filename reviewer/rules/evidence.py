"""Evidence present, and quoted verbatim when the session transcript is known.

Protects against invented memories: an operation must cite the message it comes from, and
when the transcript of its session is known (working memory or an uploaded transcript), the
quote must appear in it. A quote not found is a possible hallucination and goes to a person.
Comparison ignores case, full-width/half-width forms and runs of whitespace, nothing more.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed, reject
from reviewer.rules.text import normalize

NAME = "evidence"

_QUOTE_MARKS = "\"'“”‘’「」『』 "


def check(pull: PullView, op: OperationView) -> Outcome:
    quote = normalize(op.quote).strip(_QUOTE_MARKS)
    if not quote:
        return reject("no evidence: a memory must cite the message it comes from (evidence.rawMessageQuote)")
    transcript = pull.transcript
    if transcript is None:
        return passed("evidence present; the session transcript is unknown, so the quote is not verified")
    if quote in normalize(transcript):
        return passed(f"quote found verbatim in the transcript of session '{pull.session_id}'")
    return escalate(
        f"quote not found in the transcript of session '{pull.session_id}': possible hallucination"
    )
