"""The one HTTP transport against a hostile server on real loopback sockets: keep-alive, a response
size cap, gzip/deflate, every failure with its cause, NO_PROXY with a CIDR, a proxy that is down,
TLS verification, Retry-After in seconds and as an HTTP-date."""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import socket
import ssl
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trustme

from harness.errors import HarnessError
from harness.serving.backends.openai_compat import OpenAIBackend
from harness.serving.backends.transport import MIB, StatusError, Transport, TransportError, retry_after_s
from tests.raw_server import RawServer

Handler = Callable[[dict[str, Any], asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
CHAT = (
    b'{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
    b'"finish_reason":"stop","message":{"role":"assistant","content":"hello"}}]}'
)


def ok(body: bytes = b'{"ok": true}', extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode()
        + body
    )


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
    """A loopback server whose `handler` answers each request (True: keep the connection); it
    counts connections and keeps every request."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None):
        self.handler, self.tls = handler, tls
        self.connections = 0
        self.requests: list[dict[str, Any]] = []

    async def __aenter__(self) -> Server:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                while (request := await read_request(reader)) is not None:
                    self.requests.append(request)
                    if not await self.handler(request, reader, writer):
                        break
            except ConnectionError:
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://localhost:{self.port}/v1"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.server.close()


def answer(data: bytes, keep: bool = True) -> Handler:
    async def handler(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        await writer.drain()
        return keep

    return handler


def transport(url: str, **kwargs: Any) -> Transport:
    return Transport(
        url,
        api_key=kwargs.pop("api_key", "no-key"),
        timeout_s=kwargs.pop("timeout_s", 5),
        max_response_bytes=kwargs.pop("cap", 4 * MIB),
        **kwargs,
    )


async def failure(url: str, **kwargs: Any) -> TransportError:
    client = transport(url, **kwargs)
    try:
        with pytest.raises(TransportError) as info:
            await client.post("chat/completions", b"{}")
        return info.value
    finally:
        await client.aclose()


def test_calls_reuse_one_connection_send_one_bearer_header_and_the_body_as_given():
    async def go() -> None:
        async with Server(answer(ok())) as server:
            client = transport(server.url, api_key="sk-one-key")
            for i in range(3):
                assert await client.post("chat/completions", b'{"n": %d}' % i) == b'{"ok": true}'
            assert await client.get("models") == b'{"ok": true}'
            await client.aclose()
        assert server.connections == 1
        assert [r["body"] for r in server.requests] == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}', b""]
        assert {r["headers"]["authorization"] for r in server.requests} == {"Bearer sk-one-key"}
        assert server.requests[0]["line"] == "POST /v1/chat/completions HTTP/1.1"

    asyncio.run(go())


def _endless(declared: int | None) -> tuple[Handler, list[int]]:
    """An answer of 200 MB: declared in Content-Length or chunked, written until the client stops
    reading; the bytes it managed to write."""
    written = [0]

    async def handler(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        head = f"Content-Length: {declared}\r\n" if declared else "Transfer-Encoding: chunked\r\n"
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{head}\r\n".encode())
        block = b"x" * 65536
        chunk = block if declared else b"%x\r\n%s\r\n" % (len(block), block)
        for _ in range(200 * 16):
            writer.write(chunk)
            written[0] += len(block)
            await writer.drain()
        return False

    return handler, written


@pytest.mark.parametrize("declared", [200 * MIB, None], ids=["content-length", "chunked"])
def test_an_answer_over_the_cap_is_refused_and_read_no_further(declared):
    async def go() -> None:
        handler, written = _endless(declared)
        async with Server(handler) as server:
            error = await failure(server.url, cap=2 * MIB)
        assert "response too large" in str(error) and "> cap 2 MiB" in str(error) and not error.retryable
        # the client stopped reading at the cap: the server could not write the 200 MB
        assert written[0] < 40 * MIB

    asyncio.run(go())


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_gzip_and_deflate_answers_are_decoded(encoding):
    packed = gzip.compress(CHAT) if encoding == "gzip" else zlib.compress(CHAT)

    async def go() -> None:
        async with Server(answer(ok(packed, f"Content-Encoding: {encoding}\r\n"))) as server:
            client = transport(server.url)
            assert await client.post("chat/completions", b"{}") == CHAT
            await client.aclose()
        assert "gzip" in server.requests[0]["headers"]["accept-encoding"]

    asyncio.run(go())


def test_a_gzip_bomb_is_stopped_by_the_cap_on_what_it_expands_to():
    bomb = gzip.compress(b" " * (64 * MIB))  # 64 KiB on the wire

    async def go() -> None:
        async with Server(answer(ok(bomb, "Content-Encoding: gzip\r\n"))) as server:
            error = await failure(server.url, cap=2 * MIB)
        assert "response too large" in str(error)

    asyncio.run(go())


@pytest.mark.parametrize(
    "wire, cause",
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n", "malformed HTTP"),
        (b"HTTTP/9 OK maybe\r\n\r\n", "malformed HTTP"),
        (b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"cut": ', "closed the connection mid-answer"),
    ],
    ids=["bad-chunk", "bad-status-line", "closed-mid-body"],
)
def test_a_broken_answer_names_its_cause_and_may_be_retried(wire, cause):
    async def go() -> None:
        async with Server(answer(wire, keep=False)) as server:
            error = await failure(server.url)
        assert cause in str(error) and error.retryable and not error.gone

    asyncio.run(go())


def test_a_refused_port_and_an_unknown_host_name_their_cause():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    refused = asyncio.run(failure(f"http://127.0.0.1:{port}/v1"))
    assert f"cannot connect to 127.0.0.1:{port}: Connection refused" in str(refused) and refused.gone
    dns = asyncio.run(failure("http://no-such-host.invalid/v1"))
    assert "DNS: cannot resolve no-such-host.invalid" in str(dns) and dns.gone


def test_a_slow_answer_is_a_read_timeout_and_a_server_that_never_accepts_a_connect_timeout():
    async def slow(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(2)
        return False

    async def go() -> None:
        async with Server(slow) as server:
            error = await failure(server.url, timeout_s=0.3)
        assert "read timeout" in str(error) and error.retryable and not error.gone

    asyncio.run(go())
    # a listening socket whose accept queue is full: the kernel drops further SYNs
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        for _ in range(4):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            fillers.append(s)
        time.sleep(0.1)
        try:
            error = asyncio.run(failure(f"http://127.0.0.1:{port}/v1", timeout_s=0.5))
        finally:
            for s in fillers:
                s.close()
    assert f"connect timeout: 127.0.0.1:{port} accepted no connection" in str(error) and error.retryable and error.gone


def test_no_proxy_with_a_cidr_is_honoured_for_the_model_list_and_the_chat_calls(monkeypatch):
    with socket.socket() as s:  # the proxy: a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")

    async def go() -> None:
        async with Server(answer(ok())) as server:
            client = transport(f"http://127.0.0.1:{server.port}/v1")
            assert await client.get("models") == b'{"ok": true}'
            assert await client.post("chat/completions", b"{}") == b'{"ok": true}'
            await client.aclose()
        monkeypatch.delenv("NO_PROXY")
        async with Server(answer(ok())) as server:
            error = await failure(f"http://127.0.0.1:{server.port}/v1")
        assert f"cannot connect to the proxy at 127.0.0.1:{dead}" in str(error) and error.gone
        assert not server.requests

    asyncio.run(go())


def test_a_plain_target_goes_through_a_live_proxy_in_absolute_form(monkeypatch):
    async def go() -> None:
        async with Server(answer(ok())) as proxy:
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
            monkeypatch.delenv("NO_PROXY", raising=False)
            client = transport("http://models.example:8000/v1")
            assert await client.post("chat/completions", b"{}") == b'{"ok": true}'
            await client.aclose()
        (request,) = proxy.requests
        assert request["line"] == "POST http://models.example:8000/v1/chat/completions HTTP/1.1"
        # a plain target's request passes through the proxy, its key too; it is not also offered as
        # the proxy's own credentials
        assert (
            request["headers"]["authorization"] == "Bearer no-key" and "proxy-authorization" not in request["headers"]
        )

    asyncio.run(go())


@pytest.fixture(scope="module")
def tls() -> tuple[ssl.SSLContext, trustme.CA]:
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    return context, ca


def test_https_names_a_failed_verification_and_trusts_the_bundle_ssl_cert_file_names(tls, monkeypatch, tmp_path):
    context, ca = tls
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    async def go(trusted: bool) -> None:
        async with Server(answer(ok()), tls=context) as server:
            if not trusted:
                error = await failure(server.url)
                assert "TLS verification of localhost failed" in str(error) and "certificate" in str(error)
                assert error.gone and not error.retryable
                return
            client = transport(server.url)
            for _ in range(2):
                assert await client.post("chat/completions", b"{}") == b'{"ok": true}'
            await client.aclose()
        assert server.connections == 1

    asyncio.run(go(trusted=False))
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    asyncio.run(go(trusted=True))


async def _tunnel(request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """A proxy's CONNECT: a byte tunnel to the target's port on this machine, until either side closes."""
    method, target, _ = request["line"].split()
    assert method == "CONNECT", request["line"]
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(target.rpartition(":")[2]))
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()

    async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except ConnectionError:
            pass
        finally:
            dst.close()

    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
    return False


def test_an_https_target_goes_through_a_proxy_by_connect_verified_and_the_key_never_reaches_the_proxy(
    tls, monkeypatch, tmp_path
):
    context, ca = tls
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def go() -> None:
        async with Server(answer(ok()), tls=context) as server, Server(_tunnel) as proxy:
            monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
            client = transport(server.url, api_key="sk-secret")
            for _ in range(2):
                assert await client.post("chat/completions", b"{}") == b'{"ok": true}'
            await client.aclose()
        (connect,) = proxy.requests  # one tunnel, kept for the second call
        assert connect["line"] == f"CONNECT localhost:{server.port} HTTP/1.1"
        assert "sk-secret" not in str(connect)
        assert [r["line"] for r in server.requests] == ["POST /v1/chat/completions HTTP/1.1"] * 2
        assert server.requests[0]["headers"]["authorization"] == "Bearer sk-secret"

    asyncio.run(go())


def test_retry_after_reads_seconds_and_an_http_date():
    now = 1_800_000_000.0
    assert retry_after_s("7") == 7.0
    assert retry_after_s(email.utils.formatdate(now + 90, usegmt=True), now=now) == pytest.approx(90, abs=1)
    assert retry_after_s(email.utils.formatdate(now - 90, usegmt=True), now=now) == 0.0
    assert retry_after_s("soon") is None and retry_after_s(None) is None


def _limited(after: str, then: bytes = ok(CHAT)) -> tuple[Handler, list[float]]:
    """429 with `Retry-After: after` once, then `then`; the times the requests came in."""
    times: list[float] = []

    async def handler(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        times.append(time.monotonic())
        if len(times) == 1:
            writer.write(
                f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: {after}\r\nContent-Length: 2\r\n\r\n{{}}".encode()
            )
        else:
            writer.write(then)
        await writer.drain()
        return True

    return handler, times


def _list_models(url: str) -> list[str]:
    async def go() -> list[str]:
        backend = OpenAIBackend(url, "m", backoff_s=0.01, max_retries=2)
        try:
            return await backend.served_models()
        finally:
            await backend.aclose()

    return asyncio.run(go())


MODELS = ok(b'{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"x"}]}')


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_the_wait_a_retry_after_asks_for_is_honoured(form):
    async def go() -> list[float]:
        after = "1" if form == "seconds" else email.utils.formatdate(time.time() + 2, usegmt=True)
        handler, times = _limited(after, then=MODELS)
        async with Server(handler) as server:
            assert await asyncio.to_thread(_list_models, server.url) == ["m"]
        return times

    times = asyncio.run(go())
    # backoff alone would be 0.01 s; an HTTP-date has whole seconds, so 2 s ahead is at least 1
    assert len(times) == 2 and times[1] - times[0] >= 0.9


def test_a_retry_after_longer_than_the_maximum_stops_the_run_naming_the_wait():
    async def go() -> None:
        handler, times = _limited("3600")
        async with Server(handler) as server:
            start = time.monotonic()
            with pytest.raises(HarnessError, match=r"Retry-After 3600 s, longer than the 300 s") as info:
                await asyncio.to_thread(_list_models, server.url)
            assert time.monotonic() - start < 5 and len(times) == 1
        assert info.value.fatal

    asyncio.run(go())


def test_an_error_status_keeps_what_the_server_said():
    async def go() -> None:
        body = b'{"error": {"message": "context length exceeded"}}'
        wire = f"HTTP/1.1 400 Bad Request\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        async with Server(answer(wire)) as server:
            error = await failure(server.url)
        assert isinstance(error, StatusError) and error.status == 400 and not error.retryable
        assert "context length exceeded" in str(error)

    asyncio.run(go())


def test_credentials_in_the_url_are_refused_without_being_repeated():
    with pytest.raises(ValueError) as info:
        transport("http://user:hunter2-secret@127.0.0.1:9/v1")
    assert "hunter2" not in str(info.value) and "--api-key-env" in str(info.value)


def test_malformed_http_is_a_server_fault_at_start_and_a_harness_error_mid_run(tmp_path):
    import json
    import subprocess
    import sys

    garbage = b"HTTTP/9 OK maybe\r\n\r\n"
    models = ok(b'{"object":"list","data":[{"id":"m","object":"model","created":0,"owned_by":"x"}]}')
    config = tmp_path / "grid.toml"
    config.write_text("max_retries = 1\n")

    def run(server: RawServer, out: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "run",
                "--config",
                str(config),
                "--suite",
                "bank-disputes",
                "--model",
                "m",
                "--conditions",
                "raw",
                "--tasks",
                "2",
                "--endpoint",
                server.url,
                "--no-preflight",  # malformed HTTP mid-run must be a harness error, not a failed preflight
                "--out",
                str(tmp_path / out),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )

    start = RawServer(lambda method, path: garbage)
    try:
        said = run(start, "start")
    finally:
        start.close()
    assert said.returncode == 3 and "malformed HTTP (a server fault): Bad status line" in said.stderr, said.stderr
    assert "Connection error" not in said.stderr and "Traceback" not in said.stderr
    mid = RawServer(lambda method, path: models if path.endswith("/models") else garbage)
    try:
        said = run(mid, "mid")
    finally:
        mid.close()
    assert said.returncode == 4, said.stderr  # harness errors, never scored; the run went on
    rows = [json.loads(line) for line in (tmp_path / "mid" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all("malformed HTTP" in r["harness_error"] and r["success"] is None for r in rows)


def test_an_idle_connection_with_unasked_bytes_is_not_reused():
    async def twice(request: dict[str, Any], reader: Any, writer: asyncio.StreamWriter) -> bool:
        # the answer, then (once it is read) a second one nobody asked for, on a connection kept open
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
            await asyncio.sleep(0.1)  # the stray answer reaches the client
            assert await client.post("chat/completions", b"{}") == b'{"n": 1}'  # never the stray one
            assert server.connections == 2
            await client.aclose()

    asyncio.run(go())


def test_no_proxy_reads_names_domains_ports_and_cidrs_and_a_socks_proxy_is_refused(monkeypatch):
    from harness.serving.backends.proxies import bypassed, proxy_for

    no = "10.0.0.0/8, example.org,.corp.net,db:5432,::1/128"
    assert bypassed("10.1.2.3", 8000, no) and not bypassed("11.0.0.1", 8000, no)
    assert bypassed("example.org", None, no) and bypassed("api.example.org", 443, no)
    assert not bypassed("notexample.org", 443, no)
    assert bypassed("a.corp.net", 80, no) and bypassed("db", 5432, no) and not bypassed("db", 5433, no)
    assert bypassed("[::1]", 8000, no) and bypassed("anything", 1, "*") and not bypassed("x", 1, " ")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert proxy_for("http://10.0.0.5:8000/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "proxy.corp.net:3128")
    monkeypatch.setenv("NO_PROXY", "10.0.0.0/8")
    assert proxy_for("https://api.example.org/v1") == "http://proxy.corp.net:3128"
    assert proxy_for("https://10.0.0.5/v1") is None and proxy_for("http://api.example.org/v1") is None
    monkeypatch.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ValueError, match="socks5 proxy, which the transport does not speak"):
        transport("http://api.example.org/v1")
