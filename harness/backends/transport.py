"""The one HTTP transport to a model server: httpx2, the package the openai SDK itself is built on.

The model list and the chat calls go through one `httpx2.AsyncClient` (the server health checks
of `server_proc` use httpx2 too): one proxy policy (`HTTP(S)_PROXY`, `NO_PROXY` with hosts,
domains and CIDRs, read by httpx2 from the environment), one TLS configuration (`SSL_CERT_FILE` /
`SSL_CERT_DIR`, else the system's store), one `Authorization: Bearer` header. Chat bodies are
posted pre-encoded, past the SDK's per-call validation (3-10 ms a call on 2 cores,
benchmarks/throughput.py); the SDK gives the answer's types only. httpx2's pools run on the
network backend of `harness.backends.net` (asyncio's transports, not anyio's: a quarter of a
call's CPU), and each URL is parsed once.

An answer is read chunk by chunk, decoded (gzip, deflate) and counted: past `max_response_bytes`
the read stops and the call fails, so a hostile server cannot make the run hold its body. Only a
2xx answer is an answer: a redirect is never followed (a server that redirects a POST is
misconfigured, and following it would send the key elsewhere) and fails naming its Location, an
error status keeps what the server said (`harness.backends.answers.error_message`), and a 2xx body
is read by the caller's reader of its shape, whose fault names the status and the field. Every
failure is a `TransportError` whose message names its cause (TLS verification, a proxy, DNS, a
refused connection, a connection closed mid-answer, malformed HTTP, which timeout, the status) and
says whether another attempt may help (`retryable`), whether the server looks gone (`gone`) and
whether every call to it would fail alike (`fatal`: a wrong key, no such model, a redirect).
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import os
import re
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx2

from harness.backends import net
from harness.backends.answers import Malformed, error_message
from harness.redact import credentials_in, without_credentials

T = TypeVar("T")

MIB = 1024 * 1024
_JSON = {"Content-Type": "application/json"}
CONNECT_TIMEOUT_S = 10.0


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

    def __init__(self, status: int, headers: httpx2.Headers, body: bytes):
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
        where = without_credentials(urljoin(url, location))[:300] if location else None
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
    """GETs and POSTs of JSON to one server over keep-alive connections."""

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
        self.base_url = base_url.rstrip("/")
        self.timeout_s, self.max_response_bytes = timeout_s, max_response_bytes
        if any(c in api_key for c in "\r\n\0"):
            # httpx2's own message would quote the header, and the header holds the key
            raise ValueError("the API key holds a line break or another control character")
        self.client = httpx2.AsyncClient(
            # connecting gets a share of the call's time, so that a server that never accepts is
            # told apart from one that accepts and never answers (the whole call is bounded below)
            timeout=httpx2.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s / 2)),
            # one connection per call in flight, each kept for the next call
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None),
            headers={
                "Authorization": f"Bearer {api_key}",
                "User-Agent": user_agent,
                "Accept": "application/json",
                "Accept-Encoding": "gzip, deflate",
            },
            trust_env=True,
            follow_redirects=False,
        )
        net.install(self.client)
        self._urls: dict[str, httpx2.URL] = {}

    async def aclose(self) -> None:
        await self.client.aclose()

    async def get(self, path: str, read: Callable[[bytes], T] | None = None) -> Any:
        return await self._send("GET", path, None, read)

    async def post(self, path: str, body: bytes, read: Callable[[bytes], T] | None = None) -> Any:
        return await self._send("POST", path, body, read)

    async def _send(self, method: str, path: str, body: bytes | None, read: Callable[[bytes], Any] | None) -> Any:
        """The body of a 2xx answer, or what `read` makes of it (BadAnswer when it raises
        Malformed); RedirectError for a 3xx, StatusError for any other status, TransportError
        otherwise. The timeout bounds the whole exchange (connect, send, the last byte)."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        headers = _JSON if body is not None else None
        try:
            async with asyncio.timeout(self.timeout_s):
                request = self.client.build_request(method, self._url(url), content=body, headers=headers)
                resp = await self.client.send(request, stream=True)
                try:
                    data = await self._read(resp)
                finally:
                    await resp.aclose()
        except TimeoutError:
            raise TransportError(f"read timeout: no whole answer within {self.timeout_s:g} s", retryable=True) from None
        except httpx2.HTTPError as exc:
            raise describe(exc, url) from exc
        status = resp.status_code
        if not 200 <= status < 300:
            if 300 <= status < 400:
                raise RedirectError(status, method, url, resp.headers.get("location"))
            raise StatusError(status, resp.headers, data)
        if read is None:
            return data
        try:
            return read(data)
        except Malformed as exc:
            raise BadAnswer(f"HTTP {status} from {method} /{path.lstrip('/')}: {exc}", retryable=False) from None

    def _url(self, url: str) -> httpx2.URL:
        """The URL parsed once: httpx2 parses a string URL on every request."""
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = httpx2.URL(url)
        return parsed

    async def _read(self, resp: httpx2.Response) -> bytes:
        cap = self.max_response_bytes
        declared = resp.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise TransportError(_too_large(int(declared), cap, "declared"), retryable=False)
        chunks, size = [], 0
        async for chunk in resp.aiter_bytes():  # decoded: the cap bounds what a gzip bomb expands to
            size += len(chunk)
            if size > cap:
                raise TransportError(_too_large(size, cap, "read so far"), retryable=False)
            chunks.append(chunk)
        return b"".join(chunks)


def _too_large(size: int, cap: int, how: str) -> str:
    return (
        f"response too large ({size / MIB:.1f} MiB {how} > cap {cap / MIB:g} MiB); read no further "
        "(--max-response-mib raises the cap)"
    )


def _root(exc: BaseException) -> BaseException:
    """The deepest cause of an exception chain: the OSError or SSL error behind httpx2's wrapper."""
    seen = set()
    while (nxt := exc.__cause__ or exc.__context__) is not None and id(nxt) not in seen:
        seen.add(id(exc))
        exc = nxt
    return exc


def describe(exc: BaseException, url: str) -> TransportError:
    """An httpx2 failure as a TransportError whose message says what happened, where."""
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    root = _root(exc)
    detail = str(exc) or type(exc).__name__
    if isinstance(root, ssl.SSLCertVerificationError):
        return TransportError(
            f"TLS verification of {parts.hostname} failed: {root.verify_message or root.reason} "
            "(SSL_CERT_FILE names another CA bundle)",
            retryable=False,
            gone=True,
        )
    if isinstance(root, ssl.SSLError):
        return TransportError(f"TLS with {where} failed: {root.reason or root}", retryable=False, gone=True)
    if isinstance(exc, httpx2.ProxyError):
        return TransportError(f"the proxy refused: {detail}", retryable=True, gone=True)
    if isinstance(root, socket.gaierror):
        return TransportError(
            f"DNS: cannot resolve {parts.hostname}: {root.strerror or root}", retryable=True, gone=True
        )
    if isinstance(exc, httpx2.ConnectTimeout):
        return TransportError(f"connect timeout: {where} accepted no connection in time", retryable=True, gone=True)
    if isinstance(exc, (httpx2.ReadTimeout, httpx2.WriteTimeout, httpx2.PoolTimeout)):
        return TransportError(f"read timeout: {where} sent no answer in time", retryable=True)
    if isinstance(exc, httpx2.ConnectError):
        code = getattr(root, "errno", None)
        reason = os.strerror(code) if isinstance(code, int) and code > 0 else str(root)
        hop = _address(root)
        if hop is not None and _proxy_set() and not _is_target(hop, parts):
            return TransportError(
                f"cannot connect to the proxy at {hop[0]}:{hop[1]} (the environment's "
                f"HTTP(S)_PROXY; NO_PROXY names what is reached directly): {reason}",
                retryable=True,
                gone=True,
            )
        return TransportError(f"cannot connect to {where}: {reason}", retryable=True, gone=True)
    if isinstance(exc, httpx2.RemoteProtocolError):
        if "peer closed" in detail.lower() or "incomplete" in detail.lower() or "without sending" in detail.lower():
            return TransportError(f"{where} closed the connection mid-answer: {detail}", retryable=True)
        return TransportError(f"{where} answered with malformed HTTP (a server fault): {detail}", retryable=True)
    if isinstance(exc, httpx2.DecodingError):
        return TransportError(
            f"{where} sent a body that does not decode as its Content-Encoding says: {detail}", retryable=True
        )
    if isinstance(exc, (httpx2.ReadError, httpx2.WriteError, httpx2.CloseError)):
        return TransportError(
            f"the connection to {where} broke: {getattr(root, 'strerror', None) or detail}", retryable=True
        )
    return TransportError(f"{type(exc).__name__}: {detail}", retryable=False)


_ADDRESS = re.compile(r"\('([^']+)', (\d+)")


def _address(root: BaseException) -> tuple[str, int] | None:
    """The address a failed connect went to, as asyncio's message names it."""
    m = _ADDRESS.search(str(root))
    return (m.group(1), int(m.group(2))) if m else None


def _is_target(hop: tuple[str, int], parts: Any) -> bool:
    """The failed address is the URL's own (a host name resolves to an address we cannot compare)."""
    if hop[1] != (parts.port or (443 if parts.scheme == "https" else 80)):
        return False
    try:
        return ipaddress.ip_address(parts.hostname) == ipaddress.ip_address(hop[0])
    except ValueError:
        return True


def _proxy_set() -> bool:
    return any(k.lower() in ("http_proxy", "https_proxy", "all_proxy") and v for k, v in os.environ.items())
