"""The client packages in a clean virtual environment, against a live memorypr over HTTP:
`pip install ./clients/python` brings httpx and no server, and the README's lines propose a KPR
and recall it; `pip install ./clients/mcp` adds a `memorypr-mcp` command that does the same for
an `mcp` client session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = Path(__file__).resolve().parents[2] / "clients"

PROBE = """
import importlib.metadata, importlib.util, json
import memorypr_client
from memorypr_client import MemoryprClient, AsyncMemoryprClient, OperationIn
requires = importlib.metadata.requires("memorypr-client") or []
print(json.dumps({
    "version": memorypr_client.__version__,
    "requires": [r.split(";")[0].strip() for r in requires],
    "absent": {name: importlib.util.find_spec(name) is None for name in ("django", "torch", "memorypr")},
    "typed": importlib.util.find_spec("memorypr_client").submodule_search_locations[0],
}))
"""

# The README's example, as an agent would paste it (the URL and token from the environment).
README_LINES = """
import os
from memorypr_client import MemoryprClient, OperationIn

token = os.environ["MEMORYPR_TOKEN"]
memory = MemoryprClient(os.environ["MEMORYPR_URL"], token, namespace="demo")
op = OperationIn.create("user_profile", "home_city", "Shenzhen", quote="I moved to Shenzhen.")
print(memory.wait_for_pull(memory.propose([op], subject="u1").id).merge_status)
print(memory.retrieve("Where does u1 live?", subject="u1").context)
"""

# An MCP client session over stdio with the installed command.
SESSION = """
import asyncio, importlib.util, json, os, sys
from pathlib import Path
from mcp import Client, StdioServerParameters

command = str(Path(sys.executable).parent / "memorypr-mcp")

async def main():
    async with Client(StdioServerParameters(command=command, env=dict(os.environ))) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        await client.call_tool("remember_turn", {"session_id": "s-i", "content": "I live in Lisbon."})
        op = {"action": "CREATE", "key": "home_city", "new_value": "Lisbon", "quote": "I live in Lisbon."}
        proposed = await client.call_tool("propose_memory", {"session_id": "s-i", "operations": [op]})
        recalled = await client.call_tool("recall", {"query": "Where does the user live?"})
        return tools, proposed.structured_content, recalled.structured_content

tools, proposed, recalled = asyncio.run(main())
absent = {name: importlib.util.find_spec(name) is None for name in ("django", "torch", "memorypr")}
print(json.dumps({"tools": tools, "proposed": proposed, "recalled": recalled, "absent": absent}))
"""


def _pip_install(python: Path, package: Path) -> None:
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(package)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]


def test_the_client_and_the_mcp_server_install_in_a_fresh_venv_and_propose_and_recall(
    tmp_path, server_url, agent_token
):
    # given: a virtual environment with nothing in it
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {"PATH": os.environ.get("PATH", ""), "MEMORYPR_URL": server_url, "MEMORYPR_TOKEN": agent_token}
    # when: the client is installed from its folder
    _pip_install(python, CLIENTS / "python")
    probe = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path)
    # then: httpx is its one requirement, and no server came along
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["version"] == "0.1.0"
    assert [r.split(">")[0].split("<")[0].split("=")[0] for r in found["requires"]] == ["httpx"]
    assert found["absent"] == {"django": True, "torch": True, "memorypr": True}
    assert (Path(found["typed"]) / "py.typed").exists()
    # and the README's lines propose a KPR, which merges, and recall it
    used = subprocess.run(
        [str(python), "-c", README_LINES], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert used.returncode == 0, used.stderr
    merged, context = used.stdout.split("\n", 1)
    assert merged == "MERGED"
    assert "user_profile/home_city" in context and "Shenzhen" in context
    # when: the MCP server is added, and an mcp client session starts its command
    _pip_install(python, CLIENTS / "mcp")
    session = subprocess.run(
        [str(python), "-c", SESSION],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "MEMORYPR_SUBJECT": "u-install"},
        timeout=300,
    )
    # then: the six tools; the proposal is reviewed and merged, and recalled; still no server
    assert session.returncode == 0, session.stderr[-3000:]
    found = json.loads(session.stdout)
    assert found["tools"] == sorted(
        ["propose_memory", "recall", "check_answer", "remember_turn", "memory_feedback", "memory_history"]
    )
    assert (found["proposed"]["reviewStatus"], found["proposed"]["mergeStatus"]) == ("APPROVED", "MERGED")
    assert (found["recalled"]["facts"][0]["key"], found["recalled"]["facts"][0]["value"]) == (
        "home_city",
        "Lisbon",
    )
    assert found["absent"] == {"django": True, "torch": True, "memorypr": True}
