"""Secrets never reach a record, a transcript, a log or the console.

Every text the harness writes passes through one `Redactor`: it removes the API key's value (read
from the environment variable the spec names), any `Bearer …` token and the value of any
`Authorization` header, wherever a server or an exception happened to echo them. The key is masked
in whatever form it was echoed: in any case, with its separators normalised (`sk_…` for `sk-…`),
percent- or base64-encoded, and as a start or an end of it that a cut left. A text cut far from the
run's Redactor (a server's error message, an answer) is cut by `cut`, which masks first.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

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


# a key's start or end this long, left where the rest of it was cut (an error message cut at 300
# characters, an answer at 20,000), is masked as the key is
FRAGMENT_CHARS = 8
# fragments are matched per block of a key this long: one pattern nests a group per character,
# and the regex compiler recurses per group (a 1,000-character key overflows it)
_BLOCK = 200
# what a normalising contract writes a key's separators as (envs.tools.notation.normalize_choice:
# "-" and " " to "_"); the redactor reads them as one character, and case never matters
_SEPARATORS = "-_. "
_SEP_PATTERN = r"(?:[-_. ]|%2d|%5f|%2e|%20)"
_SEP_TO_DASH = str.maketrans({c: "-" for c in _SEPARATORS})


def _normalised(text: str) -> str:
    return text.lower().translate(_SEP_TO_DASH)


def _char(c: str) -> str:
    """One character of a key as it may be written: itself (any case), percent-encoded, or, for a
    separator, as any separator."""
    if c in _SEPARATORS:
        return _SEP_PATTERN
    return f"(?:{re.escape(c)}|{''.join(f'%{b:02x}' for b in c.encode())})"


def _forms(secret: str) -> list[str]:
    """Patterns of the key whole and of any start or end of it at least FRAGMENT_CHARS long (a key
    longer than a block: of each block's), in any case, separators and percent-encoding."""
    chars = [_char(c) for c in secret]
    forms = []
    for b in range(0, len(chars), _BLOCK):
        block = chars[b : b + _BLOCK]
        if len(block) < FRAGMENT_CHARS:
            block = chars[-FRAGMENT_CHARS:]
        # the longest start: the first FRAGMENT_CHARS characters, each later one only after the one before
        tail = ""
        for c in reversed(block[FRAGMENT_CHARS:]):
            tail = f"(?:{c}{tail})?"
        forms.append("".join(block[:FRAGMENT_CHARS]) + tail)
        head = ""
        for c in block[:-FRAGMENT_CHARS]:
            head = f"(?:{head}{c})?"
        forms.append(head + "".join(block[-FRAGMENT_CHARS:]))
    return forms


def _anchors(secret: str) -> list[str]:
    """What any match of `_forms(secret)` holds, normalised and as JSON writes it: each block's
    first and last FRAGMENT_CHARS characters."""
    out = []
    for b in range(0, len(secret), _BLOCK):
        block = secret[b : b + _BLOCK] if len(secret) - b >= FRAGMENT_CHARS else secret[-FRAGMENT_CHARS:]
        out += [block[:FRAGMENT_CHARS], block[-FRAGMENT_CHARS:]]
    return [json.dumps(_normalised(a), ensure_ascii=False)[1:-1] for a in out]


def _base64_cores(secret: str) -> list[str]:
    """The part of the key's base64 encoding that is the same wherever the key starts in the
    encoded bytes (three alignments), in both alphabets: what a server that base64-encodes a text
    holding the key writes of it."""
    raw = secret.encode()
    cores = []
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + raw).decode()
        whole, left = divmod(lead + len(raw), 3)
        core = encoded[[0, 2, 3][lead] : whole * 4 + [0, 1, 2][left]]
        cores += [core, core.translate(str.maketrans("+/", "-_"))]
    return [c for c in cores if len(c) >= FRAGMENT_CHARS]


# the keys this process knows (every Redactor's, the served models'): what `cut` masks before it
# cuts, wherever a text is cut far from the run's own Redactor (a server's error message)
_known: list[str] = []
_known_redactor: list[Redactor] = []


def remember(*secrets: str) -> None:
    new = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS and s not in _known]
    if new:
        _known.extend(new)
        _known_redactor.clear()


def redact_known(text: str) -> str:
    """`text` with every key this process knows masked."""
    if not _known:
        return text
    if not _known_redactor:
        _known_redactor.append(Redactor(list(_known)))
    return _known_redactor[0].text(text)


def cut(text: str, limit: int) -> str:
    """The first `limit` characters of `text` once every key this process knows is masked: a cut
    first would leave a key's start, which no redactor afterwards can tell from any other text."""
    return redact_known(text)[:limit]


class Redactor:
    def __init__(self, secrets: list[str] | None = None, public: tuple[str, ...] = ()):
        self.secrets = sorted({s for s in secrets or [] if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        # what the records' keys are made of: a fragment of a key that is also part of one of
        # these is left alone (masking it would change every record's key; it is no secret)
        self._public = tuple(p.lower() for p in public)
        # the anchors any form of a secret holds (its start and end, per block, normalised) and
        # the base64 cores, as clean_json searches for them
        self._anchors = sorted({a for s in self.secrets for a in _anchors(s)})
        cores = sorted({c for s in self.secrets for c in _base64_cores(s)}, key=len, reverse=True)
        self._cores = [json.dumps(c)[1:-1] for c in cores]
        pattern = "|".join(p for s in self.secrets for p in _forms(s))
        self._secret = re.compile(pattern, re.IGNORECASE) if pattern else None
        self._base64 = re.compile("|".join(map(re.escape, cores))) if cores else None
        remember(*self.secrets)

    @classmethod
    def from_env(cls, *names: str, public: tuple[str, ...] = ()) -> Redactor:
        """The keys the variables hold, less any that a `public` name (a model, a condition: what
        the records' keys are made of) holds: masking it there would change every record's key,
        and such a key is no secret anyway."""
        keys = [os.environ.get(n, "") for n in names]
        return cls([k for k in keys if not any(k.lower() in p.lower() for p in public)], public)

    def text(self, value: str) -> str:
        if self._secret is not None:
            value = self._secret.sub(self._mask, value)
        if self._base64 is not None:
            value = self._base64.sub(MASK, value)
        value = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
        value = _URL_KEY.sub(lambda m: f"{m.group(1)}{MASK}", value)
        return _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{MASK}", value)

    def _mask(self, match: re.Match[str]) -> str:
        found = match.group().lower()
        return match.group() if any(found in p for p in self._public) else MASK

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
        if self._anchors:
            low = _normalised(text)
            if "%" in low:  # a percent-encoded form: its decoded text holds the anchors
                low += " " + _normalised(unquote(low))
            if any(a in low for a in self._anchors):
                return False
        if any(c in text for c in self._cores):
            return False
        low = text.lower()
        if "bearer" in low or "authorization" in low or "=" in text and _URL_KEY.search(text):
            return False
        if not any(c in text for c in _FOLDS_TO_ASCII):
            return True
        # such a character matches an ASCII letter of a key's pattern too (a long s as an s)
        return self._secret is None and _HINT.search(text) is None


def credentials_in(url: str) -> bool:
    """The URL carries a user name or password (`http://user:secret@host/v1`)."""
    try:
        return "@" in (urlsplit(url).netloc or "")
    except ValueError:
        return False


def without_credentials(text: str) -> str:
    """Every URL's user-info part and #fragment in `text` masked: what may be printed of a URL
    that holds one (a fragment no server reads may hold a token: `#access_token=...`)."""
    return _FRAGMENT.sub(r"\1#***", _USERINFO.sub(r"\1***@", text))


_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s'\"]+@")
_FRAGMENT = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"#]*)#[^\s'\"]+")


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
