"""A scripted OpenAI-compatible HTTP server: a test double for a model server, on loopback.

It speaks real HTTP (the harness's `openai` client talks to it as to vLLM), and answers each
chat request with whatever the test's responder returns. Tests only: no number in a report
may come from it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], "Reply"]


class Reply:
    """What the server sends back: a chat message, or an HTTP error, after an optional delay."""

    def __init__(
        self,
        text: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        status: int = 200,
        delay_s: float = 0.0,
        headers: dict[str, str] | None = None,
        prompt_tokens: int = 11,
        completion_tokens: int = 7,
        usage: bool = True,
        body: dict[str, Any] | None = None,
    ):
        self.text, self.tool_calls, self.status, self.delay_s = text, tool_calls, status, delay_s
        self.headers = headers or {}
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens
        # usage=False: the answer carries no `usage` (some servers); body: sent as it is, instead
        # of a chat completion or the default error object
        self.usage, self.body = usage, body


def call(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def tagged(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


class ScriptedServer:
    """`models`: several model names served at once (the responder sees `body["model"]`);
    `requests` holds every chat request body as received, in order."""

    def __init__(self, responder: Responder, model: str = "scripted-model", models: list[str] | None = None):
        self.responder, self.model = responder, model
        self.models = list(models) if models else [model]
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        # the status /v1/models answers with (401: a server that wants a key)
        self.models_status = 200
        # more fields of each /v1/models entry (vLLM's `max_model_len`)
        self.model_fields: dict[str, Any] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models") and server.models_status != 200:
                    self._send(server.models_status, {"error": {"message": f"scripted {server.models_status}"}})
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {"id": m, "object": "model", "owned_by": "tests", **server.model_fields}
                                for m in server.models
                            ],
                        },
                    )
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.requests.append(body)
                server.headers_seen.append(dict(self.headers))
                reply = server.responder(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.body is not None:
                    self._send(reply.status, reply.body, reply.headers)
                    return
                if reply.status != 200:
                    self._send(
                        reply.status,
                        {"error": {"message": f"scripted {reply.status}", "type": "scripted"}},
                        reply.headers,
                    )
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.text}
                if reply.tool_calls:
                    message["tool_calls"] = reply.tool_calls
                completion: dict[str, Any] = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model") if body.get("model") in server.models else server.model,
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
                    ],
                }
                if reply.usage:
                    completion["usage"] = {
                        "prompt_tokens": reply.prompt_tokens,
                        "completion_tokens": reply.completion_tokens,
                        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                    }
                self._send(200, completion)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client killed mid-request (chaos tests) is not the server's failure

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def feedback_turns(body: dict[str, Any]) -> int:
    """How many failed attempts the conversation shows (full history: messages after the assistant's)."""
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def last_message(body: dict[str, Any]) -> str:
    return str(body["messages"][-1].get("content") or "")
