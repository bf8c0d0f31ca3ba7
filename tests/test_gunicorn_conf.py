"""The web server's settings, on a real gunicorn: one request per process and a session of its
own by default; with threads, a keep-alive connection handed back in time."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

APP = """
def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _connect(port: int, *, timeout: float) -> http.client.HTTPConnection:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        except OSError:
            assert time.monotonic() < deadline, "gunicorn did not start listening"
            time.sleep(0.1)


@contextmanager
def _gunicorn(tmp_path: Path, *, app_source: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn with the project's settings serving `app_source`, on `env`'s BIND."""
    (tmp_path / "tiny_app.py").write_text(app_source)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(REPO / "memorypr" / "gunicorn_conf.py"), "tiny_app:app"],
        cwd=tmp_path, env={**os.environ, "MEMORYPR_WARM_UP": "0", "PYTHONPATH": str(tmp_path), **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield server
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_keep_alive_connection_closes_after_its_request_budget_and_the_next_one_is_served(tmp_path):
    # given threaded gunicorn with the project's settings and a budget of three requests per connection
    port = _free_port()
    with _gunicorn(tmp_path, app_source=APP, BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="1",
                   WEB_KEEPALIVE_REQUESTS="3", WEB_WORKER_CLASS="gthread"):  # fmt: skip
        connection = _connect(port, timeout=30)
        # when one client sends four requests, reconnecting only when told to
        answers = []
        for _ in range(4):
            connection.request("GET", "/")
            response = connection.getresponse()
            answers.append((response.status, response.read(), response.getheader("Connection")))
            if response.will_close:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.close()
    # then the third answer closes the connection, and the new connection is served at once
    assert [status for status, _, _ in answers] == [200, 200, 200, 200]
    assert [body for _, body, _ in answers] == [b"ok"] * 4
    assert [(header or "").lower() for _, _, header in answers] == [
        "keep-alive",
        "keep-alive",
        "close",
        "keep-alive",
    ]


SESSION_APP = """
import os

def app(environ, start_response):
    body = f"{os.getpid()} {os.getsid(0)}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
"""


def test_by_default_each_web_process_serves_one_request_in_its_masters_session(tmp_path):
    # given gunicorn with the project's default settings, started in the test's own session
    port = _free_port()
    with _gunicorn(tmp_path, app_source=SESSION_APP, BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="2") as server:
        # when a worker answers with its pid and its session
        connection = _connect(port, timeout=30)
        connection.request("GET", "/")
        response = connection.getresponse()
        worker_pid, worker_session = map(int, response.read().split())
        connection_header = response.getheader("Connection")
        connection.close()
        master_session = os.getsid(server.pid)
    # then the worker stays in its master's session: the web tier is one scheduling group, as
    # each other service is (a web process in a group of its own would outweigh the worker)
    assert worker_pid != server.pid
    assert worker_session == master_session
    # and it answered as a process that serves one request at a time: the connection ends
    assert (connection_header or "").lower() == "close"
    assert master_session == os.getsid(0)


SEGMENTER_APP = """
import sys

# read on import, in the worker after its fork and before its own warm-up
jieba = sys.modules.get("jieba")
LOADED = b"loaded" if jieba is not None and jieba.dt.initialized else b"not loaded"

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(LOADED)))])
    return [LOADED]
"""


def _first_answer(port: int) -> bytes:
    connection = _connect(port, timeout=60)
    connection.request("GET", "/")
    body = connection.getresponse().read()
    connection.close()
    return body


def test_the_master_loads_the_word_segmenter_once_and_its_workers_start_with_it(tmp_path):
    # given gunicorn with the project's settings, warming up, and the same without the warm-up
    port, cold_port = _free_port(), _free_port()
    warm = {
        "MEMORYPR_WARM_UP": "1",
        "MEMORYPR_WARM_EMBEDDINGS": "0",
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
    }  # the warm-up reads the settings
    with _gunicorn(tmp_path, app_source=SEGMENTER_APP, BIND=f"127.0.0.1:{port}", **warm):
        # when a worker says, as it imports the application, whether jieba's dictionary is loaded
        answer = _first_answer(port)
    with _gunicorn(tmp_path, app_source=SEGMENTER_APP, BIND=f"127.0.0.1:{cold_port}", WEB_CONCURRENCY="1"):
        cold_answer = _first_answer(cold_port)
    # then it found the master's copy, which only the warm-up loads
    assert answer == b"loaded"
    assert cold_answer == b"not loaded"
