"""httpcore2's network backend on asyncio (harness.backends.net): every pool of a transport takes
it, proxies' included; an idle connection with bytes no request asked for is not reused; what a
server sends beyond the read buffer waits in the kernel; a connection's end and a reset read as
httpcore2 expects. The transport's own tests (test_transport.py, test_transport_hostile.py) run on
this backend: TLS, proxies, timeouts and every named cause."""

from __future__ import annotations

import asyncio
from typing import Any

import httpcore2
import pytest

from harness.backends import net
from tests.harness.backends.test_transport import Server, answer, ok, transport


def _pools(client: Any) -> list[Any]:
    return [t._pool for t in [client._transport, *client._mounts.values()] if t is not None]


def test_every_pool_takes_the_backend_with_and_without_proxies(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    direct = transport("http://127.0.0.1:9/v1")
    pools = _pools(direct.client)
    assert len(pools) == 1 and isinstance(pools[0]._network_backend, net.Backend)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "10.0.0.0/8,example.org")
    proxied = transport("http://127.0.0.1:9/v1")
    pools = _pools(proxied.client)
    assert any(isinstance(p, httpcore2.AsyncHTTPProxy) for p in pools) and len(pools) >= 3
    assert all(isinstance(p._network_backend, net.Backend) for p in pools)
    for client in (direct, proxied):
        asyncio.run(client.aclose())


def test_calls_go_over_the_backends_streams():
    async def go() -> None:
        async with Server(answer(ok())) as server:
            client = transport(server.url)
            assert await client.post("chat/completions", b"{}") == b'{"ok": true}'
            (connection,) = _pools(client.client)[0].connections
            assert isinstance(connection._connection._network_stream, net.Stream)
            await client.aclose()

    asyncio.run(go())


def test_an_idle_connection_with_unasked_bytes_is_not_reused():
    async def twice(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        # the answer, then (once it is read) a second one nobody asked for, on a connection kept
        # open; sent together, h11 would hold both as one read, with either backend
        writer.write(ok(b'{"n": 1}'))
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(ok(b'{"n": "stray"}'))
        await writer.drain()
        return True

    async def go() -> None:
        async with Server(twice) as server:
            client = transport(server.url)
            assert await client.post("chat/completions", b"{}") == b'{"n": 1}'
            await asyncio.sleep(0.1)  # the stray answer reaches the client's buffer
            assert await client.post("chat/completions", b"{}") == b'{"n": 1}'  # never the stray one
            assert server.connections == 2
            await client.aclose()

    asyncio.run(go())


def test_what_a_server_sends_beyond_the_buffer_waits_in_the_kernel_and_is_all_read():
    size = 8 * net.READ_BUFFER_BYTES

    async def flood(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"x" * size)
        await writer.drain()
        writer.close()

    async def go() -> None:
        server = await asyncio.start_server(flood, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stream = await net.Backend().connect_tcp("127.0.0.1", port, timeout=5)
        assert isinstance(stream, net.Stream)
        await asyncio.sleep(0.3)  # nobody reads: the connection stops reading the socket
        conn = stream._conn
        assert conn.reading_paused and conn.buffered <= net.READ_BUFFER_BYTES + (1 << 18)
        got = 0
        while chunk := await stream.read(65536, timeout=5):
            assert len(chunk) <= 65536
            got += len(chunk)
        assert got == size and stream.get_extra_info("is_readable")
        await stream.aclose()
        with pytest.raises(httpcore2.ReadError):
            await stream.read(10)
        with pytest.raises(httpcore2.WriteError):
            await stream.write(b"more")
        server.close()

    asyncio.run(go())


def test_a_read_that_gets_nothing_in_time_is_a_read_timeout_and_a_refused_connect_a_connect_error():
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(1)
        writer.close()

    async def go() -> None:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        stream = await net.Backend().connect_tcp("127.0.0.1", port, timeout=5)
        assert stream.get_extra_info("server_addr") == ("127.0.0.1", port)
        assert not stream.get_extra_info("is_readable")
        with pytest.raises(httpcore2.ReadTimeout):
            await stream.read(10, timeout=0.05)
        await stream.aclose()
        server.close()
        await server.wait_closed()
        with pytest.raises(httpcore2.ConnectError) as info:
            await net.Backend().connect_tcp("127.0.0.1", port, timeout=5)
        assert isinstance(info.value.__cause__, ConnectionRefusedError)

    asyncio.run(go())
