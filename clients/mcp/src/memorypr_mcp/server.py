"""memorypr over the Model Context Protocol: tools to propose, recall, check and remember.

`memorypr-mcp` serves over stdio (what Claude Desktop and Cursor start) or, with
`--transport streamable-http`, over HTTP for remote agents. It reaches memorypr through
memorypr-client, configured by MEMORYPR_URL, MEMORYPR_TOKEN and, optionally,
MEMORYPR_NAMESPACE and MEMORYPR_SUBJECT (the subject used when a tool call names none).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from memorypr_client import ApiError, AsyncMemoryprClient, MemoryprError, OperationIn
from memorypr_client.models import EvidenceIn, FactBrief
from pydantic import BaseModel, Field

INSTRUCTIONS = """\
A reviewed long-term memory. Nothing is written directly: propose_memory sends a knowledge
pull request that rules (and maybe a person) review before it is merged. Quote the user's own
words as evidence, and call remember_turn with each turn first, so the review can find the
quote in the transcript. Before answering, recall; after drafting, check_answer flags what
rests on an outdated fact; memory_feedback says whether the recalled facts helped."""


class MemoryOperation(BaseModel):
    """One change to memory, with the user's words that justify it."""

    action: Literal["CREATE", "UPDATE", "DELETE"] = Field(
        description="CREATE a new fact, UPDATE one (old_value is its current value), DELETE one."
    )
    category: Literal["user_profile", "system_preference", "domain_fact", "derived"] = "user_profile"
    key: str = Field(description="snake_case name of the fact, e.g. home_city or pet.dog")
    new_value: Any = Field(default=None, description="the value after the change (none for DELETE)")
    old_value: Any = Field(default=None, description="the current value, for UPDATE and DELETE")
    quote: str = Field(description="the user's words, verbatim, that state this")
    confidence: float = Field(default=0.9, ge=0, le=1)
    importance: float | None = Field(default=None, ge=0, le=1)

    def to_operation(self) -> OperationIn:
        return OperationIn(
            self.action,
            self.category,
            self.key,
            self.confidence,
            self.old_value,
            self.new_value,
            importance=self.importance,
            evidence=EvidenceIn(self.quote),
        )


def _failure(error: MemoryprError) -> ToolError:
    """The API's message and field paths, as the model should read them to correct its call."""
    if isinstance(error, ApiError):
        lines = [f"memorypr answered {error.status}: {error.detail}"]
        lines += [f"- {e.field}: {e.message}" for e in error.errors]
        return ToolError("\n".join(lines))
    return ToolError(f"memorypr could not be reached: {error}")


def _brief(fact: FactBrief | None) -> dict[str, Any] | None:
    if fact is None:
        return None
    return {"key": fact.key, "value": fact.value, "version": fact.version, "status": fact.status}


def build_server(client: AsyncMemoryprClient, *, default_subject: str = "default") -> MCPServer:
    """The MCP server's tools and resources, over one memorypr client."""
    server = MCPServer("memorypr", instructions=INSTRUCTIONS, version="0.1.0")

    def whose(subject: str | None) -> str:
        return subject or default_subject

    @server.tool()
    async def propose_memory(
        operations: list[MemoryOperation],
        subject: str | None = None,
        session_id: str | None = None,
        idempotency_key: str | None = None,
        wait_seconds: float = 10.0,
    ) -> dict[str, Any]:
        """Propose changes to the user's memory as one knowledge pull request (KPR).

        Returns the KPR id and, once review has settled (within wait_seconds), its decision:
        APPROVED and MERGED, REJECTED (with the reviewer's feedback), or NEEDS_HUMAN_REVIEW.
        The same idempotency_key again returns the first KPR instead of a second one.
        """
        try:
            pull = await client.propose(
                [op.to_operation() for op in operations],
                subject=whose(subject),
                session_id=session_id,
                proposed_by="memorypr-mcp",
                idempotency_key=idempotency_key,
            )
            if wait_seconds > 0:
                pull = await client.wait_for_pull(pull.id, timeout=wait_seconds)
        except MemoryprError as error:
            raise _failure(error) from error
        return {
            "pullId": pull.id,
            "reviewStatus": pull.review_status,
            "mergeStatus": pull.merge_status,
            "settled": pull.settled,
            "feedback": pull.feedback,
        }

    @server.tool()
    async def recall(query: str, subject: str | None = None, top_k: int = 5) -> dict[str, Any]:
        """Recall what memory holds true now about a query: facts, best first, and a prompt block.

        `context` is ready for the prompt and says which older memory each fact replaced;
        each fact carries its factId (for memory_feedback) and the KPR that wrote it (pullId).
        """
        try:
            found = await client.retrieve(query, subject=whose(subject), top_k=top_k)
        except MemoryprError as error:
            raise _failure(error) from error
        return {
            "context": found.context,
            "facts": [
                {
                    "factId": r.fact_id,
                    "category": r.category,
                    "key": r.key,
                    "value": r.value,
                    "version": r.version,
                    "confidence": r.confidence,
                    "pullId": r.pull,
                    "replaced": _brief(r.updates),
                }
                for r in found.results
            ],
        }

    @server.tool()
    async def check_answer(text: str, subject: str | None = None) -> dict[str, Any]:
        """Check a draft answer for sentences that rest on a fact memory no longer holds.

        Each flag names the sentence, the outdated (superseded or stale) fact, and the current
        value to say instead.
        """
        try:
            checked = await client.verify(text, subject=whose(subject))
        except MemoryprError as error:
            raise _failure(error) from error
        return {
            "ok": checked.ok,
            "flags": [
                {
                    "sentence": flag.sentence,
                    "reason": flag.reason,
                    "outdated": _brief(flag.fact),
                    "current": _brief(flag.replacement),
                }
                for flag in checked.flags
            ],
        }

    @server.tool()
    async def remember_turn(
        session_id: str, content: str, role: Literal["user", "assistant", "system", "tool"] = "user"
    ) -> dict[str, Any]:
        """Add a turn of the conversation to the session's working memory.

        The session's turns are the transcript the review checks evidence quotes against:
        post the user's turn before proposing from it.
        """
        try:
            turn = await client.add_turn(session_id, role, content)
        except MemoryprError as error:
            raise _failure(error) from error
        return {"turnId": turn.turn_id, "role": turn.role, "createdAt": turn.created_at.isoformat()}

    @server.tool()
    async def memory_feedback(
        fact_ids: list[int], outcome: Literal["success", "failure"], session_id: str | None = None
    ) -> dict[str, Any]:
        """Tell memory whether the recalled facts (their factId) served the task.

        success raises their confidence, failure lowers it, and a fact that keeps failing is
        forgotten.
        """
        try:
            result = await client.feedback(fact_ids, outcome, session_id=session_id)
        except MemoryprError as error:
            raise _failure(error) from error
        return {
            "outcome": result.outcome,
            "facts": [
                {
                    "factId": f.fact_id,
                    "key": f.key,
                    "confidenceBefore": f.confidence_before,
                    "confidence": f.confidence,
                    "markedForForgetting": f.marked_for_forgetting,
                }
                for f in result.facts
            ],
        }

    @server.tool()
    async def memory_history(key: str, subject: str | None = None) -> dict[str, Any]:
        """Every version of one fact, oldest first: its value, status and the KPR that wrote it."""
        try:
            history = await client.fact_history(key, subject=whose(subject))
        except MemoryprError as error:
            raise _failure(error) from error
        return {
            "key": history.key,
            "versions": [
                {
                    "version": v.version,
                    "value": v.value,
                    "status": v.status,
                    "createdAt": v.created_at.isoformat(),
                    "pull": v.pull,
                }
                for v in history.versions
            ],
        }

    @server.resource(
        "memorypr://facts/{subject}",
        name="active_facts",
        description="A subject's active facts: what memory holds true about them now.",
        mime_type="application/json",
    )
    async def active_facts(subject: str) -> list[dict[str, Any]]:
        try:
            facts = await client.facts(subject=subject)
        except MemoryprError as error:
            raise _failure(error) from error
        return [{"category": f.category, "key": f.key, "value": f.value, "version": f.version} for f in facts]

    return server


def client_from_env(env: dict[str, str] | None = None) -> AsyncMemoryprClient:
    env = dict(os.environ if env is None else env)
    token = env.get("MEMORYPR_TOKEN", "")
    if not token:
        raise SystemExit("memorypr-mcp: set MEMORYPR_TOKEN to an agent token (manage.py create_agent)")
    return AsyncMemoryprClient(
        env.get("MEMORYPR_URL", "http://127.0.0.1:8000"),
        token,
        namespace=env.get("MEMORYPR_NAMESPACE") or None,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="memorypr-mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="streamable-http: the address to listen on")
    parser.add_argument("--port", type=int, default=8765, help="streamable-http: the port")
    args = parser.parse_args(argv)
    server = build_server(client_from_env(), default_subject=os.environ.get("MEMORYPR_SUBJECT") or "default")
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
