"""The MCP server driven by the `mcp` package's own client, against a live memorypr over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextResourceContents
from memorypr_client import AsyncMemoryprClient
from memorypr_mcp import build_server

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {"propose_memory", "recall", "check_answer", "remember_turn", "memory_feedback", "memory_history"}


def _run(server_url: str, token: str, scenario: Callable[[Client], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        async with (
            AsyncMemoryprClient(server_url, token, namespace="demo") as memory,
            Client(build_server(memory, default_subject="u1")) as client,
        ):
            return await scenario(client)

    return asyncio.run(run())


async def _call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def test_an_agent_remembers_proposes_recalls_checks_and_gives_feedback_through_mcp(server_url, agent_token):
    async def scenario(client: Client) -> None:
        # given: the tools a client sees
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == TOOLS
        # when: the user's words go to working memory and the agent proposes what they say
        await _call(client, "remember_turn", session_id="s-1", content="I live in Beijing.")
        created = await _call(
            client,
            "propose_memory",
            session_id="s-1",
            operations=[
                {
                    "action": "CREATE",
                    "key": "home_city",
                    "new_value": "Beijing",
                    "quote": "I live in Beijing.",
                }
            ],
        )
        # then: reviewed and merged
        assert (created["reviewStatus"], created["mergeStatus"], created["settled"]) == (
            "APPROVED",
            "MERGED",
            True,
        )
        # when: they move
        await _call(client, "remember_turn", session_id="s-2", content="I moved to Shenzhen last month.")
        moved = await _call(
            client,
            "propose_memory",
            session_id="s-2",
            operations=[
                {
                    "action": "UPDATE",
                    "key": "home_city",
                    "old_value": "Beijing",
                    "new_value": "Shenzhen",
                    "quote": "I moved to Shenzhen last month.",
                }
            ],
        )
        assert moved["mergeStatus"] == "MERGED"
        # then: recall serves the new value and says what it replaced
        recalled = await _call(client, "recall", query="Where does the user live?")
        top = recalled["facts"][0]
        assert (top["key"], top["value"], top["replaced"]["value"]) == ("home_city", "Shenzhen", "Beijing")
        assert top["pullId"] == moved["pullId"]
        assert "Shenzhen" in recalled["context"]
        # a draft on the old fact is flagged with the current value
        checked = await _call(client, "check_answer", text="Since you live in Beijing, try Peking duck.")
        assert not checked["ok"]
        assert (checked["flags"][0]["outdated"]["value"], checked["flags"][0]["current"]["value"]) == (
            "Beijing",
            "Shenzhen",
        )
        # feedback and history
        feedback = await _call(client, "memory_feedback", fact_ids=[top["factId"]], outcome="failure")
        assert feedback["facts"][0]["confidence"] < feedback["facts"][0]["confidenceBefore"]
        history = await _call(client, "memory_history", key="home_city")
        assert [(v["value"], v["status"]) for v in history["versions"]] == [
            ("Beijing", "superseded"),
            ("Shenzhen", "active"),
        ]
        # the subject's active facts as a resource
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memorypr://facts/{subject}"]
        (content,) = (await client.read_resource("memorypr://facts/u1")).contents
        assert isinstance(content, TextResourceContents)
        assert json.loads(content.text) == [
            {"category": "user_profile", "key": "home_city", "value": "Shenzhen", "version": 2}
        ]

    _run(server_url, agent_token, scenario)


def test_an_invalid_proposal_comes_back_as_a_tool_error_naming_the_field(server_url, agent_token):
    async def scenario(client: Client) -> Any:
        return await client.call_tool(
            "propose_memory",
            {"operations": [{"action": "CREATE", "key": "not a key!", "new_value": "x", "quote": "x"}]},
        )

    result = _run(server_url, agent_token, scenario)
    assert result.is_error
    assert "memorypr answered 400" in result.content[0].text
    assert "- operations[0].key:" in result.content[0].text


def _command() -> list[str]:
    # The console command when installed; the module otherwise (the same entry point).
    installed = shutil.which("memorypr-mcp", path=str(Path(sys.executable).parent))
    return [installed] if installed else [sys.executable, "-m", "memorypr_mcp"]


def test_the_memorypr_mcp_command_serves_over_stdio_from_the_environment(server_url, agent_token):
    # given: the command as Claude Desktop or Cursor would start it
    command, *args = _command()
    env = {
        **os.environ,
        "MEMORYPR_URL": server_url,
        "MEMORYPR_TOKEN": agent_token,
        "MEMORYPR_SUBJECT": "u2",
        "PYTHONPATH": os.pathsep.join(str(Path(p)) for p in sys.path if p),
    }

    async def run() -> tuple[set[str], Any, Any]:
        async with Client(StdioServerParameters(command=command, args=args, env=env)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            await client.call_tool(
                "remember_turn", {"session_id": "s-9", "content": "I have a dog named Rex."}
            )
            proposed = await client.call_tool(
                "propose_memory",
                {
                    "session_id": "s-9",
                    "operations": [
                        {
                            "action": "CREATE",
                            "key": "pet.dog",
                            "new_value": "Rex",
                            "quote": "I have a dog named Rex.",
                        }
                    ],
                },
            )
            recalled = await client.call_tool("recall", {"query": "What is the dog called?"})
            return tools, proposed.structured_content, recalled.structured_content

    # when
    tools, proposed, recalled = asyncio.run(run())
    # then
    assert tools == TOOLS
    assert proposed["mergeStatus"] == "MERGED"
    assert recalled["facts"][0]["value"] == "Rex"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, server: subprocess.Popen[bytes], *, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read().decode() if server.stderr else "exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"memorypr-mcp did not listen on {port}")


def test_the_memorypr_mcp_command_serves_remote_agents_over_streamable_http(server_url, agent_token):
    # given: the command started for remote agents, on a port of its own
    command, *args = _command()
    port = _free_port()
    env = {
        **os.environ,
        "MEMORYPR_URL": server_url,
        "MEMORYPR_TOKEN": agent_token,
        "MEMORYPR_SUBJECT": "u3",
        "PYTHONPATH": os.pathsep.join(str(Path(p)) for p in sys.path if p),
    }
    server = subprocess.Popen(
        [command, *args, "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    async def run() -> tuple[set[str], Any, Any]:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            await _call(client, "remember_turn", session_id="s-h", content="I work as a nurse.")
            proposed = await _call(
                client,
                "propose_memory",
                session_id="s-h",
                operations=[
                    {
                        "action": "CREATE",
                        "key": "occupation",
                        "new_value": "nurse",
                        "quote": "I work as a nurse.",
                    }
                ],
            )
            recalled = await _call(client, "recall", query="What is the user's job?")
            return tools, proposed, recalled

    try:
        _wait_for_port(port, server)
        # when: an MCP client connects over HTTP
        tools, proposed, recalled = asyncio.run(run())
    finally:
        server.terminate()
        server.wait(timeout=30)
    # then: the same tools, and the proposal reached memorypr and came back on recall
    assert tools == TOOLS
    assert (proposed["reviewStatus"], proposed["mergeStatus"]) == ("APPROVED", "MERGED")
    assert (recalled["facts"][0]["key"], recalled["facts"][0]["value"]) == ("occupation", "nurse")
