"""`pip install ./clients/python` in a clean virtual environment: httpx comes along, no server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_the_client_installs_and_imports_in_a_fresh_venv_without_django_or_torch(tmp_path):
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
