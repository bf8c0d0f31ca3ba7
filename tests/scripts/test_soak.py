"""`make soak` cleans up after itself: a passed run's data folder goes, a failed one's stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.soak import data_folder_clean_up


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
