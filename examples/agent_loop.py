"""An agent loop on reviewed memory: remember, propose, recall, answer, check, give feedback.

Each user turn goes through the same steps:

1. the turn goes to working memory (the transcript the review checks evidence against);
2. the reference proposer (`memorypr.formation`) reads it and proposes what it states as a
   knowledge pull request, and the loop waits for the review's decision;
3. the agent recalls what memory holds now about the turn;
4. the model answers from that recall;
5. the answer is checked (`verify`): a sentence that rests on a replaced fact is sent back to
   the model with the current value, and checked again;
6. the answer goes to working memory, and feedback on the facts it used raises their
   confidence.

The model is scripted (`ScriptedModel`), so the loop runs offline; any callable from a prompt
to a reply takes its place. Against `make run`, with the demo agent's token it prints:

    MEMORYPR_TOKEN=mpr_demo_token_for_local_use_only .venv/bin/python examples/agent_loop.py

MEMORYPR_URL (default http://127.0.0.1:8000), MEMORYPR_TOKEN and MEMORYPR_NAMESPACE (for an
agent of several namespaces) configure it; each run uses a new subject unless --subject says.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from memorypr_client import ApiError, MemoryprClient, MemoryprError
from memorypr_client.models import Retrieval, RetrievedFact, Turn

from memorypr.formation import MemoryprClient as FormationClient
from memorypr.formation import Proposal, propose
from memorypr.formation import Turn as FormationTurn

Model = Callable[[str], str]

# What the user says, turn by turn.
CONVERSATION = (
    "I live in Beijing.",
    "Can you suggest somewhere to eat tonight?",
    "I moved to Shenzhen last month.",
    "Any dinner ideas for tonight?",
)

# What the scripted model replies, call by call. The fourth turn's first draft still leans on
# the city the conversation began with, as a model reading its own chat history may: the
# check catches it, and the model is asked again.
REPLIES = (
    "Nice to meet you! Beijing is a wonderful place to live.",
    "Since you live in Beijing, try the Peking duck at Siji Minfu.",
    "Congratulations on the move to Shenzhen!",
    "Since you live in Beijing, Peking duck is the classic choice.",
    "Since you live in Shenzhen, try Cantonese dim sum in Futian.",
)


class ScriptedModel:
    """A stand-in for a chat model: the next canned reply, whatever the prompt."""

    def __init__(self, replies: Sequence[str]) -> None:
        self._replies: Iterator[str] = iter(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return next(self._replies)


@dataclass
class Agent:
    memory: MemoryprClient
    proposer: FormationClient
    model: Model
    subject: str
    session_id: str
    last_turn: Turn | None = None

    def remember(self, role: str, content: str) -> Turn:
        turn = self.memory.add_turn(self.session_id, role, content)
        self.last_turn = turn
        return turn

    def propose(self, previous: Turn | None, said: Turn) -> Proposal:
        # The turns are in working memory already; the proposer reads the user's turn and the
        # one before it (what "it" refers to) and stamps the evidence with when it was said.
        turns = [
            FormationTurn(t.role, t.content, int(t.created_at.timestamp() * 1000))
            for t in (previous, said)
            if t
        ]
        return propose(
            client=self.proposer,
            subject=self.subject,
            session_id=self.session_id,
            turns=turns,
            post_turns=False,
        )

    def answer(self, question: str, recalled: Retrieval) -> str:
        prompt = f"{recalled.context}\n\nUser: {question}\nAssistant:"
        reply = self.model(prompt)
        say("model", reply)
        checked = self.memory.verify(reply, subject=self.subject)
        if checked.ok:
            say("check", checked_ok(checked.sentences_checked))
            return reply
        corrections = []
        for flag in checked.flags:
            now = flag.replacement
            say("check", f"flagged {flag.sentence!r}")
            say(
                "",
                f"rests on {flag.fact.key} = {flag.fact.value!r} ({flag.fact.status})"
                + (f"; memory now holds {now.value!r}" if now else ""),
            )
            corrections.append(
                f"- {flag.sentence!r} rests on {flag.fact.value!r}, which is no longer true"
                + (f"; it is now {now.value!r}" if now else "")
            )
        reply = self.model(f"{prompt} {reply}\n\nCorrect these sentences:\n" + "\n".join(corrections))
        say("model", f"(revised) {reply}")
        again = self.memory.verify(reply, subject=self.subject)
        if again.ok:
            say("check", checked_ok(again.sentences_checked))
            return reply
        say("check", "still flagged: the agent asks instead of answering")
        return "I may have outdated notes about you. Could you remind me?"

    def turn(self, number: int, text: str) -> None:
        print(f"\n[turn {number}] user: {text}")
        previous, said = self.last_turn, self.remember("user", text)
        report_proposal(self.propose(previous, said))
        recalled = self.memory.retrieve(text, subject=self.subject, top_k=3)
        report_recall(recalled)
        reply = self.answer(text, recalled)
        self.remember("assistant", reply)
        # The facts the answer rests on served the task: their confidence goes up.
        used = [fact for fact in recalled.results if value_text(fact.value) in reply]
        if not used:
            say("feedback", "none (no recalled fact in the answer)")
            return
        result = self.memory.feedback([fact.fact_id for fact in used], "success", session_id=self.session_id)
        for fact in result.facts:
            say(
                "feedback",
                f"success: {fact.key} confidence {fact.confidence_before:.2f} -> {fact.confidence:.2f}",
            )


def value_text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def say(step: str, text: str) -> None:
    print(f"  {step:<9}{text}")


def report_proposal(proposal: Proposal) -> None:
    if not proposal.diff.operations:
        say("propose", "nothing new to remember")
        return
    for pull, decision in zip(proposal.pulls, proposal.decisions, strict=False):
        for op in pull["operations"]:
            change = (
                f"{op['oldValue']!r} -> {op['newValue']!r}"
                if op["action"] == "UPDATE"
                else repr(op["newValue"])
            )
            say("propose", f"KPR {str(pull['id'])[:8]}: {op['action']} {op['key']} {change}")
        outcome = f"{decision.review_status} / {decision.merge_status}"
        say("", outcome + (f": {decision.feedback}" if decision.feedback and not decision.merged else ""))


def describe(fact: RetrievedFact) -> str:
    about = [f"fact {fact.fact_id} v{fact.version}"]
    if fact.pull:
        about.append(f"KPR {fact.pull[:8]}")
    if fact.updates and fact.updates.value != fact.value:
        about.append(f"replaced {fact.updates.value!r}")
    return f"{fact.key} = {fact.value!r}  [{' · '.join(about)}]"


def checked_ok(count: int) -> str:
    return f"ok ({count} sentence{'' if count == 1 else 's'} checked)"


def report_recall(recalled: Retrieval) -> None:
    if not recalled.results:
        say("recall", "nothing relevant in memory")
    for fact in recalled.results:
        say("recall", describe(fact))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("MEMORYPR_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("MEMORYPR_TOKEN", ""))
    parser.add_argument("--namespace", default=os.environ.get("MEMORYPR_NAMESPACE") or None)
    parser.add_argument("--subject", help="whose memory (default: a new one per run)")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error(
            "set MEMORYPR_TOKEN: the demo agent's token that `make run` prints, or manage.py create_agent"
        )
    subject = args.subject or f"loop-{uuid.uuid4().hex[:6]}"
    print(f"memorypr at {args.url}, subject {subject!r}, session {subject + '-s1'!r}")
    with FormationClient(args.url, args.token, namespace=args.namespace) as proposer:
        agent = Agent(
            memory=proposer.typed,  # one connection pool for the proposer and the agent
            proposer=proposer,
            model=ScriptedModel(REPLIES),
            subject=subject,
            session_id=f"{subject}-s1",
        )
        try:
            for number, text in enumerate(CONVERSATION, start=1):
                agent.turn(number, text)
        except ApiError as error:
            print(f"memorypr answered {error}", file=sys.stderr)
            return 1
        except MemoryprError as error:
            print(f"memorypr could not be reached: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
