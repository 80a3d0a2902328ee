"""The protocols a frame's records played, as their environments recorded them, and what BFCL's own
verdict changed under its protocol (the report's meta)."""

from __future__ import annotations

import pandas as pd

from results.columns import C


def force_quits_won(df: pd.DataFrame) -> int | None:
    """Under BFCL's protocol: the episodes its evaluate won after a force-quit in the last turn (the
    report shows BFCL's verdict; the harness's own rule would call them lost)."""
    # the records' own protocol, not protocols(): that one names a protocol with its suite where suites mix
    if "extra.protocol" not in df.columns or not (df["extra.protocol"] == "bfcl").any():
        return None
    if "extra.force_quit_won" not in df.columns:
        return 0
    return int(df["extra.force_quit_won"].astype("boolean").fillna(False).sum())


def protocols(df: pd.DataFrame) -> list[str]:
    """The protocols the records played, as their environments recorded them (e.g. plan, veriharness);
    where the frame also holds suites that record none (bank-disputes beside paper-textworld), each
    is named with its suite ("plan (paper-textworld)"): a protocol is one suite's, not the folder's."""
    if "extra.protocol" not in df.columns:
        return []
    rows = df[[C.suite, "extra.protocol"]].dropna()
    # a text column's distinct values print as the values (not so an object column: 1 == True)
    pairs = {(str(s), str(p)) for s, p in rows.drop_duplicates().itertuples(index=False)}
    if set(df[C.suite].astype(str).unique()) <= {s for s, _ in pairs}:
        return sorted({p for _, p in pairs})
    return sorted(f"{p} ({s})" for s, p in pairs)
