"""examples/agent_loop.py as a program against a live memorypr over real HTTP: its transcript
shows a fact proposed and merged in turn 1, recalled in turn 2, replaced in turn 3, and the
check catching an answer that still rests on the old value in turn 4."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memorypr.audit.models import AuditEvent
from memorypr.facts.models import FactStatus, FactVersion

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


def _turns(transcript: str) -> dict[int, str]:
    parts = re.split(r"^\[turn (\d+)\] ", transcript, flags=re.MULTILINE)
    return {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=True)}


def test_the_agent_loop_remembers_recalls_and_catches_an_answer_resting_on_a_replaced_fact(
    server_url, agent_token
):
    # given: the example configured as its docstring says
    env = {
        **os.environ,
        "MEMORYPR_URL": server_url,
        "MEMORYPR_TOKEN": agent_token,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    # when
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--subject", "u-loop"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    # then
    assert run.returncode == 0, run.stderr
    turns = _turns(run.stdout)
    assert sorted(turns) == [1, 2, 3, 4]
    # turn 1: the user's statement is proposed, approved and merged
    created = re.search(r"KPR (\w{8}): CREATE home_city 'Beijing'\n\s+APPROVED / MERGED", turns[1])
    assert created, turns[1]
    # turn 2: the merged fact is recalled, from that KPR, and the answer uses it
    beijing = FactVersion.objects.get(subject="u-loop", key="home_city", version=1)
    assert str(beijing.pull_id).startswith(created.group(1))
    assert f"recall   home_city = 'Beijing'  [fact {beijing.pk} v1 · KPR {created.group(1)}]" in turns[2]
    assert "propose  nothing new to remember" in turns[2]
    assert "check    ok" in turns[2]
    # turn 3: the move is an UPDATE whose base is the old value; the old one is retired
    assert re.search(r"UPDATE home_city 'Beijing' -> 'Shenzhen'\n\s+APPROVED / MERGED", turns[3]), turns[3]
    shenzhen = FactVersion.objects.get(subject="u-loop", key="home_city", status=FactStatus.ACTIVE)
    assert (shenzhen.value, shenzhen.version) == ("Shenzhen", 2)
    beijing.refresh_from_db()
    assert beijing.status == FactStatus.SUPERSEDED
    # turn 4: recall serves only the new value; the draft resting on Beijing is flagged,
    # revised, and passes the check
    recalled = [line for line in turns[4].splitlines() if line.startswith("  recall")]
    assert recalled == [
        f"  recall   home_city = 'Shenzhen'  [fact {shenzhen.pk} v2 · KPR {str(shenzhen.pull_id)[:8]}"
        " · replaced 'Beijing']"
    ]
    assert "check    flagged 'Since you live in Beijing, Peking duck is the classic choice.'" in turns[4]
    assert "rests on home_city = 'Beijing' (superseded); memory now holds 'Shenzhen'" in turns[4]
    assert "(revised) Since you live in Shenzhen" in turns[4]
    assert turns[4].rstrip().splitlines()[-2].strip().startswith("check    ok")
    # feedback on the facts each answer used, audited
    assert [("feedback success: home_city confidence" in turns[n]) for n in range(1, 5)] == [True] * 4
    assert AuditEvent.objects.filter(event_type="fact.feedback").count() == 4
