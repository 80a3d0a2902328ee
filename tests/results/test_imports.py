"""The report's imports section (results/imports.py): per model and suite of an import, the
entries of its files, what became of each, how faithful each replay was, and the agreement of
BFCL's checker here with the published score file; an import whose entries were all skipped is
reported from its run.json alone. Records and run.json are written here, small and by hand."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from harness import cli
from results import imports, load, render_report
from results.load import no_records
from results.report import build_report, report_columns

SUITE, CONDITION, BUDGET = "bfcl-base", "bfcl-native", 168


def _provenance(entries: int, skipped: dict[str, list[str]], scores: bool) -> dict[str, Any]:
    return {
        "format": "bfcl",
        "files": [
            {
                "path": "BFCL_v4_multi_turn_base_result.json",
                "sha256": "0" * 64,
                "entries": entries,
                "bfcl_version": "v4",
            }
        ],
        "scores": {"path": "BFCL_v4_multi_turn_base_score.json", "sha256": "1" * 64} if scores else None,
        "bfcl_eval": "2026.3.23",
        "skipped": {cause: len(ids) for cause, ids in skipped.items()},
        "skipped_ids": skipped,
    }


def _run_json(model: str, provenance: dict[str, Any]) -> dict[str, Any]:
    spec = {"suite": SUITE, "models": [model], "conditions": [CONDITION], "budgets": [BUDGET], "tasks": None}
    return {"run_id": f"run-{model}", "spec": spec, "sessions": [{"imported": provenance}]}


def _record(kit: SimpleNamespace, model: str, task: str, success: bool | None, **extra: Any) -> dict[str, Any]:
    return kit.make(
        task, CONDITION, success, model=model, suite=SUITE, budget=BUDGET, run_id=f"run-{model}", extra=extra
    )


def _mixed(kit: SimpleNamespace, folder: Path) -> Path:
    """Eight entries: two skipped, one a harness error, five replayed, each replay's fidelity and
    verdict chosen so that every count below is its own."""
    m = "mixed"
    published = {"file": "f", "bfcl_version": "v4", "line": 1}
    records = [
        _record(kit, m, "base_1", True, imported={**published, "published_valid": True}, replay={"faithful": True}),
        _record(
            kit,
            m,
            "base_2",
            False,
            imported={**published, "published_valid": True},
            replay={"faithful": False, "divergence": {"call": 2, "here": "a", "there": "b", "cause": "other state"}},
        ),
        _record(kit, m, "base_3", False, imported={**published, "published_valid": False}, replay={"faithful": None}),
        # an import older than the fidelity fields: unknown, never faithful
        _record(kit, m, "base_4", True, imported={**published, "published_valid": False}, replay={"calls": 3}),
        _record(kit, m, "base_5", True, imported=published, replay={"faithful": True, "calls": 4}),
        _record(kit, m, "base_6", None, imported={**published, "published_valid": False}),
    ]
    skipped = {"unknown to the installed bfcl-eval": ["multi_turn_base_98", "multi_turn_base_99"]}
    return kit.write(folder / f"{m}--{SUITE}", records, _run_json(m, _provenance(8, skipped, scores=True)))


def _all_skipped(folder: Path) -> Path:
    """An import whose every entry was skipped: run.json alone, no records.jsonl."""
    run = folder / f"skipped--{SUITE}"
    run.mkdir(parents=True)
    skipped = {"asked other questions than bfcl-eval 2026.3.23's entry": ["multi_turn_base_7", "multi_turn_base_8"]}
    (run / "run.json").write_text(json.dumps(_run_json("skipped", _provenance(3, skipped, scores=False))))
    return run


def _all_errors(kit: SimpleNamespace, folder: Path) -> Path:
    records = [_record(kit, "errors", f"base_{i}", None, imported={"file": "f", "line": i}) for i in (1, 2)]
    return kit.write(folder / f"errors--{SUITE}", records, _run_json("errors", _provenance(2, {}, scores=False)))


def _section(dirs: list[Path]) -> dict[str, dict[str, Any]]:
    found = imports.found(dirs)
    runs = imports.loadable(dirs, found)
    df = load(runs, columns=report_columns()) if runs else no_records(report_columns())
    return {r.model: r.model_dump() for r in build_report(df, imported=found).imports}


def test_each_entry_is_counted_once_and_each_replay_by_its_fidelity_and_verdict(kit, tmp_path: Path) -> None:
    row = _section([_mixed(kit, tmp_path)])["mixed"]
    assert (row["entries"], row["replayed"], row["skipped"], row["harness_errors"]) == (8, 5, 2, 1)
    assert row["skipped_by_cause"] == {"unknown to the installed bfcl-eval": 2}
    assert (row["faithful"], row["diverged"], row["unverified"], row["fidelity_unknown"]) == (2, 1, 1, 1)
    assert row["divergences"] == [{"task_id": "base_2", "call": 2, "cause": "other state"}]
    # base_5 has no published verdict and base_6 no verdict here: four entries both judged
    assert (row["verdicts"], row["agree"], row["disagree_ids"]) == (4, 2, ["base_2", "base_4"])
    assert (row["bfcl_eval"], row["calls"]) == ("2026.3.23", 7)


def test_an_import_of_no_record_and_one_of_harness_errors_only_are_reported(kit, tmp_path: Path) -> None:
    _mixed(kit, tmp_path)
    _all_skipped(tmp_path)
    _all_errors(kit, tmp_path)
    assert [p.name for p in imports.loadable([tmp_path], imports.found([tmp_path]))] == [
        f"errors--{SUITE}",
        f"mixed--{SUITE}",
    ]
    rows = _section([tmp_path])
    assert sorted(rows) == ["errors", "mixed", "skipped"]
    skipped = rows["skipped"]
    assert (skipped["entries"], skipped["replayed"], skipped["skipped"], skipped["harness_errors"]) == (3, 0, 2, 0)
    assert skipped["verdicts"] is None  # no score file came: no agreement to count
    errors = rows["errors"]
    assert (errors["replayed"], errors["harness_errors"], errors["faithful"] + errors["fidelity_unknown"]) == (0, 2, 0)
    # run.json alone, named directly
    alone = _section([tmp_path / f"skipped--{SUITE}"])
    assert alone["skipped"]["skipped_ids"] == {
        "asked other questions than bfcl-eval 2026.3.23's entry": ["multi_turn_base_7", "multi_turn_base_8"]
    }


def test_the_section_at_80_columns_keeps_every_count_and_names_the_ids(kit, tmp_path: Path) -> None:
    run = _mixed(kit, tmp_path)
    found = imports.found([run])
    text = render_report(load(run, columns=report_columns()), width=80, imported=found)
    assert max(len(line) for line in text.splitlines()) <= 80
    section = text[text.index("Imported transcripts") : text.index("Solved per condition")]
    assert "left out at 80" not in section
    row = next(line for line in section.splitlines() if line.startswith(SUITE)).split()
    # suite, entries, replayed, skipped, harness errors, faithful / diverged / unverified, agrees
    assert row == [SUITE, "8", "5", "2", "1", "2/1/1,", "1", "unknown", "2/4"]
    flat = " ".join(section.split())
    assert "diverged from the log: base_2 (call 2: other state)" in flat
    assert "differs from the published score: base_2, base_4" in flat
    assert "skipped 2, unknown to the installed bfcl-eval: multi_turn_base_98, multi_turn_base_99" in flat
    assert "replayed on bfcl-eval 2026.3.23 (files: v4)" in flat
    md = render_report(load(run, columns=report_columns()), fmt="md", imported=found)
    assert "| mixed | bfcl-base | 8 | 5 | 2 | 1 | 2/1/1, 1 unknown | 2/4 |" in md


def test_runs_that_are_not_imports_have_no_section(kit, paper_run: Path) -> None:
    assert imports.found([paper_run]) == []
    report = json.loads(render_report(load(paper_run), fmt="json", imported=imports.found([paper_run])))
    assert "imports" not in report
    assert "Imported transcripts" not in render_report(load(paper_run), width=80)


def _cli(*args: str | Path):
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "80"})


def test_the_report_command_shows_an_import_of_no_record(kit, tmp_path: Path) -> None:
    run = _all_skipped(tmp_path)
    for target in (tmp_path, run):  # the folder, and the run directory itself
        res = _cli("report", target)
        assert res.exit_code == 0, res.output
        row = next(line for line in res.stdout.splitlines() if line.startswith(SUITE)).split()
        assert row[:5] == [SUITE, "3", "0", "2", "0"], res.stdout
        assert "episodes: 0" in res.stdout and "paper:" not in res.stdout
        assert "Planned grid cells" not in res.stdout  # an import plans no grid
    res = _cli("report", tmp_path, "--format", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["imports"]
    assert (row["model"], row["skipped"], row["run_dirs"]) == ("skipped", 2, [str(run)])


def test_a_run_directory_of_no_record_that_is_not_an_import_is_still_refused(kit, tmp_path: Path) -> None:
    run = tmp_path / "started"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"run_id": "r", "spec": {"suite": SUITE, "models": ["m"]}}))
    res = _cli("report", run)
    assert res.exit_code == 2 and "no records.jsonl" in res.output


@pytest.mark.extra("bfcl")
def test_the_import_of_the_fixtures_at_a_glance(tmp_path: Path) -> None:
    data = Path(__file__).parents[1] / "data" / "bfcl_results"
    res = _cli("import", "bfcl", data, "--out", tmp_path)
    assert res.exit_code == 0, res.output
    res = _cli("report", tmp_path, "--format", "json")
    assert res.exit_code == 0, res.output
    rows = {r["model"]: r for r in json.loads(res.stdout)["imports"]}
    assert len(rows) == 8
    for r in rows.values():  # each replayed entry has one fidelity
        assert r["faithful"] + r["diverged"] + r["unverified"] + r["fidelity_unknown"] == r["replayed"]
    gpt = rows["openai_gpt-oss-20b"]
    # base_22: BFCL's own inference failed; the four others agree with the published score file
    assert (gpt["entries"], gpt["replayed"], gpt["skipped"], gpt["harness_errors"]) == (5, 4, 0, 1)
    assert (gpt["verdicts"], gpt["agree"], gpt["disagree_ids"]) == (4, 4, [])
    xlam = rows["Salesforce_Llama-xLAM-2-8b-fc-r"]
    assert (xlam["replayed"], xlam["skipped"], xlam["verdicts"]) == (2, 1, None)
    assert list(xlam["skipped_ids"].values()) == [["multi_turn_base_182"]]
    hand = rows["handwritten"]
    assert (hand["replayed"], hand["skipped"], hand["harness_errors"]) == (3, 1, 0)
    # the log as the reference: every call as logged, a v3 file departing on v4's backends, no log
    assert (gpt["faithful"], gpt["diverged"], gpt["unverified"]) == (4, 0, 0)
    assert (rows["Qwen_Qwen3-8B"]["faithful"], rows["Qwen_Qwen3-8B"]["diverged"]) == (1, 1)
    assert (rows["gpt-4o-2024-08-06-FC"]["unverified"], hand["unverified"]) == (2, 3)
    text = _cli("report", tmp_path).stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Imported transcripts" in text and "multi_turn_base_9999" in text
