"""Analysis of run records: loading, statistics, paired contrasts, reports, plots, paper numbers.

Reads records.jsonl files only; it imports nothing from `harness`.
"""

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
