"""A threaded loopback HTTP/1.1 server that answers each request with the exact bytes a test gives:
for answers no well-behaved server sends (malformed status lines, deep JSON, redirects). It keeps
the (method, path) of every request."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable
from typing import Any


class RawServer:
    """Answers each request with `reply(method, path)`, keep-alive, until closed."""

    def __init__(self, reply: Callable[[str, str], bytes]):
        seen: list[tuple[str, str]] = []
        self.requests = seen

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while line := self.rfile.readline():
                    length = 0
                    while (header := self.rfile.readline()) not in (b"\r\n", b""):
                        if header.lower().startswith(b"content-length:"):
                            length = int(header.split(b":")[1])
                    self.rfile.read(length)
                    method, path = line.decode(errors="replace").split()[:2]
                    seen.append((method, path))
                    self.wfile.write(reply(method, path))

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def chats(self) -> int:
        """The chat requests it was sent (every POST)."""
        return sum(method == "POST" for method, _ in self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
