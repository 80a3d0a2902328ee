"""Two spellings of one composition are one condition in the report.

A record keeps the condition's name as the user wrote it (`allowed_json`, or its composition
`retry+code+location+observed+allowed@json`) and the canonical composition it played
(`condition_params.composition`), beside its arbiter and environment settings. Where several
written names played the same composition with the same settings, the report shows them as one
condition, under the alias's name where one of them is an alias (the name without an `@`), else
the first in sorted order; an episode that both spellings played counts once (the preferred
spelling's), so no task is paired with itself or counted twice.

A name the records do not hold answers too (`other_names`): a grid that named `allowed_json` and
its spelling played them once, under one name, and either is what a user may type afterwards
(`report --contrasts`, `show --condition`). A registered condition (an alias) and a composition
spelled in any order are the condition shown whose composition, arbiter and settings they mean.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pandas as pd

import conditions
from envs.errors import UserError
from results.columns import C
from results.factors import ARBITER, COMPOSITION, ENV
from results.load import PAIR_FIELDS


def _setting(df: pd.DataFrame) -> pd.Series:
    """What makes two written names one condition: the composition, the arbiter, the settings."""
    parts = [df[c] if c in df else pd.Series(None, index=df.index) for c in (COMPOSITION, ARBITER, ENV)]
    return pd.Series(
        [json.dumps(list(v), sort_keys=True, default=str) for v in zip(*parts, strict=True)], index=df.index
    )


def setting_of(params: dict[str, Any]) -> str:
    """A record's `condition_params` (or a condition's `record()`) as `_setting` writes it."""
    return json.dumps(
        [params.get("composition"), params.get("arbiter"), params.get("env")], sort_keys=True, default=str
    )


def shown_as(typed: str, shown: dict[str, str]) -> str | None:
    """The condition shown (a name of `shown`, {name: its setting}) that a typed name means: the name
    itself, or the one of the same composition, arbiter and settings; None when none is."""
    if typed in shown:
        return typed
    try:
        meant = setting_of(conditions.get_condition(typed).record())
    except UserError:  # not a condition at all: the caller names what is present
        return None
    return next((name for name, setting in shown.items() if setting == meant), None)


def other_names(shown: dict[str, str], typed: Iterable[str] = ()) -> dict[str, str]:
    """{another name: the condition shown} for every registered condition and every `typed` name
    that means a condition shown (`shown`: {name: its setting}) under another name."""
    found = {}
    for name in [*conditions.CONDITIONS.names(), *typed]:
        target = shown_as(name, shown)
        if target is not None and target != name:
            found[name] = target
    return found


def settings(df: pd.DataFrame) -> dict[str, str]:
    """{condition: its setting} of the conditions in a frame."""
    if COMPOSITION not in df or df.empty:
        return {}
    return dict(zip(df[C.condition], _setting(df), strict=True))


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
