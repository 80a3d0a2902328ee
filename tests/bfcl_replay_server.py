"""An OpenAI-compatible server that plays a scripted model on BFCL multi-turn entries, and keeps
every chat request it is sent: the ground of tests/bfcl_live_compare.py.

Each entry's model is a list of answers, one per step in order (an answer: a `message` as the
server sends it). A request is the entry's whose first user message it carries, and the step is
the number of assistant messages in it: whoever sends the request, the same conversation gets the
same answer. Answers come from a published BFCL result file's `result` (a real model's logged
run: each step's calls, or its text) or from a synthetic model (tests/bfcl_synthetic.py).
A request marked `X-Repair-Harness-Request: preflight` (harness.serving.preflight) is answered as
a served model would (a call of the tool offered, a short text) and kept apart.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAST_THE_SCRIPT = {"role": "assistant", "content": "Past the script: no more answers.", "tool_calls": None}


def calls_message(calls: list[tuple[str, str]], step: int, content: Any = None) -> dict[str, Any]:
    """An assistant message with native calls (`name`, the arguments' text as sent)."""
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"call_{step}_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def from_result(steps: list[list[Any]]) -> list[dict[str, Any]]:
    """A BFCL result file's `result` (turns of steps) as answers: an FC step's `[{name: arguments}]`
    is those native calls (`[]`: an empty list of calls, the text beside it not logged), a text
    step (prompting, or an FC answer without calls) is that content."""
    out: list[dict[str, Any]] = []
    for turn in steps:
        for step in turn:
            n = len(out)
            if isinstance(step, list):
                pairs = [
                    (name, args if isinstance(args, str) else json.dumps(args))
                    for d in step
                    for name, args in d.items()
                ]
                out.append(calls_message(pairs, n, content="" if not pairs else None))
            else:
                out.append({"role": "assistant", "content": step, "tool_calls": None})
    return out


class ReplayServer:
    """`scripts`: entry id -> answers; `firsts`: the first user message's content -> entry id."""

    def __init__(self, model: str, scripts: dict[str, list[dict[str, Any]]], firsts: dict[str, str]):
        self.model, self.scripts, self.firsts = model, scripts, firsts
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (entry id, body), in order received
        self.preflight: list[dict[str, Any]] = []
        self.unknown: list[dict[str, Any]] = []
        lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": server.model, "object": "model"}]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with lock:
                    message = server.answer(body, self.headers.get("X-Repair-Harness-Request"))
                usage = {"prompt_tokens": len(raw) // 4, "completion_tokens": 7, "total_tokens": len(raw) // 4 + 7}
                self._send(
                    {
                        "id": "chatcmpl-replay",
                        "object": "chat.completion",
                        "created": 0,
                        "model": server.model,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": usage,
                    }
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, body: dict[str, Any], mark: str | None) -> dict[str, Any]:
        if mark == "preflight":
            self.preflight.append(body)
            if body.get("tools"):
                name = body["tools"][0]["function"]["name"]
                return calls_message([(name, '{"city": "Paris"}')], 0)
            return {"role": "assistant", "content": "Red, orange and yellow."}
        first = next((m.get("content") for m in body["messages"] if m.get("role") == "user"), None)
        entry = self.firsts.get(str(first))
        if entry is None:
            self.unknown.append(body)
            return PAST_THE_SCRIPT
        self.requests.append((entry, body))
        step = sum(m.get("role") == "assistant" for m in body["messages"])
        script = self.scripts[entry]
        return script[step] if step < len(script) else PAST_THE_SCRIPT

    def by_entry(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for entry, body in self.requests:
            out.setdefault(entry, []).append(body)
        return out

    def reset(self) -> None:
        self.requests, self.preflight, self.unknown = [], [], []

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
