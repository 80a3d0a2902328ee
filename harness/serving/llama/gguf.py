"""Any local GGUF file as a model: `--model gguf:PATH`, served by the embedded llama.cpp server
with the chat template the file declares (`tokenizer.chat_template` in its metadata).

llama-cpp-python, given no chat format, may swap a known template for a built-in format of the
same name (`guess_chat_format_from_gguf_metadata`); we name `chat_template.default` explicitly,
so the server renders the file's own Jinja template. It renders `tools` where the template does,
but returns no structured tool calls: in native mode the calls come back as text.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO, Unpack

from envs.errors import UserError
from harness.serving.llama.local import DEFAULT_SETTINGS, LlamaServer, LlamaSettings, ServerKeywords

PREFIX = "gguf:"
_MAGIC = b"GGUF"


class GgufError(UserError):
    """A GGUF path that is missing, not a GGUF file, or one that cannot be served or converted."""


def is_gguf_name(name: str) -> bool:
    return name.startswith(PREFIX)


def gguf_file(name: str) -> Path:
    """The file a `gguf:PATH` model name points at, checked: a GGUF with a chat template."""
    raw = name[len(PREFIX) :] if is_gguf_name(name) else name
    if not raw:
        raise GgufError("--model gguf: needs a path, e.g. --model gguf:/models/qwen2.5-0.5b-instruct-q4_k_m.gguf")
    path = Path(raw).expanduser()
    if not path.is_file():
        raise GgufError(f"no GGUF file at {str(path)!r}; pass --model gguf:PATH with the path of a .gguf file")
    with path.open("rb") as fh:
        if fh.read(4) != _MAGIC:
            raise GgufError(f"{str(path)!r} is not a GGUF file (it does not start with the GGUF magic bytes)")
    chat_template(path)
    return path.resolve()


def served_alias(path: Path) -> str:
    """The name the llama.cpp server answers to for this file."""
    return path.stem


# GGUF metadata value types (gguf spec): fixed-size scalars, 8 = string, 9 = array
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def metadata(
    path: Path, keys: frozenset[str] = frozenset({"tokenizer.chat_template", "general.name"})
) -> dict[str, Any]:
    """The string/scalar metadata `keys` of a GGUF file, read from its header (no model load)."""
    out: dict[str, Any] = {}
    try:
        with path.open("rb") as fh:
            magic, version, _tensors, n_kv = struct.unpack("<4sIQQ", fh.read(24))
            if magic != _MAGIC or version < 2:
                raise ValueError(f"GGUF version {version} is not supported (2 or later)")
            for _ in range(n_kv):
                key = _string(fh)
                value = _value(fh, struct.unpack("<I", fh.read(4))[0])
                if key in keys:
                    out[key] = value
    except (ValueError, struct.error, UnicodeDecodeError, MemoryError) as exc:
        raise GgufError(f"{str(path)!r}: unreadable GGUF header ({exc})") from None
    return out


def _string(fh: BinaryIO) -> str:
    (n,) = struct.unpack("<Q", fh.read(8))
    if n > 1 << 26:
        raise ValueError(f"a string of {n} bytes")
    return fh.read(n).decode("utf-8")


def _value(fh: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, fh.read(struct.calcsize(fmt)))[0]
    if kind == 8:
        return _string(fh)
    if kind == 9:
        item, n = struct.unpack("<IQ", fh.read(12))
        for _ in range(n):  # arrays (the vocabulary) are skipped, not kept
            _value(fh, item)
        return None
    raise ValueError(f"unknown metadata type {kind}")


def chat_template(path: Path) -> str:
    """The file's declared chat template; GgufError when it has none."""
    template = metadata(path).get("tokenizer.chat_template")
    if not template:
        raise GgufError(
            f"{str(path)!r} declares no chat template (tokenizer.chat_template); "
            "pass a GGUF of an instruction-tuned model that carries one"
        )
    return template


class GgufServer(LlamaServer):
    """One GGUF under one alias (its file stem), rendered with its own chat template."""

    label = "llama.cpp server (gguf)"

    def __init__(self, path: Path, *, settings: LlamaSettings = DEFAULT_SETTINGS, **server: Unpack[ServerKeywords]):
        self.alias = served_alias(path)
        # its own chat template, from the file's metadata
        entry = settings.entry(path, self.alias, "chat_template.default")
        server.setdefault("startup_timeout_s", 180.0)  # a larger file than the embedded one loads longer
        super().__init__([entry], **server)
