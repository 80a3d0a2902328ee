"""Two spellings of one composition are one condition in the report.

A record keeps the condition's name as the user wrote it (`allowed_json`, or its composition
`retry+code+location+observed+allowed@json`) and the canonical composition it played
(`condition_params.composition`), beside its arbiter and environment settings. Where several
written names played the same composition with the same settings, the report shows them as one
condition, under the alias's name where one of them is an alias (the name without an `@`), else
the first in sorted order; an episode that both spellings played counts once (the preferred
spelling's), so no task is paired with itself or counted twice.
"""

from __future__ import annotations

import json

import pandas as pd

from results.columns import C
from results.factors import ARBITER, COMPOSITION, ENV
from results.load import PAIR_FIELDS


def _setting(df: pd.DataFrame) -> pd.Series:
    """What makes two written names one condition: the composition, the arbiter, the settings."""
    parts = [df[c] if c in df else pd.Series(None, index=df.index) for c in (COMPOSITION, ARBITER, ENV)]
    return pd.Series(
        [json.dumps(list(v), sort_keys=True, default=str) for v in zip(*parts, strict=True)], index=df.index
    )


def merge_spellings(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The frame with each condition under one name per composition, and {written: shown} for the
    names it merged (empty when every composition has one spelling, or none is recorded)."""
    if COMPOSITION not in df or df.empty:
        return df, {}
    names = df[[C.condition]].assign(setting=_setting(df)).drop_duplicates()
    names = names[names["setting"].map(lambda s: json.loads(s)[0] is not None)]
    merged: dict[str, str] = {}
    for _, group in names.groupby("setting", sort=False):
        written = sorted(group[C.condition], key=lambda n: ("@" in n, n))
        merged.update({n: written[0] for n in written[1:]})
    if not merged:
        return df, {}
    preferred = df[~df[C.condition].isin(merged)]
    kept = pd.MultiIndex.from_frame(preferred[[*PAIR_FIELDS, C.condition]].astype(str))
    others = df[df[C.condition].isin(merged)].assign(**{C.condition: lambda f: f[C.condition].map(merged)})
    keys = others[[*PAIR_FIELDS, C.condition]].astype(str)
    fresh = ~pd.MultiIndex.from_frame(keys).isin(kept) & ~keys.duplicated().to_numpy()
    out = pd.concat([preferred, others[fresh]]).sort_index(kind="stable")
    out.attrs = df.attrs
    return out, merged
