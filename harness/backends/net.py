"""The network backend httpcore2 runs on in the harness: asyncio's own transports, without anyio.

httpcore2 takes its sockets from a network backend (`httpcore2.AsyncNetworkBackend`, its
extension point for this); its default under asyncio is anyio's, which costs about a quarter of
a chat call's CPU (a cancel scope around every read and write, the socket's reading resumed and
paused again for each read, an async-library lookup per step: benchmarks/throughput.py). This one
is a plain `asyncio.Protocol` per connection, and does what anyio's does for httpcore2: the same
connect (happy eyeballs, TCP_NODELAY, the local address, the socket options), TLS by asyncio's
`start_tls` with the context httpx2 built, per-operation timeouts, and httpcore2's exceptions
with the OS or SSL error as their cause (`transport.describe` names it). HTTP, the pool, proxies
and TLS settings stay httpx2's and httpcore2's: `install` hands the backend to every pool of a
client, proxies' included.

What a server sends is buffered up to READ_BUFFER_BYTES, then the socket is no longer read until
httpcore2 takes it: the transport's cap on an answer (`transport.Transport`) still bounds what is
held. An idle connection with anything waiting (bytes no request asked for, its end, an error)
reads as expired, as with anyio, so no answer is ever read as another request's.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
from httpcore2._utils import is_socket_readable

# what a connection buffers before it stops reading the socket (httpcore2 reads 64 KiB at a time)
READ_BUFFER_BYTES = 1 << 20
HAPPY_EYEBALLS_DELAY_S = 0.25  # anyio's: the next address is tried after this long


class _Connection(asyncio.Protocol):
    """One socket's bytes in, its write buffer's state and its end, as the stream waits for them."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.eof = False  # the server sent its end
        self.lost = False  # the connection is gone (`error`: why, when it broke)
        self.error: BaseException | None = None
        self.reading_paused = False
        self.writing_paused = False
        self.tls = False
        self.waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > READ_BUFFER_BYTES and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return not self.tls  # a plain socket stays ours to close; a TLS transport closes itself

    def connection_lost(self, exc: BaseException | None) -> None:
        self.lost, self.error = True, exc
        self._wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake()

    async def wait(self, timeout: float | None) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        if timeout is None:
            await self.waiter
        else:
            async with asyncio.timeout(timeout):
                await self.waiter


class Stream(httpcore2.AsyncNetworkStream):
    def __init__(self, conn: _Connection) -> None:
        self._conn = conn
        self._closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        conn = self._conn
        if not conn.chunks and not conn.eof and not conn.lost and not self._closed:
            try:
                await conn.wait(timeout)
            except TimeoutError as exc:
                raise httpcore2.ReadTimeout(exc) from exc
        if conn.chunks:
            chunk = conn.chunks.popleft()
            if len(chunk) > max_bytes:
                chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
                conn.chunks.appendleft(rest)
            conn.buffered -= len(chunk)
            if conn.reading_paused and conn.buffered <= READ_BUFFER_BYTES // 2 and not conn.lost:
                conn.reading_paused = False
                conn.transport.resume_reading()
            return chunk
        if self._closed:
            raise httpcore2.ReadError("the connection was closed")
        if conn.error is not None and not conn.eof:
            raise httpcore2.ReadError(conn.error) from conn.error
        return b""  # the server's end: httpcore2 tells a cut answer from a whole one

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        conn = self._conn
        if self._closed or conn.lost:
            error = conn.error or ConnectionResetError("the connection was closed")
            raise httpcore2.WriteError(error) from error
        conn.transport.write(buffer)
        while conn.writing_paused and not conn.lost:
            try:
                await conn.wait(timeout)
            except TimeoutError as exc:
                raise httpcore2.WriteTimeout(exc) from exc
        if conn.lost and conn.error is not None:
            raise httpcore2.WriteError(conn.error) from conn.error

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._conn.transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        conn = self._conn
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                tls = await loop.start_tls(conn.transport, conn, ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            await self.aclose()
            raise httpcore2.ConnectTimeout(exc) from exc
        except (OSError, ssl.SSLError) as exc:  # SSLCertVerificationError included: its cause is kept
            await self.aclose()
            raise httpcore2.ConnectError(exc) from exc
        conn.transport, conn.tls = tls, True
        return self

    def get_extra_info(self, info: str) -> Any:
        transport = self._conn.transport
        if info == "is_readable":  # an idle connection with anything waiting is not reused
            conn = self._conn
            return bool(conn.chunks) or conn.eof or conn.lost or is_socket_readable(transport.get_extra_info("socket"))
        name = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername", "socket": "socket"}
        return transport.get_extra_info(name[info]) if info in name else None


class Backend(httpcore2.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_connection(
                    _Connection,
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY_S,
                )
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(exc) from exc
        except OSError as exc:  # socket.gaierror included
            raise httpcore2.ConnectError(exc) from exc
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return Stream(conn)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_unix_connection(_Connection, path)
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(exc) from exc
        except OSError as exc:
            raise httpcore2.ConnectError(exc) from exc
        for option in socket_options or ():
            transport.get_extra_info("socket").setsockopt(*option)
        return Stream(conn)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def install(client: httpx2.AsyncClient, backend: httpcore2.AsyncNetworkBackend | None = None) -> int:
    """Give every httpcore2 pool of `client` (the direct one and each proxy's) `backend`, before
    its first connection; how many pools took it. httpx2 lets no backend be named: its transports
    hold their pool as `_pool`, and a pool its backend as `_network_backend` (tests/harness/backends
    check that every pool takes it). A transport without them keeps anyio's backend: slower, the
    same answers."""
    backend = backend or Backend()
    transports = [client._transport, *client._mounts.values()]
    taken = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if isinstance(pool, httpcore2.AsyncConnectionPool) and hasattr(pool, "_network_backend"):
            pool._network_backend = backend
            taken += 1
    return taken
