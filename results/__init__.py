"""Analysis of run records: loading, statistics, paired contrasts, reports, plots, paper numbers.

Reads records.jsonl files only; it imports nothing from `harness`.

The names below are imported on first use (PEP 562): `harness.rundir.store` imports `results.rundir`
when `run` starts, and that must not import pandas, scipy or statsmodels.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from results.columns import KEY_FIELDS
    from results.contrasts import ContrastResult, contrasts, pair, parse_contrasts
    from results.errors import RecordsError, UsageError
    from results.export import to_parquet
    from results.load import PAIR_FIELDS, load
    from results.report import FORMATS, build_report, render_report
    from results.stats import failure_taxonomy, funnel, summary, wilson

__all__ = [
    "FORMATS",
    "KEY_FIELDS",
    "PAIR_FIELDS",
    "ContrastResult",
    "RecordsError",
    "UsageError",
    "build_report",
    "contrasts",
    "failure_taxonomy",
    "funnel",
    "load",
    "pair",
    "parse_contrasts",
    "render_report",
    "summary",
    "to_parquet",
    "wilson",
]

# the module that defines each name of __all__
_HOME = {
    **dict.fromkeys(("ContrastResult", "contrasts", "pair", "parse_contrasts"), "results.contrasts"),
    **dict.fromkeys(("RecordsError", "UsageError"), "results.errors"),
    "to_parquet": "results.export",
    **dict.fromkeys(("KEY_FIELDS", "PAIR_FIELDS", "load"), "results.load"),
    **dict.fromkeys(("FORMATS", "build_report", "render_report"), "results.report"),
    **dict.fromkeys(("failure_taxonomy", "funnel", "summary", "wilson"), "results.stats"),
}


class _Package(types.ModuleType):
    """`results.load` and `results.contrasts` are functions, though modules of those names exist:
    importing a submodule sets it as the package's attribute, and here the function it defines
    takes its place (as the eager `from results.load import load` of old made it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _HOME.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
