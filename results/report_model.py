"""The report's types: what `build_report` returns and every renderer reads.

Rows keep the statistics' full column set (the JSON format lists them all); the fields the
renderers read are declared, so a renamed statistic fails at validation, not as a KeyError in
a table. Group columns (model, suite, budget, ...) vary with `--by` and ride along as extra
fields, read through `Row.group`.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA = "repair-harness.report/1"


class Row(BaseModel):
    model_config = ConfigDict(extra="allow")

    def group(self, columns: list[str]) -> dict[str, str]:
        values = self.model_dump()
        return {c: str(values[c]) for c in columns if c in values}


class PaperCell(BaseModel):
    solved: int | None
    n: int | None
    rate: float | None
    calls: int | None
    calls_per_game: float | None
    inside_ci: bool | None
    note: str


class CellRow(Row):
    condition: str
    episodes: int
    sample_seeds: int
    harness_errors: int
    n: int
    solved: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    model_calls_mean: float | None
    tokens_per_success: float | None
    words_per_success: float | None
    first_call_valid_rate: float | None
    repaired_rate: float | None
    usage_unknown: int = 0
    paper: PaperCell


class ContrastRow(Row):
    contrast: str
    a: str
    b: str
    n_pairs: int
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    a_only: int
    b_only: int
    test: str
    p_value: float | None
    p_holm: float | None
    # a Monte Carlo p (a sign flip not enumerated) says so: its draws and standard error; 0 where exact
    p_draws: int = 0
    p_se: float | None = None
    calls_diff: float | None = None
    calls_ci_low: float | None = None
    calls_ci_high: float | None = None
    calls_p_holm: float | None = None
    n_unpaired: int
    paper_diff: float | None
    paper_inside_ci: bool | None
    # the smallest difference this row's test detects with 80% power at its size (Holm's first step)
    mde: float | None = None


class FailureRow(Row):
    condition: str
    final_failure: str
    count: int
    share: float | None


class DynamicsRow(Row):
    """A cell's repair path (results.dynamics); rates with nothing to count are None."""

    condition: str
    retries: int
    identical_resubmission: float | None
    episodes_with_rejection: int
    recovery_at: dict[str, float | None]
    recovery_at_1_ci_low: float | None
    recovery_at_1_ci_high: float | None
    pass_k: dict[str, float | None]
    pass_k_flat: bool
    retry_overhead_tokens_per_episode: float | None
    retry_overhead_tokens_per_success: float | None
    rejections: int
    schema_rejections: int
    constrained_rejections: int
    preventable_share: float | None
    preventable_ci_low: float | None
    preventable_ci_high: float | None
    # after an error (results.dynamics.NEXT): how many rejections, what the next attempt did
    after_error_n: int | None = None
    after_error: dict[str, float | None] = {}
    after_error_counts: dict[str, int] = {}


class ForkRow(Row):
    """A condition's repairs of recorded failures (results.forks); rates with no fork point are None."""

    model: str
    condition: str
    fork_points: int
    tasks: int | None = None
    repaired_next: float | None
    repaired_next_ci_low: float | None = None
    repaired_next_ci_high: float | None = None
    solved: float | None
    solved_ci_low: float | None = None
    solved_ci_high: float | None = None
    # tasks of parts (BFCL's turns): the part the failure was in, solved by the suite's checker
    part_solved: float | None = None
    part_solved_ci_low: float | None = None
    part_solved_ci_high: float | None = None
    calls_to_repair: float | None = None
    tokens_per_repair: float | None = None
    calls_paid: int | None = None
    calls_replayed: int | None = None
    # the source's own next move at the same points (results.fork_sources): its player, and
    # whether that player is another than the forks' (player and feedback confounded)
    player: str | None = None
    confounded: bool | None = None
    # a fork condition's repaired-next minus the source's own, where the player is the same
    vs_source: float | None = None
    vs_source_ci_low: float | None = None
    vs_source_ci_high: float | None = None
    vs_source_p: float | None = None
    vs_source_test: str | None = None
    vs_source_points: int | None = None  # the points whose source player is the fork's
    vs_source_mde: float | None = None
    # model calls a fork episode paid, on average: what a point costs under this condition
    calls_per_point: float | None = None
    # the share whose repairing call is a reference call or solved the failed part (accepted is not repaired)
    progressed: float | None = None
    # several points per task on too few tasks for a clustered interval: none is given
    too_few_tasks: bool = False


class Divergence(BaseModel):
    """Where a replayed entry first departed from the conversation its file logged."""

    task_id: str
    call: int | None
    cause: str | None


class ImportRow(Row):
    """An import's model and suite (results.imports): its files' entries, what became of each,
    how faithful the replay was, and the agreement with the published score file (None: none came)."""

    model: str
    suite: str
    format: str
    run_dirs: list[str]
    files: list[dict[str, Any]]
    entries: int | None
    replayed: int
    harness_errors: int
    skipped: int
    skipped_by_cause: dict[str, int]
    skipped_ids: dict[str, list[str]]
    faithful: int
    diverged: int
    unverified: int
    # replayed records older than the fidelity fields: neither faithful nor diverged, unknown
    fidelity_unknown: int
    divergences: list[Divergence]
    calls: int | None
    bfcl_eval: str | None
    score_files: list[str]
    verdicts: int | None
    agree: int | None
    disagree_ids: list[str]


class FactorRow(Row):
    """A part's (or the form's) pooled paired effect on success (results.factors)."""

    model: str
    factor: str
    level_a: str
    level_b: str
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    pairs: int
    arm_pairs: int
    # the test results.contrasts.paired_effect chose for the pairs' unit (as a contrast's)
    test: str | None = None
    p_draws: int = 0
    p_se: float | None = None
    mde: float | None = None


class Untestable(BaseModel):
    """A factor a model's compositions name, but no two of its conditions differ in alone."""

    model: str
    factor: str


class Factors(BaseModel):
    """`report --factors`: the effect rows, and the factors a composition names but no pair isolates."""

    rows: list[FactorRow]
    untestable: list[Untestable]


class GapRow(Row):
    """A planned cell without full results (results.grid): not run, harness errors only, or partial."""

    condition: str
    run_dir: str
    episodes: int
    harness_errors: int
    expected: int | None
    status: str
    run_started: bool


class HeadlineRow(Row):
    contrast: str
    gain_points: float | None
    gain_ci_low_points: float | None
    gain_ci_high_points: float | None
    tokens_per_success_ratio: float | None
    theirs_gain_points: list[float]
    theirs_tokens_per_success_ratio: list[float]
    gain_ci_overlaps_theirs: bool | None
    ratio_inside_theirs: bool | None
    note: str


class Meta(BaseModel):
    run_dirs: list[str]
    episodes: int
    harness_errors: int
    partial_lines: int
    group_by: list[str]
    contrasts: list[str]
    contrast_source: str
    n_boot: int
    seed: int
    alpha: float
    # what the records' environments played (plan, step, veriharness); [] where unrecorded
    protocols: list[str] = Field(default_factory=list)
    # what the records hold, so a renderer shows the paper's references only where they apply
    suites: list[str] = Field(default_factory=list)
    budgets: list[int] = Field(default_factory=list)
    # the grid the runs' specs planned (results.grid); 0 where no spec was found
    planned_cells: int = 0
    # contrasts of a group where no task was played under both arms: no test is shown for them
    contrasts_without_pairs: list[str] = Field(default_factory=list)
    # written name -> the name it is shown under, where two spellings played one composition
    # (results.spellings); None, and left out of the JSON, where there were none
    merged_spellings: dict[str, str] | None = None
    # from run.json (results.served), each left out of the JSON where the runs say nothing of it:
    # the concurrency each model ran at; the models whose server the preflight found not
    # deterministic at temperature 0; the shards of a sharded grid (planned, missing, cells_missing)
    concurrency: dict[str, str] | None = None
    nondeterministic: list[str] | None = None
    shards: dict[str, Any] | None = None
    # under BFCL's protocol, the episodes whose success is BFCL's verdict on a force-quit in the last
    # turn, won, where the harness's own rule (a force-quit is lost) would lose them; None (and left out
    # of the JSON): no run of that protocol
    force_quits_won: int | None = None


class References(BaseModel):
    primary: str
    planned_contrasts: list[str]
    budget_lane: str
    sampling_lane: str
    self_reflective: str


class Report(BaseModel):
    schema_: str = Field(SCHEMA, alias="schema")
    meta: Meta
    cells: list[CellRow]
    contrasts: list[ContrastRow]
    unpaired: list[Row]
    failures: list[FailureRow]
    headline: list[HeadlineRow]
    references: References
    gaps: list[GapRow] = Field(default_factory=list)
    dynamics: list[DynamicsRow] = Field(default_factory=list)
    # only when asked (`report --factors`): a report without them reads as it always did
    factors: Factors | None = None
    # only for fork records (harness.fork): a report of runs reads as it always did
    forks: list[ForkRow] = Field(default_factory=list)
    # only for imports (results.imports): a report of runs reads as it always did
    imports: list[ImportRow] = Field(default_factory=list)

    model_config = ConfigDict(populate_by_name=True)

    def to_json(self) -> str:
        """The documented `json` format: keys sorted, floats as rounded by the builder."""
        left_out: dict[str, Any] = {"factors": True} if self.factors is None else {}
        if not self.forks:
            left_out["forks"] = True
        if not self.imports:
            left_out["imports"] = True
        m = self.meta
        optional: dict[str, object] = {"merged_spellings": m.merged_spellings, "concurrency": m.concurrency}
        optional |= {"nondeterministic": m.nondeterministic, "shards": m.shards, "force_quits_won": m.force_quits_won}
        unset = {k for k, v in optional.items() if v is None}
        if unset:
            left_out["meta"] = unset
        dumped = self.model_dump(by_alias=True, exclude=left_out or None)
        return json.dumps(dumped, sort_keys=True, indent=2)

    def section(self, name: str) -> list[dict[str, Any]]:
        return [r.model_dump() for r in getattr(self, name)]
