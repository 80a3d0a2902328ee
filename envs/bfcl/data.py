"""BFCL's multi-turn data as the imported package holds it: entries, ground truth, function docs.

Only the package's data files and its backend modules are read; its `utils` (filelock, dotenv) and
its runners are not imported. The package is the installed one, or, in an import's worker
(harness.imports.worker), a cached release put first on sys.path: the version and the data files'
prefix (BFCL_v3 up to 2025.8.6.2, BFCL_v4 since) are read from the package imported, never assumed.

The function docs get what BFCL's loader adds (the Python hint on every description); a `miss_func`
entry's held-back docs come out of the list, keyed by the turn that adds them back, as BFCL's
`populate_test_cases_with_predefined_functions` does.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from envs.errors import UserError

# the release the suites are tested on, and the one to install; what is replayed on is `version()`
SUPPORTED = "2026.3.23"
INSTALL = f'pip install --no-deps "bfcl-eval=={SUPPORTED}" mpmath'
CATEGORIES = ("base", "miss_param", "miss_func", "long_context")
STEP_LIMIT = 20  # bfcl_eval.constants.default_prompts.MAXIMUM_STEP_LIMIT (checked by a test)
TEMPERATURE = 0.001  # `bfcl generate --temperature`'s default (checked by a test)
# what `bfcl generate` samples with: its temperature, no top_p, no token cap (Decoding's fields)
RUNNER_DECODING = {"temperature": TEMPERATURE, "top_p": None, "max_tokens": None}
_HINT = " Note that the provided function is in Python 3 syntax."
# BFCL's multi-turn classes -> the module in func_source_code and the doc file of each (one name
# for both: constants.executable_backend_config)
CLASSES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}


class BfclMissing(UserError):
    def __init__(self, why: str):
        super().__init__(f"the BFCL suites need the package bfcl-eval ({why}); install it with: {INSTALL}")


@functools.lru_cache(maxsize=1)
def package_dir() -> Path:
    """The installed bfcl_eval package; a clear error naming the install command when it is not."""
    try:
        # bfcl-eval: installed apart, with --no-deps (pyproject.toml, the [bfcl] extra)
        import bfcl_eval
        import mpmath  # noqa: F401  (MathAPI's backend imports it)
    except ImportError as exc:
        raise BfclMissing(f"cannot import {exc.name or 'bfcl_eval'}") from None
    root = Path(bfcl_eval.__file__).parent
    if not any((root / "data").glob("BFCL_v*_multi_turn_base.json")):
        raise BfclMissing(f"{root} holds no multi-turn data; bfcl-eval=={SUPPORTED} does")
    return root


@functools.lru_cache(maxsize=1)
def prefix() -> str:
    """The data files' prefix in the imported release (`BFCL_v4`); the newest where several are."""
    names = [
        p.name.removesuffix("_multi_turn_base.json")
        for p in (package_dir() / "data").glob("BFCL_v*_multi_turn_base.json")
    ]
    return max(names, key=lambda n: int(n.removeprefix("BFCL_v")) if n.removeprefix("BFCL_v").isdigit() else -1)


@functools.lru_cache(maxsize=1)
def version() -> str:
    """The release replayed on: the metadata beside the imported package (a `pip install --target`
    folder, site-packages), else the environment's (an editable install keeps it elsewhere)."""
    root = package_dir()
    for dist in metadata.distributions(path=[str(root.parent)]):
        if str(dist.metadata["Name"]).lower().replace("_", "-") == "bfcl-eval":
            return dist.version
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return "unknown"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@functools.cache
def docs(cls: str) -> tuple[dict[str, Any], ...]:
    """A class's function docs, each description with BFCL's Python hint."""
    out = _lines(package_dir() / "data" / "multi_turn_func_doc" / f"{CLASSES[cls]}.json")
    for doc in out:
        doc["description"] += _HINT
    return tuple(out)


@functools.cache
def _entries(category: str) -> dict[str, dict[str, Any]]:
    data = package_dir() / "data"
    name = f"{prefix()}_multi_turn_{category}.json"
    entries = _lines(data / name)
    truth = {e["id"]: e["ground_truth"] for e in _lines(data / "possible_answer" / name)}
    return {e["id"]: {**e, "ground_truth": truth[e["id"]]} for e in entries}


def entry_ids(category: str) -> list[str]:
    return list(_entries(category))


def entry(category: str, entry_id: str) -> dict[str, Any]:
    """The entry as BFCL's data file has it, plus its `ground_truth` (a copy: the caller may keep it)."""
    return copy.deepcopy(_entries(category)[entry_id])


def unhinted(doc: dict[str, Any]) -> dict[str, Any]:
    """A held-back doc as BFCL's loader leaves it: it adds the hint only after taking the held-back
    docs out of the entry's list (`populate_test_cases_with_predefined_functions` runs first)."""
    return {**doc, "description": doc["description"].removesuffix(_HINT)}


def functions(e: dict[str, Any], shared: bool = False) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """The docs an entry starts with, and the held-back ones by the turn that adds them: copies, or
    with `shared` the docs `docs` holds, for a caller that only reads them (the same objects each time)."""
    start = [d if shared else copy.deepcopy(d) for cls in e["involved_classes"] for d in docs(cls)]
    held: dict[int, list[dict[str, Any]]] = {}
    for turn, names in e.get("missed_function", {}).items():
        for name in names:
            i = next(i for i, d in enumerate(start) if d["name"] == name)
            held.setdefault(int(turn), []).append(start.pop(i))
    return start, held


def most_steps() -> int:
    """The most model calls BFCL's runner makes on an entry: 21 a turn (its force-quit after
    STEP_LIMIT steps with calls), times the most turns of any category's entry (one bound for all
    categories, as an import's, so that runs of several pool). No other bound cuts an entry."""
    return (STEP_LIMIT + 1) * max(len(e["question"]) for c in CATEGORIES for e in _entries(c).values())
