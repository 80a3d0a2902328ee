"""A scripted `vllm` executable: `python tests/scripted_vllm.py serve MODEL [flags]`, what the
harness launches in place of vLLM when $REPAIR_HARNESS_VLLM names this file. Tests only: it runs
no model, and no number in a report may come from it.

It records its argv, its CUDA_VISIBLE_DEVICES and its start and stop (JSON lines appended to
$SCRIPTED_VLLM_LOG), and serves what the harness reads of vLLM: /health, /v1/models (with
`max_model_len`), /metrics (`vllm:num_requests_running` / `vllm:num_requests_waiting`: a batch of
$SCRIPTED_VLLM_BATCH requests runs at once, each for $SCRIPTED_VLLM_DELAY_S, the rest wait), and
/v1/chat/completions. $SCRIPTED_VLLM_MODE reproduces a known server failure:
  ok               the preflight's tool call comes back as a native call
  content_call     the call is left in the message content (a parser that did not read it)
  bad_args         the call's arguments are `{}""` (a parser that broke the JSON)
  drop_tool        prompt tokens leave `tool` messages out (a template that drops them)
  nondeterministic every answer differs
  short_context    /v1/models reports half the --max-model-len
Every other request is answered with a sentence and no call.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _flags(argv: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    key = None
    for arg in argv:
        if arg.startswith("--"):
            key = arg[2:]
            out.setdefault(key, [])
        elif key is not None:
            out[key].append(arg)
    return out


def _log(event: str, **fields: Any) -> None:
    path = os.environ.get("SCRIPTED_VLLM_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, "pid": os.getpid(), "t": time.time(), **fields}) + "\n")


def main(argv: list[str]) -> None:
    assert argv[:1] == ["serve"], argv
    flags = _flags(argv[2:])
    mode = os.environ.get("SCRIPTED_VLLM_MODE", "ok")
    names = flags.get("served-model-name") or [argv[1]]
    max_len = int((flags.get("max-model-len") or ["8192"])[0])
    batch = int(os.environ.get("SCRIPTED_VLLM_BATCH", "4"))
    delay = float(os.environ.get("SCRIPTED_VLLM_DELAY_S", "0.05"))
    slots = threading.Semaphore(batch)
    state = {"inflight": 0, "answers": 0}
    lock = threading.Lock()
    _log("start", argv=argv, cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"), flags=flags)

    def prompt_tokens(body: dict[str, Any]) -> int:
        chars = sum(
            len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or ""))
            for m in body.get("messages", [])
            if not (mode == "drop_tool" and m.get("role") == "tool")
        )
        return 10 + chars // 4 + len(json.dumps(body.get("tools") or [])) // 4

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        asked = body.get("messages", [{}])[-1]
        with lock:
            state["answers"] += 1
            n = state["answers"]
        message: dict[str, Any] = {"role": "assistant", "content": "I cannot help with that."}
        if mode == "nondeterministic":
            message["content"] += f" ({n})"
        if "get_weather" in tools and asked.get("role") == "user":
            call = {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}
            if mode == "content_call":
                message["content"] = (
                    f"<tool_call>{json.dumps({'name': 'get_weather', 'arguments': {'city': 'Paris'}})}</tool_call>"
                )
            else:
                if mode == "bad_args":
                    call["arguments"] = '{}""'
                message = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": f"call_{n}", "type": "function", "function": call}],
                }
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens(body),
                "completion_tokens": 5,
                "total_tokens": prompt_tokens(body) + 5,
            },
        }

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any, kind: str = "application/json") -> None:
            data = (json.dumps(body) if kind == "application/json" else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, {})
            elif self.path == "/v1/models":
                shown = max_len // 2 if mode == "short_context" else max_len
                self._send(
                    200,
                    {"object": "list", "data": [{"id": n, "object": "model", "max_model_len": shown} for n in names]},
                )
            elif self.path == "/metrics":
                with lock:
                    inflight = state["inflight"]
                running, waiting = min(inflight, batch), max(0, inflight - batch)
                text = (
                    f'vllm:num_requests_running{{model_name="{names[0]}",engine="0"}} {float(running)}\n'
                    f'vllm:num_requests_waiting{{model_name="{names[0]}",engine="0"}} {float(waiting)}\n'
                )
                self._send(200, text, "text/plain; version=0.0.4")
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with lock:
                state["inflight"] += 1
            try:
                with slots:
                    time.sleep(delay)
                    reply = answer(body)
            finally:
                with lock:
                    state["inflight"] -= 1
            self._send(200, reply)

    host = (flags.get("host") or ["127.0.0.1"])[0]
    port = int((flags.get("port") or ["8000"])[0])
    httpd = ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True

    def stop(signum: int, frame: Any) -> None:
        _log("stop", signal=signum)
        threading.Thread(target=httpd.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    httpd.serve_forever()
    httpd.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
