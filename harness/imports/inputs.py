"""An import's input files opened as what they claim to be: a regular file, never a FIFO or a
device (a FIFO named like a result file waits for a writer forever, /dev/zero never ends), UTF-8
text read line by line, each line of bounded size. A file that is not is one line naming it, the
line and the byte (exit 2), never a traceback or a hang."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Generator
from pathlib import Path

from envs.errors import UserError

# a line longer than this is no entry any harness wrote (BFCL's longest are a few MB): it is read no
# further, so a file of one endless line exhausts no memory
MAX_LINE_BYTES = 256 * 1024 * 1024
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}
_KINDS |= {stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


class InputError(UserError):
    """An input file that is not what its name claims: not a regular file, unreadable, not UTF-8."""


def regular(path: Path) -> None:
    """`path` is a regular file this user may read; else one line saying what it is."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "no regular file")
        raise InputError(f"{path} is {kind}, not a file: give the result file itself")


def text_lines(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Generator[tuple[int, str], None, None]:
    """The file's lines, numbered from 1, each decoded as UTF-8 (strictly: an encoded surrogate, a
    0xFF byte or a UTF-16 file is named, never read as U+FFFD)."""
    regular(path)
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    with f:
        for number, raw in enumerate(iter(lambda: f.readline(max_line_bytes + 1), b""), 1):
            if len(raw) > max_line_bytes:
                raise InputError(f"{path}: line {number} is longer than {max_line_bytes:,} bytes: no entry is")
            if number == 1 and raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                raise InputError(f"{path} is UTF-16 text; the format is UTF-8: convert it (iconv -f utf-16 -t utf-8)")
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}: line {number} is not UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                    f"of the line: {exc.reason})"
                ) from None
