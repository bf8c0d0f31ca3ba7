"""`python -m memorypr.formation`: a transcript on stdin, a KPR and its decision on stdout."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

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


def test_embed_resolves_a_rewording_to_the_key_it_restates(live_server, agent_token, monkeypatch, capsys):
    # given: a taste in memory, and an embedder that puts hiking and trekking side by side
    import memorypr.vectors.embedding as embedding

    def fake_embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if ("hik" in t or "trekk" in t) else [0.0, 1.0] for t in texts]

    monkeypatch.setattr(embedding, "embed_texts", fake_embed)
    argv = [
        "--url",
        live_server.url,
        "--token",
        agent_token,
        "--subject",
        "u-e",
        "--session",
        "s-e",
        "--json",
    ]
    status, _, _ = _run(monkeypatch, capsys, argv, "user: I love hiking.\n")
    assert status == 0
    # when the user says it in other words, with --embed
    status, out, _ = _run(monkeypatch, capsys, [*argv, "--embed"], "user: I love trekking.\n")
    # then the existing key is updated, and no second key is created
    (pull,) = json.loads(out)["pulls"]
    assert pull["operations"] == ["UPDATE user_profile/likes_hiking"]
    assert not FactVersion.objects.filter(subject="u-e", key="likes_trekking").exists()
    # and without --embed the same words would have made a second key
    status, out, _ = _run(monkeypatch, capsys, argv, "user: I love trekking.\n")
    (pull,) = json.loads(out)["pulls"]
    assert pull["operations"] == ["CREATE user_profile/likes_trekking"]


def test_without_a_model_the_command_says_summaries_were_skipped(
    live_server, agent_token, monkeypatch, capsys
):
    # given: no OPENAI_BASE_URL (the suite's default)
    argv = ["--url", live_server.url, "--token", agent_token, "--subject", "u-s", "--session", "s-s"]
    transcript = "".join(f"user: I bake sourdough bread, batch {n}.\n" for n in range(7))
    # when
    status, out, err = _run(monkeypatch, capsys, argv, transcript)
    # then: the rules' facts are proposed as always, and stderr says why nothing was summarised
    assert status == 0 and "KPR " in out
    assert "summary compression skipped: no model configured (OPENAI_BASE_URL)" in err
    # and the JSON report carries it as a field
    status, out, _ = _run(monkeypatch, capsys, [*argv, "--json"], transcript)
    assert (
        json.loads(out)["summary"]["skipped"]
        == "summary compression skipped: no model configured (OPENAI_BASE_URL)"
    )


def test_with_a_model_the_command_proposes_the_summary_and_names_its_turns(
    live_server, agent_token, monkeypatch, capsys
):
    from memorypr.formation.llm import SUMMARY_INSTRUCTIONS
    from tests.reviewer.llm_server import Reply, running_llm_server

    def scenario(request: dict[str, Any]) -> Reply:
        facts = []
        if request["messages"][0]["content"] == SUMMARY_INSTRUCTIONS:
            facts = [
                {
                    "category": "user_profile",
                    "key": "summary.baking",
                    "value": "bakes sourdough bread every weekend",
                    "quote": "I bake sourdough bread every weekend.",
                    "importance": 0.8,
                    "confidence": 0.85,
                    "polarity": "set",
                }
            ]
        return Reply(content=json.dumps({"facts": facts}))

    lines = [
        "I bake sourdough bread every weekend.",
        "My starter is three years old, I feed it flour and water every morning.",
        "The trick to a good sourdough crust is baking it in a hot dutch oven.",
        "I let the bread dough proof overnight in the fridge.",
        "Whole wheat flour makes the sourdough loaf denser, so I mix it with bread flour.",
        "I score the dough with a razor blade before it goes in the oven.",
    ]
    with running_llm_server() as server:
        # given: a model, and six user turns on one topic
        server.scenario = scenario
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        argv = ["--url", live_server.url, "--token", agent_token, "--subject", "u-m", "--session", "s-m"]
        # when
        status, out, err = _run(monkeypatch, capsys, argv, "".join(f"user: {line}\n" for line in lines))
    # then
    assert status == 0
    assert "CREATE user_profile/summary.baking" in out
    assert "note: summary.baking: a summary of user turns 1, 2, 3, 4, 5, 6 (6 turns on one topic)" in out
    assert "skipped" not in err
    assert FactVersion.objects.filter(subject="u-m", key="summary.baking").exists()
