"""The soak's agents keep one connection per web node, and make a new one when it breaks."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scripts.soak_traffic import KeepAliveClient


class _Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    ports: list[int] = []

    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.ports.append(self.client_address[1])
        answer = json.dumps({"echo": body, "auth": self.headers["Authorization"]}).encode()
        self.send_response(503 if body.get("busy") else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        if body.get("busy"):
            self.send_header("Retry-After", "2")
        if body.get("close"):
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def _server() -> Iterator[tuple[str, list[int]]]:
    ports: list[int] = []
    handler = type("Echo", (_Echo,), {"ports": ports})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", ports
    finally:
        server.shutdown()
        server.server_close()


def test_requests_share_one_connection_until_the_server_closes_it():
    with _server() as (url, ports):
        # given an agent's client
        client = KeepAliveClient(url, headers={"Authorization": "Bearer t"}, timeout=5)
        # when it sends two requests, the second answered with Connection: close, then a third
        first = client.request("POST", "/x", {"n": 1})
        second = client.request("POST", "/x", {"n": 2, "close": True})
        third = client.request("POST", "/x", {"n": 3})
        # then the first two went over one connection and the third over a new one
        assert [first.json()["echo"]["n"], second.json()["echo"]["n"], third.json()["echo"]["n"]] == [1, 2, 3]
        assert first.json()["auth"] == "Bearer t"
        assert ports[0] == ports[1] != ports[2]


def test_an_error_answer_keeps_its_status_and_headers():
    with _server() as (url, _):
        reply = KeepAliveClient(url, headers={}, timeout=5).request("POST", "/x", {"busy": True})
        assert reply.status_code == 503
        assert reply.headers.get("retry-after") == "2"


def test_no_server_is_an_os_error_and_the_next_request_dials_again():
    with _server() as (url, _):
        pass
    client = KeepAliveClient(url, headers={}, timeout=5)
    with pytest.raises((OSError, http.client.HTTPException)):
        client.request("POST", "/x", {})
    assert client.connection is None


def test_a_connection_the_server_closed_while_idle_is_replaced_before_use():
    with _server() as (url, ports):
        client = KeepAliveClient(url, headers={}, timeout=5)
        client.request("POST", "/x", {"n": 1})
        # given the server ended the idle connection (as gunicorn does after its keep-alive time)
        assert client.connection is not None and client.connection.sock is not None
        client.connection.sock.shutdown(2)  # the socket is at its end, as after the peer's FIN
        # when the agent sends its next request
        reply = client.request("POST", "/x", {"n": 2})
        # then it went out over a new connection, and nothing was lost
        assert reply.json()["echo"]["n"] == 2
        assert len(ports) == 2
