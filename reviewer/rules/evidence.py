"""Evidence present, quoted verbatim from the session, and from something the user said.

Protects against invented memories and laundered ones: an operation must cite the message it
comes from, and when the transcript of its session is known (working memory's recorded turns
or an uploaded transcript), the quote must appear in a turn the user said.
- Found in a user turn (or a turn whose speaker was not recorded): passes.
- Found only in the agent's turns (assistant, tool, system): the agent's own words, escalated;
  "Sure! You live in Paris and love sushi, right?" is not the user saying so.
- Not in this session but in a user turn of another session: escalated, naming that session
  and whether its KPRs are about another subject.
- Nowhere: a possible hallucination, escalated.
- Session unknown: passes, saying that the quote could not be checked.
Comparison ignores case, full-width/half-width forms and runs of whitespace, nothing more.
"""

from __future__ import annotations

from reviewer.rules.base import OperationView, Outcome, PullView, escalate, passed, reject
from reviewer.rules.text import QUOTE_MARKS, normalize, quote_search_word

NAME = "evidence"

AGENT_ROLES = ("assistant", "tool", "system")


def _elsewhere(pull: PullView, quote: str) -> Outcome | None:
    found = pull.quote_elsewhere(quote)
    if not found:
        return None
    session, subjects = found[0]
    others = [s for s in subjects if s != pull.subject]
    if others:
        whose = f"of another subject ('{others[0]}')"
    elif subjects:
        whose = f"of the same subject '{pull.subject}'"
    else:
        whose = "whose subject is not known"
    more = f" (and {len(found) - 1} more session(s))" if len(found) > 1 else ""
    return escalate(
        f"quote not found in session '{pull.session_id}': it is in a user turn of another session, "
        f"'{session}', {whose}{more}"
    )


# How many of a session's newest turns the evidence is looked for in first.
RECENT_TURNS = 200


def _in_a_user_turn(pull: PullView, raw: str, quote: str) -> bool:
    """Whether a recorded user turn of the session holds the (normalised) quote, read narrowly:
    only the turns that contain the quote's longest word, not the whole session.

    True is the answer the whole transcript gives too (a user turn holds the quote). False says
    nothing: a turn may hold the quote in another width or case of that word, or across turns,
    and the transcript decides.
    """
    fragment = quote_search_word(raw)
    if not fragment:
        return False
    # A proposal quotes what was just said: the session's newest turns first, a read that does
    # not grow with the session; then all of its turns that hold the word.
    for recent in (RECENT_TURNS, None):
        contents = pull.user_turns_containing(fragment, recent=recent)
        if contents and any(quote in normalize(content) for content in contents):
            return True
    return False


def check(pull: PullView, op: OperationView) -> Outcome:
    quote = normalize(op.quote).strip(QUOTE_MARKS)
    if not quote:
        return reject("no evidence: a memory must cite the message it comes from (evidence.rawMessageQuote)")
    if _in_a_user_turn(pull, op.quote, quote):
        return passed(f"quote found verbatim in a user turn of session '{pull.session_id}'")
    turns = pull.turns
    if turns is None:
        return passed("evidence present; the session transcript is unknown, so the quote is not verified")
    roles = {role for role, content in turns if quote in normalize(content)}
    if "user" in roles:
        return passed(f"quote found verbatim in a user turn of session '{pull.session_id}'")
    if "" in roles:
        return passed(
            f"quote found verbatim in the transcript of session '{pull.session_id}' (speaker not recorded)"
        )
    if quote in normalize("\n".join(content for role, content in turns if role == "user")):
        return passed(f"quote found verbatim across user turns of session '{pull.session_id}'")
    if roles:
        said_by = " and ".join(sorted(roles & set(AGENT_ROLES)))
        return escalate(
            f"the agent's own words: the quote is found only in {said_by} turns of session "
            f"'{pull.session_id}', never in what the user said"
        )
    return _elsewhere(pull, op.quote) or escalate(
        f"quote not found in the transcript of session '{pull.session_id}': possible hallucination"
    )
