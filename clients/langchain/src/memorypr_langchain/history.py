"""`MemoryprChatMessageHistory`: a LangChain chat history kept in memorypr's working memory.

Every message becomes a turn of the session (`POST /api/v1/sessions/{id}/turns`), the
transcript the review checks evidence quotes against. After each user turn the history
hands the turn, and the one before it, to `propose`: the step that turns what the user said
into a knowledge pull request.

`propose` is injected rather than built in because the reference proposer's extraction
(`memorypr.formation`) ships inside the server package, which brings Django and torch; an
agent process installs only this package and memorypr-client. The turns are already posted
when `propose` runs, so a proposer should not post them again (the reference proposer's
`post_turns=False`); see the README for the wiring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from memorypr_client import MemoryprClient, NotFound
from memorypr_client.models import Turn

ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class SessionTurn:
    """A turn as the session stored it; `timestamp_ms` is when, for the evidence's timestamp."""

    role: str
    content: str
    timestamp_ms: int


@dataclass(frozen=True)
class ProposalRequest:
    """What a proposer gets after a user turn: whose memory, which session, and the turns
    to read (the user's turn last, the turn before it first, for what "it" refers to)."""

    subject: str
    session_id: str
    turns: tuple[SessionTurn, ...]


Propose = Callable[[ProposalRequest], Any]


def role_of(message: BaseMessage) -> str:
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ToolMessage):
        return "tool"
    if isinstance(message, ChatMessage) and message.role in ROLES:
        return message.role
    raise ValueError(f"memorypr keeps user, assistant, system and tool turns, not {message.type!r}")


def message_of(turn: Turn) -> BaseMessage:
    if turn.role == "user":
        return HumanMessage(turn.content)
    if turn.role == "assistant":
        return AIMessage(turn.content)
    if turn.role == "system":
        return SystemMessage(turn.content)
    # A tool turn's call id is not kept by working memory.
    return ChatMessage(role=turn.role, content=turn.content)


def _stored(turn: Turn) -> SessionTurn:
    return SessionTurn(turn.role, turn.content, int(turn.created_at.timestamp() * 1000))


class MemoryprChatMessageHistory(BaseChatMessageHistory):
    """A session's turns in memorypr; with `propose`, each user turn is proposed as memory.

    `messages` is the session's working-memory window (its last 20 turns within the idle
    TTL). `proposals` keeps what `propose` returned, one entry per user turn.
    """

    def __init__(
        self,
        *,
        client: MemoryprClient,
        session_id: str,
        subject: str,
        propose: Propose | None = None,
        namespace: str | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.subject = subject
        self.namespace = namespace
        self.propose = propose
        self.proposals: list[Any] = []

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [message_of(turn) for turn in self._turns()]

    def _turns(self) -> list[Turn]:
        try:
            return self.client.get_session(self.session_id, namespace=self.namespace).turns
        except NotFound:  # no turn posted yet: an empty conversation
            return []

    def _before(self, turn: Turn) -> SessionTurn | None:
        """The turn before `turn`, read back from the session: a history made afresh for each
        call has not seen it."""
        earlier = [t for t in self._turns() if t.turn_id < turn.turn_id]
        return _stored(earlier[-1]) if earlier else None

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        # Every turn is posted before any proposal, so a proposer that fails loses no turn.
        # Roles first: a message memorypr cannot keep is refused before anything is posted.
        roles = [role_of(message) for message in messages]
        posted = [
            self.client.add_turn(self.session_id, role, str(message.text), namespace=self.namespace)
            for role, message in zip(roles, messages, strict=True)
        ]
        if self.propose is None:
            return
        for index, turn in enumerate(posted):
            if turn.role != "user":
                continue
            before = _stored(posted[index - 1]) if index else self._before(turn)
            turns = (before, _stored(turn)) if before is not None else (_stored(turn),)
            request = ProposalRequest(subject=self.subject, session_id=self.session_id, turns=turns)
            self.proposals.append(self.propose(request))

    def clear(self) -> None:
        """Refused: a session's transcript is append-only, since reviewed evidence quotes it.

        Start a new history with another `session_id` for a fresh conversation.
        """
        raise NotImplementedError(
            "memorypr keeps a session's transcript: start a new session_id instead of clearing"
        )
