"""How the report's text writes a number: a share, a count, a p-value, a difference with its CI,
and a test's name; one place, so every section and the JSON's readers agree."""

from __future__ import annotations

from results.contrasts import P_FLOOR
from results.power import POWER
from results.resampling import MIN_CLUSTERS

TEST_NAMES = {"mcnemar_exact": "McNemar", "sign_flip": "sign-flip", "too_few_tasks": "too few tasks"}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _p(x: float | None) -> str:
    """One p-value format: four decimals from 1e-4 up, scientific below (as the JSON keeps six
    significant digits there: results.report._rounded), a p at the floor a bound, never 0."""
    if x is None:
        return "—"
    if x <= P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def _p_drawn(x: float | None, draws: int = 0, se: float | None = None) -> str:
    """A p as `_p` writes it, and a Monte Carlo p (draws > 0) with its standard error: 0.0471 ±0.0007."""
    return _p(x) if x is None or not draws or se is None else f"{_p(x)} ±{se:.4f}"


def mc_note(draws: list[int]) -> str | None:
    """Under a table with Monte Carlo p's: what their ± is (None where every p is exact)."""
    drawn = sorted({d for d in draws if d})
    if not drawn:
        return None
    span = f"{drawn[0]:,}" if len(drawn) == 1 else f"{drawn[0]:,} to {drawn[-1]:,}"
    return (
        f"p ±: a sign flip's Monte Carlo p and its standard error over {span} draws (more where it lies near "
        "alpha); JSON p_draws, p_se. Other p's are exact"
    )


def _yes(x: bool | None) -> str:
    return "—" if x is None else ("yes" if x else "no")


def _diff(
    diff: float | None,
    low: float | None,
    high: float | None,
    pairs: int,
    scale: float,
    digits: int,
    tasks: int | None = None,
) -> str:
    """A difference with its CI; a contrast of one pair has none (results.contrasts), nor one of
    too few tasks where the task is the unit (`tasks`), and it says which."""
    if diff is None:
        return "—"
    if (low is None or high is None) and tasks is not None:
        return f"{scale * diff:+.{digits}f} [no CI: {tasks} task{'s' if tasks != 1 else ''}]"
    if low is None or high is None:
        return f"{scale * diff:+.{digits}f} [no CI: {pairs} pair{'s' if pairs != 1 else ''}]"
    return f"{scale * diff:+.{digits}f} [{scale * low:+.{digits}f}, {scale * high:+.{digits}f}]"


def null_result(
    name: str,
    p: float | None,
    mde: float | None,
    alpha: float,
    size: str,
    holm_of: int | None = None,
    draws: int = 0,
    se: float | None = None,
) -> str | None:
    """A null result's line with what its test could have seen (its MDE); None where the test found
    a difference. `holm_of`: the size of the family, where `p` is Holm's. A difference may have been
    observed: the test did not call it at this size, which is not "no difference". `draws`, `se`: a
    Monte Carlo p's draws and standard error, said beside it (0: an exact p)."""
    if p is None or p < alpha:
        return None
    return f"{name}: {null_reason(p, mde, alpha, size, holm_of, draws, se)}"


def null_reason(
    p: float,
    mde: float | None,
    alpha: float,
    size: str,
    holm_of: int | None = None,
    draws: int = 0,
    se: float | None = None,
) -> str:
    """null_result's line less the name: rows whose reasons are equal share one line (`merged`)."""
    seen = "none up to a whole difference" if mde is None else f"±{100 * mde:.1f} pts"
    which, where = (
        ("p", size) if holm_of is None else ("p Holm", f"{size}; alpha {alpha:g}/{holm_of}, Holm's first step")
    )
    said = f"detectable with {POWER:.0%} power at this size: {seen} ({where})"
    drawn = f"; its p a Monte Carlo estimate, ±{se:.4f} over {draws:,} draws" if draws and se is not None else ""
    return f"not significant at this size ({which} {_p(p)}{drawn}); {said}"


def can_reach(units: int, alpha: float, holm_of: int = 1) -> bool:
    """Whether an exact paired test on `units` (pairs, one per task; or tasks, where the task is the
    unit) can give a p below alpha at all, Holm-adjusted over `holm_of`: the smallest two-sided p of
    McNemar's test (every pair discordant one way) and of a sign flip (every task's sign alike) is
    2 / 2^units."""
    return units > 0 and holm_of * 2.0 ** (1 - units) < alpha


def units_to_reach(alpha: float, holm_of: int = 1) -> int:
    """The fewest units at which `can_reach` holds (at least MIN_CLUSTERS: the report's interval)."""
    n = MIN_CLUSTERS
    while not can_reach(n, alpha, holm_of):
        n += 1
    return n


def beyond_reach(count: int, units: int, word: str, alpha: float, holm_of: int) -> str:
    """One line for a family of comparisons none of which can be significant at its size."""
    which = "this comparison cannot" if count == 1 else f"none of these {count} comparisons can"
    holm = f", Holm over {holm_of} per family" if holm_of > 1 else ""
    return (
        f"{which} reach p < {alpha:g} with {units:,} {word.removesuffix('s') if units == 1 else word}"
        f"{'' if count == 1 else ' each'}{holm}: "
        f"run ≥ {units_to_reach(alpha, holm_of)} tasks (the power a size gives: repair-harness power)"
    )


def merged(lines: list[tuple[str, str]]) -> list[str]:
    """(name, reason) pairs as one line per reason, its names joined: notes that repeat are one line."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in lines:
        by_reason.setdefault(reason, []).append(name)
    return [f"{'; '.join(names)}: {reason}" for reason, names in by_reason.items()]
