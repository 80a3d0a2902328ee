"""A stand-in bfcl-eval release for the tests, made with no network: a copy of the installed
package's multi-turn parts (backends, checker, type table, data) in the release cache under another
version, with one backend message changed, so a replay tells which release answered."""

from __future__ import annotations

import shutil
from pathlib import Path

# GorillaFileSystem.cd's answer to a path of several folders; the log of the fixture's base_11 has it
SENTENCE = "Only one folder level at a time is supported."
BACKEND = Path("eval_checker", "multi_turn_eval", "func_source_code", "gorilla_file_system.py")


def standin(cache: Path, version: str, sentence: str | None = None) -> Path:
    """`cache/<version>`: the installed bfcl_eval's multi-turn parts, `SENTENCE` said as `sentence`."""
    import bfcl_eval  # the tests that call this carry the bfcl extra's mark

    source = Path(bfcl_eval.__file__).parent
    target = cache / version
    package = target / "bfcl_eval"
    skip = shutil.ignore_patterns("__pycache__")
    package.mkdir(parents=True)
    shutil.copy2(source / "__init__.py", package / "__init__.py")
    shutil.copytree(source / "constants", package / "constants", ignore=skip)
    (package / "eval_checker").mkdir()
    shutil.copy2(source / "eval_checker" / "__init__.py", package / "eval_checker" / "__init__.py")
    shutil.copytree(
        source / "eval_checker" / "multi_turn_eval", package / "eval_checker" / "multi_turn_eval", ignore=skip
    )
    data = package / "data"
    shutil.copytree(source / "data" / "multi_turn_func_doc", data / "multi_turn_func_doc")
    (data / "possible_answer").mkdir()
    for path in (source / "data").glob("BFCL_v*_multi_turn_*.json"):
        shutil.copy2(path, data / path.name)
        shutil.copy2(source / "data" / "possible_answer" / path.name, data / "possible_answer" / path.name)
    info = target / f"bfcl_eval-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: bfcl-eval\nVersion: {version}\n")
    if sentence is not None:
        backend = package / BACKEND
        text = backend.read_text()
        assert SENTENCE in text, f"{BACKEND} no longer says {SENTENCE!r}: pick another message"
        backend.write_text(text.replace(SENTENCE, sentence))
    return target
