"""The one HTTP transport to a model server: aiohttp, the maintained asyncio HTTP client.

The model list, the chat calls and the checks of a server the harness started (`server_proc`,
vLLM's metrics in `batch`) go through `Transport`: one proxy policy (`HTTP(S)_PROXY`, `NO_PROXY`
with hosts, domains and CIDRs: `harness.serving.backends.proxies`), one TLS configuration
(`SSL_CERT_FILE` / `SSL_CERT_DIR`, else the system's store), one `Authorization: Bearer` header.
Chat bodies are posted pre-encoded, past the SDK's per-call validation (3-10 ms a call on 2 cores,
benchmarks/throughput.py); the SDK gives the answer's types only. aiohttp parses HTTP in C
(llhttp): about 0.4 ms of CPU a call where httpx2 on httpcore2 and h11 took 1.3-1.4 ms, which
held the runner's one event loop under the socket limit (benchmarks/throughput.py, issue 40).

An answer is read chunk by chunk, decoded (gzip, deflate) and counted: past `max_response_bytes`
the read stops and the call fails, so a hostile server cannot make the run hold its body. Only a
2xx answer is an answer: a redirect is never followed (a server that redirects a POST is
misconfigured, and following it would send the key elsewhere) and fails naming its Location, an
error status keeps what the server said (`harness.serving.backends.answers.error_message`), and a 2xx body
is read by the caller's reader of its shape, whose fault names the status and the field. Every
failure is a `TransportError` whose message names its cause (TLS verification, a proxy, DNS, a
refused connection, a connection closed mid-answer, malformed HTTP, which timeout, the status) and
says whether another attempt may help (`retryable`), whether the server looks gone (`gone`) and
whether every call to it would fail alike (`fatal`: a wrong key, no such model, a redirect).
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import functools
import os
import ssl
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import aiohttp
import aiohttp.http_exceptions
import yarl

from harness.redact import credentials_in, cut, without_credentials
from harness.serving.backends.answers import Malformed, error_message
from harness.serving.backends.proxies import proxy_for

T = TypeVar("T")

MIB = 1024 * 1024
_JSON = {"Content-Type": "application/json"}
CONNECT_TIMEOUT_S = 10.0
# an idle connection kept this long for the next call (servers close theirs after 5-75 s)
KEEPALIVE_S = 5.0


# what the requests sent in this context are, as a header a capture can tell them by
# (harness.serving.preflight: "preflight"); None: an episode's, unmarked
MARK: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_mark", default=None)
MARK_HEADER = "X-Repair-Harness-Request"


def _marked(headers: dict[str, str] | None) -> dict[str, str] | None:
    mark = MARK.get()
    return headers if mark is None else {**(headers or {}), MARK_HEADER: mark}


class TransportError(Exception):
    """No usable answer. `retryable`: another attempt may get one (a lost connection, a timeout,
    429, 5xx). `gone`: nothing answers at that address (refused, DNS, TLS, proxy): once the
    retries are spent the run stops. `fatal`: the server answered, and every call would get the
    same answer (401, 403, 404, a redirect): the run stops at once."""

    def __init__(self, message: str, *, retryable: bool, gone: bool = False, fatal: bool = False):
        super().__init__(message)
        self.retryable, self.gone, self.fatal = retryable, gone, fatal


# a wrong key, a key without the right, no such model or path: the whole grid would get the same
FATAL_STATUSES = frozenset({401, 403, 404})


class StatusError(TransportError):
    """The server answered with an HTTP error status (anything but 2xx and 3xx); `body` is what
    it said."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body
        super().__init__(
            f"HTTP {status}: {error_message(body)}",
            retryable=status == 429 or 500 <= status < 600,
            fatal=status in FATAL_STATUSES,
        )

    def retry_after_s(self) -> float | None:
        """The wait the server asks for (`Retry-After`: seconds or an HTTP-date), if any."""
        return retry_after_s(self.headers.get("retry-after"))


class RedirectError(TransportError):
    """A 3xx answer: never followed, never read as an answer. The message names the status and
    where the server points (its Location, resolved against the request's URL, user-info masked)."""

    def __init__(self, status: int, method: str, url: str, location: str | None):
        self.status = status
        where = cut(without_credentials(urljoin(url, location)), 300) if location else None
        to = f" to {where}" if where else " with no Location"
        super().__init__(
            f"HTTP {status}: the server redirects {method} {without_credentials(url)}{to}; the harness follows "
            "no redirect (it would send the API key there): give the URL the server answers at as --endpoint",
            retryable=False,
            fatal=True,
        )


class BadAnswer(TransportError):
    """A 2xx answer whose body is not what was asked for (its reader's Malformed)."""


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` value (RFC 9110: delay-seconds or an HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Transport:
    """GETs and POSTs of JSON to one server over keep-alive connections. The session is opened on
    the first call, in the event loop that makes it."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        timeout_s: float,
        max_response_bytes: int,
        user_agent: str = "repair-harness",
    ):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{without_credentials(base_url)!r} is not an http(s) URL")
        if credentials_in(base_url):  # spec validation refuses them; this is the last line
            raise ValueError("the endpoint URL holds credentials: put the key in the --api-key-env variable instead")
        if any(c in api_key for c in "\r\n\0"):
            # the HTTP library's own message would quote the header, and the header holds the key
            raise ValueError("the API key holds a line break or another control character")
        self.base_url = base_url.rstrip("/")
        self.timeout_s, self.max_response_bytes = timeout_s, max_response_bytes
        self.proxy = proxy_for(self.base_url)
        self._headers = {"User-Agent": user_agent, "Accept": "application/json", "Accept-Encoding": "gzip, deflate"}
        # the key goes with each request, never in the session's headers: aiohttp sends those to a
        # proxy too, the Authorization among them as Proxy-Authorization (in the CONNECT of an https
        # target, before TLS), so the proxy would read the key. No key, no header: a server the
        # harness started without one
        key = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._request_headers = {"GET": key or None, "POST": {**_JSON, **key}}
        # connecting gets a share of the call's time, so that a server that never accepts is told
        # apart from one that accepts and never answers (the whole call is bounded in `_send`)
        # (no per-read timeout: the whole exchange's bound in `_send` is the read timeout, and
        # aiohttp would rearm a timer on every chunk)
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=min(CONNECT_TIMEOUT_S, timeout_s / 2))
        self._session: aiohttp.ClientSession | None = None
        self._urls: dict[str, yarl.URL] = {}

    def _open(self) -> aiohttp.ClientSession:
        self._session = aiohttp.ClientSession(
            headers=self._headers,
            # one connection per call in flight, each kept for the next call
            connector=_Connector(limit=0, ssl=ssl_context(), keepalive_timeout=KEEPALIVE_S),
            timeout=self._timeout,
            # no cookies kept from one answer to the next request: every call stands alone
            cookie_jar=aiohttp.DummyCookieJar(),
            # the proxy policy is ours (NO_PROXY's CIDRs), read once; no ~/.netrc
            trust_env=False,
            auto_decompress=True,
        )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, path: str, read: Callable[[bytes], T] | None = None) -> Any:
        return await self._send("GET", path, None, read)

    async def post(self, path: str, body: bytes, read: Callable[[bytes], T] | None = None) -> Any:
        return await self._send("POST", path, body, read)

    async def _send(self, method: str, path: str, body: bytes | None, read: Callable[[bytes], Any] | None) -> Any:
        """The body of a 2xx answer, or what `read` makes of it (BadAnswer when it raises
        Malformed); RedirectError for a 3xx, StatusError for any other status, TransportError
        otherwise. The timeout bounds the whole exchange (connect, send, the last byte)."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        session = self._session or self._open()
        try:
            async with asyncio.timeout(self.timeout_s):
                async with session.request(
                    method,
                    self._url(url),
                    data=body,
                    headers=_marked(self._request_headers[method]),
                    proxy=self.proxy,
                    allow_redirects=False,
                ) as resp:
                    data = await self._read(resp)
                    status, headers = resp.status, resp.headers
        except aiohttp.ClientError as exc:  # before TimeoutError: aiohttp's timeouts are both
            raise describe(exc, url) from exc
        except TimeoutError:
            raise TransportError(f"read timeout: no whole answer within {self.timeout_s:g} s", retryable=True) from None
        if not 200 <= status < 300:
            if 300 <= status < 400:
                raise RedirectError(status, method, url, headers.get("location"))
            raise StatusError(status, headers, data)
        if read is None:
            return data
        try:
            return read(data)
        except Malformed as exc:
            raise BadAnswer(f"HTTP {status} from {method} /{path.lstrip('/')}: {exc}", retryable=False) from None

    def _url(self, url: str) -> yarl.URL:
        """The URL parsed once, not on every request."""
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = yarl.URL(url)
        return parsed

    async def _read(self, resp: aiohttp.ClientResponse) -> bytes:
        cap = self.max_response_bytes
        declared = resp.content_length
        if declared is not None and declared > cap:
            raise TransportError(_too_large(declared, cap, "declared"), retryable=False)
        chunks, size = [], 0
        async for chunk in resp.content.iter_any():  # decoded: the cap bounds what a gzip bomb expands to
            size += len(chunk)
            if size > cap:
                raise TransportError(_too_large(size, cap, "read so far"), retryable=False)
            chunks.append(chunk)
        return b"".join(chunks)


class _Connector(aiohttp.TCPConnector):
    """aiohttp's pool, less one hazard: a kept connection on which the server sent bytes nobody
    asked for would hand them to the next request as its answer; such a connection is closed
    instead of reused. (`_get` is the pool's lookup of a kept connection; if a later aiohttp
    renames it, tests/harness/serving/backends/test_transport.py's unasked-bytes test fails, saying so.)"""

    async def _get(self, key: Any, traces: list[Any]) -> Any:
        while (conn := await super()._get(key, traces)) is not None:
            if conn.protocol is None or not conn.protocol.should_close:
                return conn
            conn.close()
        return None


def ssl_context() -> ssl.SSLContext:
    """Verification against `SSL_CERT_FILE` / `SSL_CERT_DIR` where set, else the system's store."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    # loading a CA store takes 40-80 ms: once per store, not per transport (a run opens several)
    return ssl.create_default_context(cafile=cafile, capath=capath)


def _too_large(size: int, cap: int, how: str) -> str:
    return (
        f"response too large ({size / MIB:.1f} MiB {how} > cap {cap / MIB:g} MiB); read no further "
        "(--max-response-mib raises the cap)"
    )


def _root(exc: BaseException) -> BaseException:
    """The deepest cause of an exception chain: the OSError or SSL error behind aiohttp's wrapper."""
    seen = set()
    while (nxt := exc.__cause__ or exc.__context__) is not None and id(nxt) not in seen:
        seen.add(id(exc))
        exc = nxt
    return exc


def describe(exc: aiohttp.ClientError, url: str) -> TransportError:
    """An aiohttp failure as a TransportError whose message says what happened, where."""
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        cert = exc.certificate_error
        reason = getattr(cert, "verify_message", None) or getattr(cert, "reason", None) or cert
        return TransportError(
            f"TLS verification of {parts.hostname} failed: {reason} (SSL_CERT_FILE names another CA bundle)",
            retryable=False,
            gone=True,
        )
    root = _root(exc)
    if isinstance(exc, aiohttp.ClientSSLError) or isinstance(root, ssl.SSLError):
        ssl_error = root if isinstance(root, ssl.SSLError) else getattr(exc, "os_error", exc)
        return TransportError(
            f"TLS with {where} failed: {getattr(ssl_error, 'reason', None) or ssl_error}", retryable=False, gone=True
        )
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return TransportError(f"the proxy refused: HTTP {exc.status} {exc.message}", retryable=True, gone=True)
    if isinstance(exc, aiohttp.ClientProxyConnectionError):
        return TransportError(
            f"cannot connect to the proxy at {exc.host}:{exc.port} (the environment's HTTP(S)_PROXY; NO_PROXY names "
            f"what is reached directly): {_reason(exc.os_error)}",
            retryable=True,
            gone=True,
        )
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return TransportError(
            f"DNS: cannot resolve {parts.hostname}: {exc.os_error.strerror or exc.os_error}", retryable=True, gone=True
        )
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportError(f"connect timeout: {where} accepted no connection in time", retryable=True, gone=True)
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return TransportError(f"read timeout: {where} sent no answer in time", retryable=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransportError(f"cannot connect to {where}: {_reason(exc.os_error)}", retryable=True, gone=True)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return TransportError(f"{where} closed the connection mid-answer: {detail}", retryable=True)
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, aiohttp.http_exceptions.ContentEncodingError) or "content-encoding" in detail.lower():
            return TransportError(
                f"{where} sent a body that does not decode as its Content-Encoding says: {' '.join(detail.split())}",
                retryable=True,
            )
        if isinstance(cause, aiohttp.http_exceptions.TransferEncodingError) and "not completed" not in detail:
            return TransportError(
                f"{where} answered with malformed HTTP (a server fault): {_first_line(detail)}", retryable=True
            )
        return TransportError(f"{where} closed the connection mid-answer: {detail}", retryable=True)
    if isinstance(exc, aiohttp.ClientResponseError):  # aiohttp's parser refused what came back
        return TransportError(
            f"{where} answered with malformed HTTP (a server fault): {_first_line(exc.message or detail)}",
            retryable=True,
        )
    if isinstance(exc, aiohttp.ClientOSError):
        return TransportError(f"the connection to {where} broke: {_reason(exc)}", retryable=True)
    return TransportError(f"{type(exc).__name__}: {detail}", retryable=False)


def _reason(error: OSError) -> str:
    code = error.errno
    return os.strerror(code) if isinstance(code, int) and code > 0 else (error.strerror or str(error))


def _first_line(message: str) -> str:
    """llhttp's message quotes what the server sent on the lines after the first: not for a record."""
    return message.strip().splitlines()[0].rstrip(":") if message.strip() else message
