"""results.load: one row per episode, strict about what it cannot interpret."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import results
from results import RecordsError, load
from results.dynamics import episode_columns


def test_one_row_per_episode_with_every_field(paper_run: Path) -> None:
    df = load(paper_run)
    assert len(df) == 40
    assert df["run_dir"].unique().tolist() == [str(paper_run)]
    # flattened dicts, original dict columns gone
    assert df["condition_params.k_allowed"].eq(12).all()
    assert df["extra.protocol"].eq("plan").all()
    assert "extra" not in df and "condition_params" not in df
    for col in ("model_calls", "prompt_tokens", "failure_codes", "final_failure", "harness_error", "calls", "config"):
        assert col in df
    assert df.attrs["partial_lines"] == 0


def test_records_file_path_and_several_dirs(kit, tmp_path: Path, paper_run: Path) -> None:
    other = kit.write(tmp_path / "other", kit.paper_like(model="local", run_id="run-b"))
    df = load([paper_run / "records.jsonl", other])
    assert len(df) == 80
    assert set(df["run_dir"]) == {str(paper_run), str(other)}


def test_only_key_fields_and_success_are_needed(kit, tmp_path: Path) -> None:
    minimal = [
        {
            "suite": "s",
            "task_id": "t1",
            "model": "m",
            "condition": "raw",
            "budget": 4,
            "sample_seed": 0,
            "success": True,
        }
    ]
    df = load(kit.write(tmp_path / "min", minimal))
    assert df.loc[0, "success"] is True
    assert results.summary(df).loc[0, "solved"] == 1


def test_trailing_partial_line_is_ignored(kit, tmp_path: Path) -> None:
    recs = kit.paper_like()[:3]
    run = kit.write(tmp_path / "killed", recs, tail='{"suite": "paper-textworld", "task_id": "g')
    df = load(run)
    assert len(df) == 3
    assert df.attrs["partial_lines"] == 1


def test_broken_line_in_the_middle_is_an_error(kit, tmp_path: Path) -> None:
    run = kit.write(tmp_path / "bad", kit.paper_like()[:2])
    text = (run / "records.jsonl").read_text()
    (run / "records.jsonl").write_text("{not json\n" + text)
    with pytest.raises(RecordsError, match=r"records.jsonl:1: not a JSON record"):
        load(run)


def test_no_records(kit, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordsError, match="no records.jsonl"):
        load(tmp_path / "empty")
    kit.write(tmp_path / "zero", [])
    with pytest.raises(RecordsError, match="no records"):
        load(tmp_path / "zero")
    with pytest.raises(RecordsError, match="no such run directory"):
        load(tmp_path / "missing")


def test_mixed_run_ids_in_one_dir(kit, tmp_path: Path) -> None:
    recs = kit.paper_like()[:2] + [kit.make(5, "raw", True, run_id="run-z")]
    with pytest.raises(RecordsError, match="several runs mixed"):
        load(kit.write(tmp_path / "mixed", recs))


def test_records_outside_the_spec_of_run_json(kit, tmp_path: Path) -> None:
    recs = kit.paper_like()[:2]
    run = kit.write(tmp_path / "spec", recs, run_json={"run_id": "run-a", "spec": {"conditions": ["loc_obs"]}})
    with pytest.raises(RecordsError, match="condition raw not in the run's spec"):
        load(run)
    run = kit.write(tmp_path / "other-id", recs, run_json={"run_id": "run-q"})
    with pytest.raises(RecordsError, match="run.json to run run-q"):
        load(run)


def test_same_episode_twice(kit, tmp_path: Path, paper_run: Path) -> None:
    rec = kit.make(1, "raw", True)
    with pytest.raises(RecordsError, match="recorded twice"):
        load(kit.write(tmp_path / "dup", [rec, rec]))
    # a harness error retried on resume is not a duplicate
    df = load(kit.write(tmp_path / "retried", [kit.make(1, "raw", None), rec]))
    assert len(df) == 2
    # the same episode in two loaded runs would make pairing ambiguous
    again = kit.write(tmp_path / "again", kit.paper_like()[:1])
    with pytest.raises(RecordsError, match="recorded in both"):
        load([paper_run, again])
    # unless they are read as repeats (`power`): each run's seeds become seeds of their own
    df = load([paper_run, again], repeats=True)
    assert df.attrs["repeats"] == 2
    assert set(df.loc[df["run_dir"] == str(again), "sample_seed"]) == {"r2:0"}
    assert load([paper_run], repeats=True).attrs["repeats"] == 1


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("budget", "4", "budget must be an integer"),
        ("success", "yes", "success must be true, false or null"),
        ("task_id", "", "task_id must be a non-empty string"),
    ],
)
def test_wrong_key_types(kit, tmp_path: Path, field: str, value: object, message: str) -> None:
    rec = kit.make(1, "raw", True)
    rec[field] = value
    with pytest.raises(RecordsError, match=message):
        load(kit.write(tmp_path / field, [rec]))


def test_missing_key_field(kit, tmp_path: Path) -> None:
    rec = kit.make(1, "raw", True)
    del rec["sample_seed"]
    with pytest.raises(RecordsError, match="lacks the key field.*sample_seed"):
        load(kit.write(tmp_path / "nokey", [rec]))


def test_harness_error_rows_are_kept(kit, tmp_path: Path) -> None:
    df = load(kit.write(tmp_path / "err", [kit.make(1, "raw", None), kit.make(2, "raw", False)]))
    assert df["success"].tolist() == [None, False]
    assert df.loc[0, "harness_error"] == "HTTP 500 after 4 retries"


def test_results_imports_nothing_from_harness() -> None:
    pkg = Path(results.__file__).parent
    for file in pkg.glob("*.py"):
        tree = ast.parse(file.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            assert not any(n == "harness" or n.startswith("harness.") for n in names), file


def test_export_round_trip(kit, tmp_path: Path, paper_run: Path) -> None:
    import pandas as pd

    df = load([paper_run, kit.write(tmp_path / "e", [kit.make(1, "raw", None, model="local", run_id="e")])])
    path = results.to_parquet(df, tmp_path / "out" / "frame.parquet")
    back = pd.read_parquet(path)
    assert len(back) == len(df) == 41
    assert back["success"].isna().sum() == 1
    assert back["failure_codes"].map(list).tolist() == df["failure_codes"].tolist()
    config = back.loc[0, "config"]
    assert isinstance(config, str) and json.loads(config) == df.loc[0, "config"]


def _flattened(rec: dict, run_dir: str) -> dict:
    """One row as a frame built from one dict per record would hold it (the loader's contract)."""
    row = {k: v for k, v in rec.items() if k not in ("extra", "condition_params")}
    row.update(episode_columns(rec))  # the repair path's columns, derived as each record is read
    for name in ("extra", "condition_params"):
        for k, v in (rec.get(name) or {}).items():
            row[f"{name}.{k}"] = v
    row["run_dir"] = run_dir
    return row


def test_records_of_different_layouts_give_the_frame_of_one_dict_per_row(kit, tmp_path: Path) -> None:
    import pandas as pd

    recs = kit.paper_like()[:3]
    recs[1]["extra"] = {"protocol": "plan", "only_here": [1, 2]}  # a nested field only one record has
    del recs[2]["model_calls"]  # absent here, present elsewhere
    recs.append(
        {
            "suite": "paper-textworld",
            "task_id": "g9",
            "model": kit.QWEN,
            "condition": "raw",
            "budget": 4,
            "sample_seed": 0,
            "success": None,
            "run_id": "run-a",
            "late": "x",
        }
    )
    recs.append({**recs[0], "task_id": "g8"})  # the first layout again after others
    run = kit.write(tmp_path / "layouts", recs)
    df = load(run)
    # a record without `constrain` (older than the axis) reads as unconstrained
    # ... and one without a fork point (played from its start) has fork ""
    expected = pd.DataFrame(
        [_flattened({**r, "constrain": r.get("constrain", "none"), "fork": ""}, str(run)) for r in recs]
    )
    expected["success"] = expected["success"].astype(object)
    pd.testing.assert_frame_equal(df, expected)
    assert df.loc[1, "extra.only_here"] == [1, 2] and df.loc[0, "calls"] == recs[0]["calls"]


def test_nested_values_are_equal_and_independent(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", True, calls=2) for t in range(3)]
    for r in recs:
        r["calls"] = [{"kind": "action", "outcome": "won", "parse_modes": ["json"]}] * 2
    df = load(kit.write(tmp_path / "nested", recs))
    assert df["calls"].tolist() == [r["calls"] for r in recs]
    assert df["config"].tolist() == [r["config"] for r in recs]
    # an object column: pandas types a cell as a scalar, here it is a record's list of dicts
    first: Any = df.loc[0, "calls"]
    first[0]["outcome"] = "changed"  # the dicts are copies, one per record
    second: Any = df.loc[1, "calls"]
    assert second[0]["outcome"] == "won"
    # a field that is a dict or list in the first record and null or text in a later one
    recs[1]["config"], recs[2]["calls"] = None, "not a list"
    df = load(kit.write(tmp_path / "mixed-types", recs))
    assert df["config"].tolist() == [recs[0]["config"], None, recs[2]["config"]]
    assert df.loc[2, "calls"] == "not a list"


def test_loading_leaves_the_collector_as_it_was(kit, tmp_path: Path, paper_run: Path) -> None:
    import gc

    load(paper_run)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        load(paper_run)
        assert not gc.isenabled()
    finally:
        gc.enable()
    bad = kit.write(tmp_path / "bad", kit.paper_like()[:2])
    (bad / "records.jsonl").write_text((bad / "records.jsonl").read_text() + "{broken\n")
    with pytest.raises(RecordsError):
        load(bad)
    assert gc.isenabled()


def test_loading_some_columns_gives_those_columns_of_the_full_frame(kit, tmp_path: Path) -> None:
    import pandas as pd

    recs = kit.paper_like()[:3]
    recs[1]["extra"] = {"protocol": "plan", "only_here": [1, 2]}
    del recs[2]["model_calls"]
    recs.append(
        {
            "suite": "paper-textworld",
            "task_id": "g9",
            "model": kit.QWEN,
            "condition": "raw",
            "budget": 4,
            "sample_seed": 0,
            "success": None,
            "run_id": "run-a",
            "late": "x",
        }
    )
    # the same fields in another order, and the first layout again after the others
    recs.append(dict(reversed(list({**recs[0], "task_id": "g7"}.items()))))
    recs.append({**recs[0], "task_id": "g8"})
    run = kit.write(tmp_path / "layouts", recs)
    full = load(run)
    for columns in (
        ["model_calls", "extra.only_here", "late", "condition_params.k_allowed"],
        ["extra.protocol"],
        ["nowhere"],
        [],
    ):
        some = load(run, columns=columns)
        kept = [
            c
            for c in full.columns
            if c
            in {
                *columns,
                "suite",
                "task_id",
                "model",
                "condition",
                "budget",
                "sample_seed",
                "constrain",
                "fork",
                "success",
                "run_dir",
            }
        ]
        assert list(some.columns) == kept
        pd.testing.assert_frame_equal(some, full[kept])
        assert some.attrs["fields"] == tuple(full.columns)
        assert some.attrs["partial_lines"] == full.attrs["partial_lines"]
    assert "fields" not in full.attrs


def test_loading_some_columns_still_checks_every_record(kit, tmp_path: Path) -> None:
    recs = kit.paper_like()[:2] + [kit.make(5, "raw", True, run_id="run-z")]
    with pytest.raises(RecordsError, match="several runs mixed"):
        load(kit.write(tmp_path / "mixed", recs), columns=["success"])
    recs = kit.paper_like()[:2]
    recs[1]["budget"] = "4"
    with pytest.raises(RecordsError, match=r"records.jsonl:2: budget must be an integer"):
        load(kit.write(tmp_path / "types", recs), columns=["model_calls"])


def test_the_lazy_package_gives_the_functions_though_submodules_share_their_names() -> None:
    """results/__init__ imports on first use; importing the submodule results.load (or
    results.contrasts) must not turn `results.load` into that module."""
    import subprocess
    import sys

    code = (
        "import sys, results, results.rundir; light = 'pandas' not in sys.modules; "
        "import results.load, results.contrasts; from results import load, contrasts; "
        "print(light, callable(results.load), callable(results.contrasts), load is sys.modules['results.load'].load)"
    )
    root = Path(results.__file__).parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert out.stdout.split() == ["True", "True", "True", "True"], out.stderr


def test_a_damaged_byte_in_the_records_is_named_by_run_report_and_export_alike(tmp_path: Path) -> None:
    """One byte that is no UTF-8 (a failing disk) must not be read as U+FFFD and so as another
    episode's key: every reader names the line and changes nothing (issue 49)."""
    from tests.harness.cli.invoke import invoke

    out = tmp_path / "r"
    run = ("run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--tasks", "3")
    assert invoke(*run, "--out", out)[0].exit_code == 0
    records = out / "records.jsonl"
    data = records.read_bytes()
    at = data.index(b'"task_id"', data.index(b"\n") + 1) + 11
    records.write_bytes(data[:at] + b"\xff" + data[at:])
    damaged = records.read_bytes()
    for args in (run + ("--out", out), ("report", out), ("export", out, "--parquet", tmp_path / "x.parquet")):
        result, text = invoke(*args)
        assert result.exit_code == 2 and "line 2 of the records is not UTF-8" in " ".join(text.split()), text
    assert records.read_bytes() == damaged and not (tmp_path / "x.parquet").exists()


def test_two_damaged_run_jsons_are_each_named_by_report_plot_and_export(kit, tmp_path: Path) -> None:
    """One run.json that is no JSON and another whose spec is a list: each command names both, one
    line each, exit 2, where it named the first only and the second waited for the next try (issue 57)."""
    from tests.harness.cli.invoke import invoke

    spec = {"suite": "paper-textworld", "models": [kit.QWEN], "conditions": list(kit.QWEN_SOLVED)}
    runs = tmp_path / "runs"
    bad_json = kit.write(runs / "a", kit.paper_like(run_id="a"), run_json={"run_id": "a", "spec": spec})
    bad_spec = kit.write(runs / "b", kit.paper_like(run_id="b"), run_json={"run_id": "b", "spec": [1, 2]})
    kit.write(runs / "c", kit.paper_like(run_id="c"), run_json={"run_id": "c", "spec": spec})  # whole: not named
    (bad_json / "run.json").write_text("{not json")
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    for args in (
        ("report", runs),
        ("report", bad_spec, bad_json),
        ("plot", runs, "--out", tmp_path / "figs"),
        ("export", runs, "--parquet", tmp_path / "x.parquet"),
    ):
        result, text = invoke(*args)
        lines = text.strip().splitlines()
        assert result.exit_code == 2 and "Traceback" not in text, text
        assert len(lines) == 2, text
        assert {line.removeprefix("error: ").split(": ", 1)[0] for line in lines} == {
            str(bad_json / "run.json"),
            str(bad_spec / "run.json"),
        }, text
        assert "not valid JSON" in text and "spec: Input should be a valid dictionary" in text
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "figs").exists() and not (tmp_path / "x.parquet").exists()
    with pytest.raises(RecordsError, match="not valid JSON") as raised:  # the library's load says the same
        load([bad_json, bad_spec])
    assert str(bad_spec / "run.json") in str(raised.value)


def test_a_run_directory_whose_name_is_no_utf8_is_one_line(tmp_path: Path, paper_run: Path) -> None:
    """Issue 57: a run directory named with a byte that is no UTF-8 (0x9b) made `report` fail with
    pyarrow's UnicodeEncodeError traceback; now one line naming it, exit 2, for report, plot, export."""
    folder = tmp_path / "runs"
    folder.mkdir()
    run = Path(os.fsdecode(os.fsencode(folder) + b"/a\x9bb"))
    shutil.copytree(paper_run, run)
    said = f"{folder}/a\\x9bb: its name is not UTF-8 (byte 0x9b)"
    with pytest.raises(RecordsError) as caught:
        load([run])
    assert said in str(caught.value)
    for args in (("report",), ("plot", "--out", tmp_path / "p"), ("export", "--parquet", tmp_path / "x.parquet")):
        cmd = [sys.executable, "-m", "harness.cli", args[0], str(folder), *map(str, args[1:])]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
        flat = " ".join(done.stderr.split())
        assert done.returncode == 2 and said in flat and "Traceback" not in flat, (args, done.stderr)
