"""A local OpenAI-compatible model for `review-quality --llm local`: a careful literal reader.

It is not a language model. It reads only what the reviewer's prompt shows it, the way the
prompt asks a model to: each operation's `evidenceClause` and `governedBy`, with the value
proposed. It approves when the clause states the value and nothing in the clause or the words
governing it marks a question, a condition, a wish or plan, a joke or someone else's words;
otherwise it escalates. That makes the benchmark measure the prompt itself: does every
operation reach the model with the clause that carries it (an operation without one can only
be escalated), and does adding a model ever loosen what the rules decided (it must not).
It also records what each prompt cost, in characters.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_DATA = re.compile(r"<<<UNTRUSTED-DATA (\w+)>>>\n(.*)\n<<<END UNTRUSTED-DATA \1>>>", re.DOTALL)
_HEDGES = re.compile(
    r"\?|\b(if|would|could|might|maybe|perhaps|wish|hope|someday|one day|going to|gonna|will|plan|planning|"
    r"want to|wants to|said|says|told|thinks|joke|kidding|lol|haha|jk)\b"
    r"|如果|要是|也许|可能|希望|打算|将来|以后|明年|说过|他说|她说|开玩笑|吗|吧|？",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.IGNORECASE)
_STOP = {"a", "an", "the", "my", "i", "is", "am", "are", "of", "to", "and", "in", "on", "for", "with"}


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def judge(operation: dict[str, Any]) -> tuple[str, str]:
    clause = str(operation.get("evidenceClause") or "")
    if not clause:
        return "escalate", "the prompt shows no clause for this operation"
    governing = str(operation.get("governedBy") or clause)
    if _HEDGES.search(governing):
        return "escalate", "the clause is hedged, asked, planned or reported"
    value_terms = _terms(str(operation.get("newValue") or ""))
    if value_terms and not value_terms & _terms(clause):
        return "escalate", "the clause does not state the value"
    return "approve", "the clause states the value plainly"


@dataclass
class ReaderStats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: int = 0
    operations: int = 0
    with_clause: int = 0
    prompt_chars: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        chars = sorted(self.prompt_chars) or [0]
        return {
            "requests": self.requests,
            "operations": self.operations,
            "operationsWithClausePct": round(100 * self.with_clause / self.operations, 1)
            if self.operations
            else None,
            "promptCharsP50": chars[len(chars) // 2],
            "promptCharsMax": chars[-1],
        }


@contextmanager
def careful_reader() -> Iterator[tuple[str, ReaderStats]]:
    """Serve the reader on 127.0.0.1; yields its base URL (for OPENAI_BASE_URL) and its stats."""
    stats = ReaderStats()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = "".join(str(m.get("content", "")) for m in request["messages"])
            found = _DATA.search(request["messages"][-1]["content"])
            operations = json.loads(found.group(2))["operations"] if found else []
            answers = []
            for op in operations:
                verdict, reason = judge(op)
                answers.append({"index": op["index"], "verdict": verdict, "reason": reason, "risk": "low"})
            with stats.lock:
                stats.requests += 1
                stats.operations += len(operations)
                stats.with_clause += sum(1 for op in operations if op.get("evidenceClause"))
                stats.prompt_chars.append(len(prompt))
            body = json.dumps({
                "id": "chatcmpl-reader", "object": "chat.completion", "created": 0, "model": request.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps({"operations": answers})}}],
                "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 20,
                          "total_tokens": len(prompt) // 4 + 20},
            }).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", stats
    finally:
        server.shutdown()
        server.server_close()
