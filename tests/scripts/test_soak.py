"""`make soak` cleans up after itself: a passed run's data folder goes, a failed one's stays."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from scripts.soak import build_report, data_folder_clean_up, render
from scripts.soak_traffic import Stats


def _run_folder(tmp_path: Path) -> Path:
    data = tmp_path / "memorypr-soak-run"
    (data / "pg").mkdir(parents=True)
    (data / "pg" / "PG_VERSION").write_text("18\n")
    (data / "run.log").write_text("...")
    return data


def test_a_passed_run_leaves_no_data_behind(tmp_path):
    data = _run_folder(tmp_path)
    data_folder_clean_up(data, keep=False)
    assert not data.exists()


@pytest.mark.parametrize("running_server", [False, True])
def test_a_failed_run_or_a_server_still_running_keeps_the_folder(tmp_path, capsys, running_server):
    # given a run that failed, or one whose database server has not stopped
    data = _run_folder(tmp_path)
    if running_server:
        (data / "pg" / "postmaster.pid").write_text("4242\n")
    # when the soak ends
    data_folder_clean_up(data, keep=not running_server)
    # then the folder stays, and the log says where
    assert (data / "run.log").exists() and (data / "pg" / "PG_VERSION").exists()
    assert f"data kept in {data}" in capsys.readouterr().out


def _report(stats: Stats, *, agents: int) -> dict:  # type: ignore[type-arg]
    """The report of a one-second run with these requests, no faults and no KPRs."""
    accounting = {"merged": 0, "rejected": 0, "escalated": 0, "conflict": 0, "failed": 0, "notFinal": 0,
                  "missing": 0, "appliedTwice": 0, "stored": 0}  # fmt: skip
    return build_report(
        args=SimpleNamespace(profile="single", agents=agents, think_ms=0.0), stats=stats, elapsed=1.0, faults=[],
        settle=0.5, accounting=accounting, audit=(True, "intact"), cpu={"web": 0.5},
    )  # fmt: skip


def test_the_report_shows_how_evenly_the_agents_were_served():
    # given two agents, one served ten times faster than the other
    stats = Stats()
    for seconds in (0.010, 0.012, 0.011):
        stats.record("POST retrieve", 200, seconds, agent=0)
    for seconds in (0.100, 0.120, 0.110):
        stats.record("POST retrieve", 200, seconds, agent=1)
    # when the report is built and printed
    report = _report(stats, agents=2)
    # then each agent's median latency is summarised, fastest to slowest
    assert report["agentMedianMs"] == {"min": 11.0, "median": 110.0, "max": 110.0}
    assert "each agent's median ms: min 11.0, median 110.0, max 110.0" in render(report)


def test_the_report_names_the_status_of_every_server_error():
    # given answers during a database restart: two 503s on one endpoint, one 500 on another
    stats = Stats()
    for endpoint, status in (("GET pull", 200), ("GET pull", 503), ("GET pull", 503), ("POST turns", 500)):
        stats.record(endpoint, status, 0.01, agent=0)
    # when the report is built and printed
    report = _report(stats, agents=1)
    # then each endpoint counts them by status, and one line sums them up
    assert report["endpoints"]["GET pull"]["5xxByCode"] == {"503": 2}
    assert report["endpoints"]["POST turns"]["5xxByCode"] == {"500": 1}
    assert "5xx by status: 500 x1, 503 x2" in render(report)
