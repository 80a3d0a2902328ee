"""Secrets never reach a record, a transcript, a log or the console.

Every text the harness writes passes through one `Redactor`: it removes the API key's value (read
from the environment variable the spec names), any `Bearer …` token and the value of any
`Authorization` header, wherever a server or an exception happened to echo them.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "[REDACTED]"
# a key shorter than this is not a secret worth the risk of masking ordinary words ("EMPTY", "x")
MIN_SECRET_CHARS = 8
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{4,}")
_AUTH_HEADER = re.compile(r"(?i)(\bauthorization['\"]?\s*[:=]\s*['\"]?)(?!bearer\b)[^'\"\s,}\]]{4,}")


class Redactor:
    def __init__(self, secrets: list[str] | None = None):
        self.secrets = sorted({s for s in secrets or [] if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    @classmethod
    def from_env(cls, *names: str) -> "Redactor":
        return cls([os.environ.get(n, "") for n in names])

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        value = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", value)
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
