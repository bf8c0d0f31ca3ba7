"""`pip install ./clients/python` in a clean virtual environment: httpx comes along, no server,
and the README's lines propose a KPR and recall it from a live memorypr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = Path(__file__).resolve().parents[3] / "clients" / "python"

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


def test_the_client_installs_in_a_fresh_venv_without_django_or_torch_and_proposes_and_recalls(
    tmp_path, server_url, agent_token
):
    # given: a virtual environment with nothing in it
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    python = env / "bin" / "python"
    # when: the package is installed from its folder
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(PACKAGE)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    probe = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path)
    # then
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["version"] == "0.1.0"
    assert [r.split(">")[0].split("<")[0].split("=")[0] for r in found["requires"]] == ["httpx"]
    assert found["absent"] == {"django": True, "torch": True, "memorypr": True}
    assert (Path(found["typed"]) / "py.typed").exists()
    # and the README's lines propose a KPR, which merges, and recall it
    env = {"PATH": os.environ.get("PATH", ""), "MEMORYPR_URL": server_url, "MEMORYPR_TOKEN": agent_token}
    used = subprocess.run(
        [str(python), "-c", README_LINES], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert used.returncode == 0, used.stderr
    merged, context = used.stdout.split("\n", 1)
    assert merged == "MERGED"
    assert "user_profile/home_city" in context and "Shenzhen" in context
