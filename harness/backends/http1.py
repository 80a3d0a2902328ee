"""Keep-alive HTTP/1.1 for the chat calls: h11's protocol machine over asyncio's transports.

A call writes its request on its own socket before it waits for the answer. aiohttp 3.14 on
Python 3.11 writes each request body from a task of its own, and asyncio runs that task only
after every callback already queued. So when 32 answers arrive together, each next request waits
until the whole batch has been handled, and the batches never spread out. Measured with the
server and harness run of benchmarks/throughput.py at C=32 and L=50 ms (medians of 5 runs):
on Python 3.12, whose eager tasks aiohttp uses, 574 calls/s with aiohttp's write eager and 498
with it deferred; on 3.11, 514-537 with aiohttp and 564-579 with this client.

One connection per call in flight, kept open for the next call. A kept connection that the
server closed while it was idle (no byte of an answer came back) is dropped and the call goes on
another, as aiohttp and httpx do; a new connection that fails is the call's error. Proxies are
those `proxy` names: an http:// target goes through the proxy in absolute form, and an https://
one through a CONNECT tunnel.
"""

from __future__ import annotations

import asyncio
import base64
import ssl as _ssl
from typing import Any
from urllib.parse import unquote, urlsplit

import h11

Headers = list[tuple[bytes, bytes]]


class HttpError(Exception):
    """The exchange broke: no connection, a connection lost mid-answer, a malformed answer."""


class HttpTimeout(HttpError):
    """No whole answer within the timeout."""


class _Origin:
    """Where a URL's requests go: scheme, host, port, the Host header they carry, and the
    request target (path and query)."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = host if parts.port is None else f"{host}:{parts.port}"
        self.host_port = f"{host}:{self.port}"  # CONNECT's target
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.userinfo = (unquote(parts.username or ""), unquote(parts.password or "")) if parts.username else None


class _Connection(asyncio.Protocol):
    """One socket and its h11 state; at most one exchange at a time."""

    def __init__(self) -> None:
        self.h11 = h11.Connection(h11.CLIENT)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[tuple[int, Headers, bytes]] | None = None
        self.lost = False
        self.answered = False  # a byte of the current answer arrived
        self.eof = False
        self._status = 0
        self._headers: Headers = []
        self._body: list[bytes] = []

    # -- asyncio's side
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.waiter is None:  # bytes nobody asked for: the connection is not reusable
            self.close()
            return
        self.answered = True
        self.h11.receive_data(data)
        self._pump()

    def eof_received(self) -> bool:
        self.eof = True
        self.h11.receive_data(b"")
        self._pump()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._fail(HttpError(f"the server closed the connection{f' ({exc})' if exc else ''}"))

    # -- ours
    def send(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> asyncio.Future[tuple[int, Headers, bytes]]:
        assert self.transport is not None
        if self.lost:
            raise HttpError("the server closed the connection")
        try:
            data = (self.h11.send(h11.Request(method=method, target=target, headers=headers))
                    + self.h11.send(h11.Data(data=body)) + self.h11.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            # h11's message quotes the header, and the Authorization header holds the key
            raise ValueError("the request's headers are not valid HTTP/1.1: a header value (the API key?) "
                             "holds a line break or another control character") from None
        self.waiter = asyncio.get_running_loop().create_future()
        self.answered, self._status, self._headers, self._body = False, 0, [], []
        self.transport.write(data)
        return self.waiter

    def reusable(self) -> bool:
        """After an answer: ready for the next exchange (the server keeps the connection open)."""
        if (self.lost or self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE
                or self.h11.trailing_data[0]):  # bytes after the answer: nothing to build on
            return False
        self.h11.start_next_cycle()
        self.waiter = None
        return True

    def close(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, exc: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)

    def _pump(self) -> None:
        try:
            while True:
                event = self.h11.next_event()
                kind = type(event)
                if event is h11.NEED_DATA:
                    return
                if event is h11.PAUSED:  # a proxy's 2xx to CONNECT: the tunnel is open
                    if self._status and self.waiter is not None and not self.waiter.done():
                        self.waiter.set_result((self._status, self._headers, b""))
                    return
                if kind is h11.Data:
                    self._body.append(event.data)
                elif kind is h11.Response:
                    self._status, self._headers = event.status_code, list(event.headers)
                elif kind is h11.EndOfMessage:
                    if self.waiter is not None and not self.waiter.done():
                        self.waiter.set_result((self._status, self._headers, b"".join(self._body)))
                    return
                elif kind is h11.ConnectionClosed:
                    self._fail(HttpError("the server closed the connection before the answer ended"))
                    return
                # an InformationalResponse (1xx) is followed by the real answer
        except h11.RemoteProtocolError as exc:
            self._fail(HttpError("the server closed the connection before the answer ended" if self.eof
                                 else f"the server's answer is not valid HTTP/1.1: {exc}"))
            self.close()


class Http1Client:
    """POSTs to one URL over keep-alive connections, each call with a total timeout."""

    def __init__(self, url: str, timeout_s: float, proxy: str | None = None, user_agent: str = "repair-harness"):
        self.origin = _Origin(url)
        self.timeout_s = timeout_s
        self.proxy = _Origin(proxy) if proxy else None
        if self.proxy is not None and self.proxy.tls:
            raise ValueError(f"the proxy {proxy} is https://: only http:// proxies are supported (an https:// target "
                             "goes through an http:// proxy by CONNECT)")
        # through a proxy, a plain-HTTP request names its whole URL (absolute form)
        self._target = url if self.proxy is not None and not self.origin.tls else self.origin.target
        self._base = [("Host", self.origin.authority), ("User-Agent", user_agent)]
        if self.proxy is not None and self.proxy.userinfo and not self.origin.tls:
            self._base.append(("Proxy-Authorization", _basic(self.proxy.userinfo)))
        self._idle: list[_Connection] = []
        self._tls: _ssl.SSLContext | None = None

    async def post(self, body: bytes, headers: list[tuple[str, str]]) -> tuple[int, Headers, bytes]:
        """(status, headers, body) of the answer; HttpTimeout or HttpError when there is none."""
        headers = [*self._base, *headers, ("Content-Length", str(len(body)))]
        conn: _Connection | None = None
        try:
            async with asyncio.timeout(self.timeout_s):
                while True:
                    conn = self._pop_idle()
                    reused = conn is not None
                    conn = conn or await self._connect()
                    try:
                        answer = await conn.send("POST", self._target, headers, body)
                        break
                    except HttpError:
                        conn.close()
                        if not reused or conn.answered:
                            raise
                        # the server closed this idle connection: the request never reached it
        except BaseException as exc:  # timed out, cancelled or failed: the connection is mid-exchange
            if conn is not None:
                conn.close()
            if isinstance(exc, TimeoutError):
                raise HttpTimeout(f"no answer within {self.timeout_s:g} s") from None
            raise
        if conn.reusable():
            self._idle.append(conn)
        else:
            conn.close()
        return answer

    def _pop_idle(self) -> _Connection | None:
        while self._idle:
            conn = self._idle.pop()
            if not conn.lost:  # one the server closed while it waited is dropped
                return conn
        return None

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        hop = self.proxy or self.origin
        tunnel = self.proxy is not None and self.origin.tls
        try:
            _, conn = await loop.create_connection(
                _Connection, hop.host, hop.port,
                ssl=self._context() if self.origin.tls and not tunnel else None,
                server_hostname=self.origin.host if self.origin.tls and not tunnel else None,
            )
            if tunnel:
                conn = await self._tunnel(conn)
        except OSError as exc:
            raise HttpError(f"cannot connect to {hop.host}:{hop.port}: {exc.strerror or exc}") from None
        return conn

    async def _tunnel(self, conn: _Connection) -> _Connection:
        """CONNECT through the proxy, then TLS to the origin inside the tunnel."""
        assert self.proxy is not None and conn.transport is not None
        target = self.origin.host_port
        headers = [("Host", target)]
        if self.proxy.userinfo:
            headers.append(("Proxy-Authorization", _basic(self.proxy.userinfo)))
        try:
            status, _, _ = await conn.send("CONNECT", target, headers, b"")
        except HttpError:
            conn.close()
            raise
        if status // 100 != 2:
            conn.close()
            raise HttpError(f"the proxy refused to tunnel to {target}: HTTP {status}")
        inner = _Connection()
        try:
            transport = await asyncio.get_running_loop().start_tls(conn.transport, inner, self._context(),
                                                                   server_hostname=self.origin.host)
        except BaseException:  # an origin whose certificate fails, say: the proxy's socket goes too
            conn.close()
            raise
        inner.connection_made(transport)
        return inner

    def _context(self) -> _ssl.SSLContext:
        if self._tls is None:
            self._tls = _ssl.create_default_context()
        return self._tls


def _basic(userinfo: tuple[str, str]) -> str:
    return "Basic " + base64.b64encode(f"{userinfo[0]}:{userinfo[1]}".encode()).decode()
