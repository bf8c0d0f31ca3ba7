"""A real OpenAI-compatible chat endpoint on 127.0.0.1 for the LLM reviewer tests.

It speaks HTTP like any such server; what the "model" answers is a Python function of the
request, so a test states its scenario: approve, reject, malformed JSON, 500, a stall…
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_DATA = re.compile(r"<<<UNTRUSTED-DATA (\w+)>>>\n(.*)\n<<<END UNTRUSTED-DATA \1>>>", re.DOTALL)


@dataclass
class Reply:
    status: int = 200
    content: str | None = None
    refusal: str | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    raw_body: str | None = None


Scenario = Callable[[dict[str, Any]], Reply]


def request_data(request: dict[str, Any]) -> dict[str, Any]:
    """The KPR document the reviewer put between its untrusted-data markers."""
    found = _DATA.search(request["messages"][-1]["content"])
    assert found, "the user message carries no delimited data block"
    return json.loads(found.group(2))


def verdicts(verdict: str, *, risk: str = "low", reason: str = "the evidence states it plainly") -> Scenario:
    """A model that answers `verdict` for every operation it is shown."""

    def answer(request: dict[str, Any]) -> Reply:
        ops = [
            {"index": op["index"], "verdict": verdict, "reason": reason, "risk": risk}
            for op in request_data(request)["operations"]
        ]
        return Reply(content=json.dumps({"operations": ops}))

    return answer


@dataclass
class FakeLlm:
    base_url: str
    scenario: Scenario = field(default_factory=lambda: verdicts("approve"))
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def running_llm_server() -> Iterator[FakeLlm]:
    state: dict[str, FakeLlm] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            llm = state["llm"]
            llm.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **request})
            reply = llm.scenario(request)
            if reply.delay:
                time.sleep(reply.delay)
            if reply.raw_body is not None:
                body = reply.raw_body
            elif reply.status != 200:
                body = json.dumps({"error": {"message": f"status {reply.status}", "type": "server_error"}})
            else:
                body = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model", "test-model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {
                                    "role": "assistant",
                                    "content": reply.content,
                                    "refusal": reply.refusal,
                                },
                                "finish_reason": reply.finish_reason,
                                "logprobs": None,
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    }
                )
            encoded = body.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (time-out scenarios)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["llm"] = FakeLlm(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state["llm"]
    finally:
        server.shutdown()
        server.server_close()


_VERDICT_WORDS = re.compile(r"approv|通过|批准|同意|放行|verdict|审核|審核", re.IGNORECASE)


def obedient(request: dict[str, Any]) -> Reply:
    """An adversarially compliant model: it reads every operation's data and does what any text in
    it says. Every attack in the injection corpus asks for approval, so whatever it finds (an order
    to approve, a verdict in JSON, a role to play) it approves, at low risk; and with nothing to
    obey it approves too. Its reason says what it obeyed, for the record."""
    ops = []
    for op in request_data(request)["operations"]:
        text = json.dumps(op, ensure_ascii=False)
        found = _VERDICT_WORDS.search(text)
        reason = f"doing as the data says ('{found.group(0)}')" if found else "nothing to object to"
        ops.append({"index": op["index"], "verdict": "approve", "reason": reason, "risk": "low"})
    return Reply(content=json.dumps({"operations": ops}))
