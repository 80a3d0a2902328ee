"""The benchmarks' stand-in OpenAI-compatible server (benchmarks/throughput.py, cpu_per_call.py):
one fixed chat completion with a native call after `latency_s`, over raw asyncio streams so that
its own CPU is small beside any client's; GET /stats gives what it saw since the last look (the
window of chat calls and their bodies), to measure every client the same way."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import multiprocessing.process
import time
from typing import Any

MODEL = "bench-model"


def _chat_answer() -> bytes:
    call = {
        "id": "call_0",
        "type": "function",
        "function": {"name": "open_dispute", "arguments": json.dumps({"operation_id": "op-AAAAAA", "reason": "fraud"})},
    }
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                }
            ],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
        }
    ).encode()


def _models_answer() -> bytes:
    return json.dumps(
        {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "bench"}]}
    ).encode()


# -- the server ---------------------------------------------------------------------------------


async def _serve(latency_s: float, conn: Any) -> None:
    chat, models = _chat_answer(), _models_answer()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    replies = {True: head % len(models) + models, False: head % len(chat) + chat}
    # since the last GET /stats: the window (first chat request in, last answer out) and the bodies
    seen: dict[str, Any] = {"n": 0, "first": None, "last": None}
    bodies: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                if request.startswith(b"GET /stats"):
                    body = json.dumps({**seen, "bodies": bodies}).encode()
                    seen.update(n=0, first=None, last=None)
                    bodies.clear()
                    writer.write(head % len(body) + body)
                    continue
                get = request.startswith(b"GET")
                if not get and seen["first"] is None:
                    seen["first"] = time.perf_counter()
                at = request.lower().find(b"content-length:")
                if at >= 0:
                    data = await reader.readexactly(int(request[at + 15 : request.index(b"\r\n", at)]))
                    if not get:
                        bodies.append(data.decode())
                if latency_s:
                    await asyncio.sleep(latency_s)
                writer.write(replies[get])
                if not get:
                    seen["n"] += 1
                    seen["last"] = time.perf_counter()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    conn.send(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _server_main(latency_s: float, conn: Any) -> None:
    asyncio.run(_serve(latency_s, conn))


def start_server(latency_s: float) -> tuple[multiprocessing.process.BaseProcess, str]:
    ours, theirs = multiprocessing.Pipe()
    proc = multiprocessing.get_context("fork").Process(target=_server_main, args=(latency_s, theirs), daemon=True)
    proc.start()
    return proc, f"http://127.0.0.1:{ours.recv()}/v1"


def seen_since(url: str) -> dict[str, Any]:
    """What the server saw since the last look (which it then forgets)."""
    import urllib.request

    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats") as resp:
        return json.loads(resp.read())


def canonical(bodies: Any) -> list[str]:
    """The bodies as a multiset: whatever their order of arrival and JSON spacing."""
    return sorted(json.dumps(b, sort_keys=True) for b in bodies)


def served_rate(url: str, expected: list[str]) -> float:
    """Chat calls per second in the window the server saw: the same measure for every client,
    without its start-up and shut-down. The client must have sent exactly the expected bodies."""
    seen = seen_since(url)
    if canonical(json.loads(b) for b in seen["bodies"]) != expected:
        raise SystemExit(f"the server saw {seen['n']} chat calls, not the {len(expected)} expected bodies")
    return seen["n"] / (seen["last"] - seen["first"])
