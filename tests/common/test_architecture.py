"""The import contracts of pyproject.toml's [tool.importlinter], checked on the code as it is."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["name"]: contract for contract in config["contracts"]}


def test_pulls_is_forbidden_to_import_the_review_and_the_fact_store():
    forbidding = [
        c
        for c in _contracts().values()
        if c["type"] == "forbidden" and c["source_modules"] == ["memorypr.pulls"]
    ]
    assert [set(c["forbidden_modules"]) for c in forbidding] == [{"reviewer", "memorypr.facts"}]
    assert not any(c.get("allow_indirect_imports") for c in forbidding)


def test_the_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    command = str(lint_imports) if lint_imports.exists() else shutil.which("lint-imports")
    assert command, "import-linter is not installed"
    result = subprocess.run(
        [command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
