"""`python -m memorypr.formation`: a transcript on stdin, a KPR and its decision on stdout."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from memorypr.facts.models import FactVersion
from memorypr.formation.__main__ import main

pytestmark = pytest.mark.django_db(transaction=True)


def _run(monkeypatch, capsys, argv: list[str], transcript: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.StringIO(transcript))
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_transcript_becomes_a_merged_kpr(live_server, agent_token, monkeypatch, capsys):
    # given
    argv = ["--url", live_server.url, "--token", agent_token, "--subject", "user-1", "--session", "s-1"]
    transcript = "assistant: Where do you live?\nuser: I live in Beijing.\n"
    # when
    status, out, _ = _run(monkeypatch, capsys, argv, transcript)
    # then
    assert status == 0
    assert "APPROVED / MERGED" in out and "CREATE user_profile/home_city" in out
    assert FactVersion.objects.get(subject="user-1", key="home_city").value == "Beijing"
    # when the same user says where they live now, as JSON
    status, out, _ = _run(monkeypatch, capsys, [*argv, "--json"], "user: 上个月我举家搬迁到了深圳")
    # then
    report = json.loads(out)
    assert status == 0
    (pull,) = report["pulls"]
    assert pull["operations"] == ["UPDATE user_profile/home_city"]
    assert (pull["reviewStatus"], pull["mergeStatus"]) == ("APPROVED", "MERGED")


def test_nothing_to_propose_is_said_and_is_no_error(live_server, agent_token, monkeypatch, capsys):
    # when
    argv = ["--url", live_server.url, "--token", agent_token, "--subject", "u", "--session", "s"]
    status, out, _ = _run(monkeypatch, capsys, argv, "user: What's the weather like?\n")
    # then
    assert (status, out.strip()) == (0, "nothing to propose")


def test_an_api_error_exits_1_naming_the_field(live_server, agent_token, monkeypatch, capsys):
    # when: a turn longer than the API takes
    argv = ["--url", live_server.url, "--token", agent_token, "--subject", "u", "--session", "s"]
    status, _, err = _run(monkeypatch, capsys, argv, "I live in Beijing. " * 2000 + "\n")
    # then
    assert status == 1
    assert "HTTP 400" in err
    assert "  content: Content is" in err


def test_the_module_runs_as_a_command_and_needs_a_token():
    # when
    done = subprocess.run(
        [sys.executable, "-m", "memorypr.formation", "--subject", "u", "--session", "s"],
        input="I live in Beijing.\n",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    # then
    assert done.returncode == 2
    assert "--token" in done.stderr
