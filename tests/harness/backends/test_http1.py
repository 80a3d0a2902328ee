"""The chat calls' HTTP/1.1 client against real sockets on loopback: keep-alive, a connection the
server dropped while idle, answers it cuts or garbles, timeouts, chunked bodies, TLS, proxies."""

from __future__ import annotations

import asyncio
import base64
import ssl
from typing import Any, Awaitable, Callable

import pytest
import trustme

from harness.backends.http1 import Http1Client, HttpError, HttpTimeout

HEADERS = [("Content-Type", "application/json")]
Handler = Callable[[dict[str, Any], asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


def ok(body: bytes = b'{"ok": true}', extra: str = "") -> bytes:
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


async def read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    line, *rows = head.decode().split("\r\n")
    headers = {k.lower(): v for k, v in (r.split(": ", 1) for r in rows if r)}
    body = await reader.readexactly(int(headers.get("content-length", 0)))
    return {"line": line, "headers": headers, "body": body}


class Server:
    """An asyncio server on loopback whose `handler` answers each request (True: keep the
    connection for the next one); it counts connections and keeps every request."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None):
        self.handler, self.tls = handler, tls
        self.connections = 0
        self.requests: list[dict[str, Any]] = []

    async def __aenter__(self) -> "Server":
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                while (request := await read_request(reader)) is not None:
                    self.requests.append(request)
                    if not await self.handler(request, reader, writer):
                        break
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://localhost:{self.port}/v1/chat/completions"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.server.close()


def answer(data: bytes, keep: bool = True) -> Handler:
    async def handler(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        await writer.drain()
        return keep
    return handler


def test_calls_reuse_one_connection_and_send_what_they_were_given():
    async def go() -> None:
        async with Server(answer(ok())) as server:
            client = Http1Client(server.url, timeout_s=5)
            for i in range(5):
                status, headers, body = await client.post(b'{"n": %d}' % i, HEADERS)
                assert (status, body) == (200, b'{"ok": true}') and (b"content-type", b"application/json") in headers
            await client.aclose()
        assert server.connections == 1
        assert [r["body"] for r in server.requests] == [b'{"n": %d}' % i for i in range(5)]
        first = server.requests[0]
        assert first["line"] == "POST /v1/chat/completions HTTP/1.1"
        assert first["headers"]["host"] == f"localhost:{server.port}" and first["headers"]["content-length"] == "8"

    asyncio.run(go())


def test_concurrent_calls_each_have_a_connection_and_keep_it():
    async def slow(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.05)
        writer.write(ok(request["body"]))
        return True

    async def go() -> None:
        async with Server(slow) as server:
            client = Http1Client(server.url, timeout_s=5)
            for _ in range(3):
                answers = await asyncio.gather(*(client.post(b"%d" % i, HEADERS) for i in range(8)))
                assert [a[2] for a in answers] == [b"%d" % i for i in range(8)]
            await client.aclose()
        assert server.connections == 8 and len(server.requests) == 24

    asyncio.run(go())


def test_a_server_that_closes_after_each_answer_gets_a_new_connection_each_time():
    # an HTTP/1.0 answer, and one that says Connection: close, end their connection
    for data in (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", ok(b"ok", "Connection: close\r\n")):
        async def go() -> None:
            async with Server(answer(data, keep=False)) as server:
                client = Http1Client(server.url, timeout_s=5)
                for _ in range(3):
                    assert (await client.post(b"{}", HEADERS))[2] == b"ok"
                await client.aclose()
            assert server.connections == 3

        asyncio.run(go())


def test_a_connection_dropped_while_idle_is_replaced_once_and_the_call_goes_through():
    dropped = []

    async def drop_second(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        if request["body"] == b"2" and not dropped:
            dropped.append(request)
            writer.transport.abort()  # read, never answered: the kept connection was stale
            return False
        writer.write(ok(request["body"]))
        return True

    async def go() -> None:
        async with Server(drop_second) as server:
            client = Http1Client(server.url, timeout_s=5)
            assert (await client.post(b"1", HEADERS))[2] == b"1"
            assert (await client.post(b"2", HEADERS))[2] == b"2"
            await client.aclose()
        assert server.connections == 2 and [r["body"] for r in server.requests] == [b"1", b"2", b"2"]

    asyncio.run(go())


def test_a_fresh_connection_cut_before_or_during_the_answer_is_an_error():
    cut = ok(b'{"ok": true}')[:-4]
    for data in (b"", cut):
        async def go() -> None:
            async with Server(answer(data, keep=False)) as server:
                client = Http1Client(server.url, timeout_s=5)
                with pytest.raises(HttpError, match="closed the connection"):
                    await client.post(b"{}", HEADERS)
                await client.aclose()
            assert len(server.requests) == 1  # not sent again: the server may have acted on it

        asyncio.run(go())


def test_an_answer_that_is_not_http_is_an_error_and_a_refused_port_too():
    async def go() -> None:
        async with Server(answer(b"SSH-2.0-OpenSSH\r\n\r\n")) as server:
            client = Http1Client(server.url, timeout_s=5)
            with pytest.raises(HttpError, match="not valid HTTP/1.1"):
                await client.post(b"{}", HEADERS)
            url = server.url
        with pytest.raises(HttpError, match="cannot connect to localhost"):
            await Http1Client(url, timeout_s=5).post(b"{}", HEADERS)

    asyncio.run(go())


def test_a_slow_answer_is_a_timeout_and_its_connection_is_not_reused():
    async def slow_first(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.5 if request["body"] == b"slow" else 0)
        writer.write(ok(request["body"]))
        return True

    async def go() -> None:
        async with Server(slow_first) as server:
            client = Http1Client(server.url, timeout_s=0.2)
            with pytest.raises(HttpTimeout, match="no answer within 0.2 s"):
                await client.post(b"slow", HEADERS)
            # the late answer to "slow" must not be read as the answer to the next call
            assert (await client.post(b"fast", HEADERS))[2] == b"fast"
            await client.aclose()
        assert server.connections == 2

    asyncio.run(go())


def test_a_chunked_answer_and_an_interim_100_are_read_whole():
    chunked = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n")

    async def go() -> None:
        async with Server(answer(chunked)) as server:
            client = Http1Client(server.url, timeout_s=5)
            for _ in range(2):
                assert await client.post(b"{}", HEADERS) == (200, [(b"transfer-encoding", b"chunked")], b'{"a": 1}')
            await client.aclose()
        assert server.connections == 1

    asyncio.run(go())


@pytest.fixture(scope="module")
def tls() -> tuple[ssl.SSLContext, trustme.CA]:
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    return context, ca


def _trusting(ca: trustme.CA, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client's default context trusts the test CA (as a user's system store trusts theirs)."""
    real = ssl.create_default_context

    def with_ca(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        context = real(*args, **kwargs)
        ca.configure_trust(context)
        return context

    monkeypatch.setattr(ssl, "create_default_context", with_ca)


def test_https_is_verified_and_kept_alive(tls, monkeypatch):
    context, ca = tls

    async def go(trusted: bool) -> None:
        async with Server(answer(ok()), tls=context) as server:
            client = Http1Client(server.url, timeout_s=5)
            if not trusted:
                with pytest.raises(HttpError, match="CERTIFICATE_VERIFY_FAILED"):
                    await client.post(b"{}", HEADERS)
                return
            for _ in range(3):
                assert (await client.post(b"{}", HEADERS))[0] == 200
            await client.aclose()
        assert server.connections == 1

    asyncio.run(go(trusted=False))
    _trusting(ca, monkeypatch)
    asyncio.run(go(trusted=True))


def test_a_plain_target_goes_through_the_proxy_in_absolute_form_with_its_credentials():
    async def go() -> None:
        async with Server(answer(ok())) as proxy:
            proxy_url = f"http://user:p%40ss@127.0.0.1:{proxy.port}"
            target = "http://models.example:8000/v1/chat/completions"
            client = Http1Client(target, timeout_s=5, proxy=proxy_url)
            assert (await client.post(b"{}", HEADERS))[0] == 200
            await client.aclose()
        (request,) = proxy.requests
        assert request["line"] == f"POST {target} HTTP/1.1" and request["headers"]["host"] == "models.example:8000"
        assert request["headers"]["proxy-authorization"] == "Basic " + base64.b64encode(b"user:p@ss").decode()

    asyncio.run(go())


def test_an_https_target_goes_through_a_connect_tunnel(tls, monkeypatch):
    context, ca = tls
    _trusting(ca, monkeypatch)
    tunnels: list[dict[str, Any]] = []

    async def go() -> None:
        async with Server(answer(ok()), tls=context) as origin:
            async def connect(request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
                tunnels.append(request)
                if request["line"].split()[1] != f"localhost:{origin.port}":
                    writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                    return False
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", origin.port)
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

                async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
                    while data := await src.read(65536):
                        dst.write(data)
                    dst.close()

                await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
                return False

            async with Server(connect) as proxy:
                proxy_url = f"http://127.0.0.1:{proxy.port}"
                client = Http1Client(origin.url, timeout_s=5, proxy=proxy_url)
                for _ in range(2):
                    assert (await client.post(b'{"x": 1}', HEADERS))[2] == b'{"ok": true}'
                await client.aclose()
                refused = "https://elsewhere.example/v1/chat/completions"
                with pytest.raises(HttpError, match="refused to tunnel to elsewhere.example:443: HTTP 403"):
                    await Http1Client(refused, timeout_s=5, proxy=proxy_url).post(b"{}", HEADERS)
        # the origin saw plain requests (TLS ended there), in origin form, on one kept connection
        assert [r["line"] for r in origin.requests] == ["POST /v1/chat/completions HTTP/1.1"] * 2
        assert origin.connections == 1 and [t["line"].split()[:2] for t in tunnels][0] == ["CONNECT", f"localhost:{origin.port}"]

    asyncio.run(go())


def test_an_https_proxy_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="only http:// proxies"):
        Http1Client("https://api.example/v1", timeout_s=5, proxy="https://proxy.example:3128")


def test_hosts_are_written_as_http_wants_them():
    from harness.backends.http1 import _Origin

    v6 = _Origin("https://[::1]:8443/v1")
    assert (v6.host, v6.authority, v6.host_port, v6.tls) == ("::1", "[::1]:8443", "[::1]:8443", True)
    plain = _Origin("http://models.example/v1")
    assert (plain.authority, plain.host_port, plain.userinfo) == ("models.example", "models.example:80", None)
    with pytest.raises(ValueError, match="not an http"):
        _Origin("socks5://proxy.example:1080")
