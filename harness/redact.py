"""Secrets never reach a record, a transcript, a log or the console.

Every text the harness writes passes through one `Redactor`: it removes the API key's value (read
from the environment variable the spec names), any `Bearer …` token and the value of any
`Authorization` header, wherever a server or an exception happened to echo them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

MASK = "[REDACTED]"
# a key shorter than this is not a secret worth the risk of masking ordinary words ("EMPTY", "x")
MIN_SECRET_CHARS = 8
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{4,}")
_AUTH_HEADER = re.compile(r"(?i)(\bauthorization['\"]?\s*[:=]\s*['\"]?)(?!bearer\b)[^'\"\s,}\]]{4,}")
# the words both patterns start from, with the same case folding: a text without them is one
# that neither pattern changes
_HINT = re.compile(r"(?i)bearer|authorization")
# the non-ASCII characters that the patterns' case folding (simple case mapping, and sre's own
# ı/ſ/K fixes) matches to an ASCII letter, which `str.lower` does not map to one
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


# a credential in a URL's query or fragment (`?api_key=...`, `#token=...`)
_URL_KEY = re.compile(r"(?i)([?&#;](?:api[_-]?key|key|token|access[_-]?token|secret)=)[^&#\s'\"]+")


class Redactor:
    def __init__(self, secrets: list[str] | None = None):
        self.secrets = sorted({s for s in secrets or [] if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        # each secret as it appears inside a JSON string (ensure_ascii=False), lower-cased: a
        # secret is masked in any case (a normalising contract lower-cases what it is given)
        self._in_json = [json.dumps(s, ensure_ascii=False)[1:-1].lower() for s in self.secrets]
        self._secret = re.compile("|".join(map(re.escape, self.secrets)), re.IGNORECASE) if self.secrets else None

    @classmethod
    def from_env(cls, *names: str, public: tuple[str, ...] = ()) -> Redactor:
        """The keys the variables hold, less any that a `public` name (a model, a condition: what
        the records' keys are made of) holds: masking it there would change every record's key,
        and such a key is no secret anyway."""
        keys = [os.environ.get(n, "") for n in names]
        return cls([k for k in keys if not any(k.lower() in p.lower() for p in public)])

    def text(self, value: str) -> str:
        if self._secret is not None:
            value = self._secret.sub(MASK, value)
        value = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
        value = _URL_KEY.sub(lambda m: f"{m.group(1)}{MASK}", value)
        return _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{MASK}", value)

    def obj(self, value: Any) -> Any:
        """The same structure with every string (keys included) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.obj(k): self.obj(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.obj(v) for v in value]
        return value

    def clean_json(self, text: str) -> bool:
        """True when `obj` would change none of the strings of the value whose JSON text (written
        with ensure_ascii=False) this is: one scan of the text instead of a walk of every string.
        JSON writes a string's characters in place, each escaped on its own, so a string holding a
        secret puts the secret's escaped form in the text, and the patterns' words are letters,
        which JSON writes as they are. A false alarm only costs the walk."""
        # `lower` and a substring search are many times faster than the case-insensitive regex
        low = text.lower()
        if any(s in low for s in self._in_json):
            return False
        if "bearer" in low or "authorization" in low or "=" in text and _URL_KEY.search(text):
            return False
        return not any(c in text for c in _FOLDS_TO_ASCII) or _HINT.search(text) is None


def credentials_in(url: str) -> bool:
    """The URL carries a user name or password (`http://user:secret@host/v1`)."""
    try:
        return "@" in (urlsplit(url).netloc or "")
    except ValueError:
        return False


def without_credentials(text: str) -> str:
    """Every URL's user-info part in `text` masked: what may be printed of a URL that holds one."""
    return _USERINFO.sub(r"\1***@", text)


_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s'\"]+@")


# environment variables whose values are secrets wherever the CLI prints (besides the one a
# spec names with --api-key-env, which the run's own Redactor reads)
_SECRET_VARS = re.compile(r"(?i)(api[_-]?key|token|secret|password)$")


def console_redactor() -> Redactor:
    """What every line the CLI prints is cleaned by: the values of the environment's secret-named
    variables (OPENAI_API_KEY, HF_TOKEN, ...), and any bearer token or authorization header."""
    return Redactor([v for k, v in os.environ.items() if _SECRET_VARS.search(k)])


class RedactingStream:
    """A text stream that writes through `redactor.text`: the console never shows a secret."""

    def __init__(self, inner: Any, redactor: Redactor):
        self._inner, self._redactor = inner, redactor

    def write(self, text: str) -> int:
        self._inner.write(self._redactor.text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding: the stream's own
        return getattr(self._inner, name)


@contextlib.contextmanager
def redacted_console() -> Iterator[None]:
    """stdout and stderr written through the console redactor while the block runs: every line a
    command prints, a server's error body, a redirect's URL or a traceback included."""
    redactor = console_redactor()
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(out, redactor), RedactingStream(err, redactor)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
