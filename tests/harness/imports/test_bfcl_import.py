"""`import bfcl`: real BFCL result lines (tests/data/bfcl_results, sources in its README) become
one record per entry, replayed on BFCL's backends; every variant of the format is handled."""

from __future__ import annotations

import ast
import collections
import json
import shutil
from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke
from tests.registries import no_plugin_left  # noqa: F401  (autouse: each test's plugins are gone after it)

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
GPT = "openai_gpt-oss-20b--bfcl-base"


def _records(run: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("imp")
    result, text = invoke("import", "bfcl", DATA, "--out", out)
    assert result.exit_code == 0, text
    return out, text


@pytest.mark.extra("bfcl")
def test_one_record_per_entry_of_each_model_and_category(imported):
    out, text = imported
    runs = sorted(p.name for p in out.iterdir())
    assert runs == [
        "Qwen_Qwen3-8B--bfcl-long-context",
        "Salesforce_Llama-xLAM-2-8b-fc-r--bfcl-base",
        "deepseek-ai_DeepSeek-V3-0324--bfcl-miss-func",
        "gpt-4o-2024-08-06-FC--bfcl-base",
        "handwritten--bfcl-base",
        "handwritten-anthropic--bfcl-base",
        "meta-llama_Llama-3.1-8B-Instruct-FC--bfcl-miss-param",
        GPT,  # the model is the folder above `multi_turn/`
    ]
    assert sorted(_records(out / GPT)) == ["base_11", "base_17", "base_22", "base_30", "base_42"]
    # named and counted, never replayed on another task
    assert "1 entries skipped: unknown to bfcl-eval 2026.3.23 (multi_turn_base_9999" in text
    assert "1 entries skipped: asked other questions than bfcl-eval" in text and "multi_turn_base_182" in text
    # and what would have replayed it: the release the file was made with
    assert "`--bfcl-version auto` replays each file on the release that reproduces its log" in text
    assert "base_182" not in _records(out / "Salesforce_Llama-xLAM-2-8b-fc-r--bfcl-base")


@pytest.mark.extra("bfcl")
def test_records_carry_the_model_the_condition_and_bfcls_budget(imported):
    out, _ = imported
    r = _records(out / GPT)["base_11"]
    assert (r["model"], r["condition"], r["suite"], r["budget"]) == (
        "openai_gpt-oss-20b",
        "bfcl-native",
        "bfcl-base",
        168,
    )
    assert r["model_id"] == "openai_gpt-oss-20b"
    assert r["prompt_tokens"] > 0 and r["usage_missing"] == 0  # the file's own counts


@pytest.mark.extra("bfcl")
def test_run_json_names_each_source_file_with_its_sha256_and_bfcl_eval(imported):
    out, _ = imported
    meta = json.loads((out / GPT / "run.json").read_text())
    source = meta["sessions"][0]["imported"]
    path = DATA / "openai_gpt-oss-20b" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    import hashlib

    assert source["files"] == [
        {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "entries": 5, "bfcl_version": "v4"}
    ]
    assert source["bfcl_eval"] == "2026.3.23" and source["scores"]["path"].endswith("_score.json")


@pytest.mark.extra("bfcl")
def test_each_variant_of_the_format(imported):
    out, _ = imported
    gpt, hand = _records(out / GPT), _records(out / "handwritten--bfcl-base")
    # a server failure inside BFCL's own run: a harness error, never scored
    assert gpt["base_22"]["success"] is None and "BFCL's own inference failed" in gpt["base_22"]["harness_error"]
    # the force-quit after 20 steps: the protocol's own limit, played by the loop; the entry is lost
    quit_ = gpt["base_30"]
    assert (quit_["success"], quit_["end_reason"], quit_["model_calls"]) == (False, "lost", 21)
    assert quit_["extra"]["force_quit"] is True
    # names BFCL decoded as they came: stray tokens, arguments that are not Python: rejected, kept
    tools = [t for r in gpt.values() for c in r["calls"] for t in c["tools"]]
    assert "view_messages_sent(='')" in tools and "cat<|channel|>" in tools
    assert "unknown_tool" in gpt["base_17"]["failure_codes"]
    # Python call text, a bare {"name", "arguments"} dict, empty answers: played as BFCL played them
    assert hand["base_100"]["success"] is True and hand["base_139"]["success"] is True
    # null token counts stay unknown, never 0
    assert hand["base_100"]["prompt_tokens"] is None and hand["base_100"]["usage_missing"] == 2
    # an argument that is not a literal is never evaluated: BFCL's prompting decoder keeps a call
    # without keywords as its text, and so does the import; the turns that close on no text get
    # their closing answer back
    odd = json.loads((out / "handwritten--bfcl-base" / hand["base_11"]["transcript"]).read_text())
    assert odd["turns"][0]["answer"]["tool_calls"][0]["arguments"] == {"a": "__import__('os').getcwd()"}
    assert hand["base_11"]["success"] is False and hand["base_11"]["extra"]["imported"]["closing_steps"] == 2
    assert hand["base_11"]["extra"]["replay"]["faithful"] is None  # no log: unverified


@pytest.mark.extra("bfcl")
def test_replayed_calls_get_the_text_bfcl_gave_and_its_checker_agrees_with_the_published_verdicts(imported):
    out, _ = imported
    for r in _records(out / GPT).values():
        if r["success"] is None:
            continue
        replay = r["extra"]["replay"]
        assert replay["calls"] == replay["same_text"] > 0
        assert r["success"] is r["extra"]["imported"]["published_valid"], r["task_id"]


def _function(call: str) -> str:
    """The function a decoded call string names: the text before "(", unless its arguments are
    not Python (`pwd(='')`: nothing BFCL could run as that function): then the whole text."""
    head, _, rest = call.partition("(")
    try:
        ast.parse("f(" + rest, mode="eval")
    except SyntaxError:
        return call.strip()
    return head.strip()


def _independent_counts(file: Path, keep: set[str]) -> collections.Counter:
    """From the raw file alone: each step whose executed calls returned an error, and what the
    next step of the same turn did (its decoded calls)."""
    counts: collections.Counter = collections.Counter()
    for line in file.read_text().splitlines():
        e = json.loads(line)
        if e["id"].removeprefix("multi_turn_") not in keep:
            continue
        for turn in (t for t in e["inference_log"] if isinstance(t, dict)):
            steps = [turn[k] for k in sorted((k for k in turn if k.startswith("step_")), key=lambda k: int(k[5:]))]
            decoded = [
                next((m.get("model_response_decoded") or [] for m in s if m.get("role") == "handler_log"), [])
                for s in steps
            ]
            for i, step in enumerate(steps):
                said = [str(m["content"]) for m in step if m.get("role") == "tool"]
                if not any(s.startswith("Error during execution") or '"error"' in s[:12] for s in said):
                    continue
                counts["errors"] += 1
                this, then = decoded[i], decoded[i + 1] if i + 1 < len(steps) else None
                if then is None:
                    counts["ended"] += 1
                elif then == this:
                    counts["identical"] += 1
                elif not then:
                    counts["text"] += 1
                elif {_function(c) for c in then} & {_function(c) for c in this}:
                    counts["same_function"] += 1
                else:
                    counts["other_function"] += 1
    return counts


@pytest.mark.extra("bfcl")
def test_the_after_an_error_table_equals_a_count_made_from_the_raw_file(imported):
    out, _ = imported
    result, text = invoke("report", out / GPT, "--format", "json")
    assert result.exit_code == 0, text
    row = json.loads(result.stdout)["dynamics"][0]
    keep = {k for k, r in _records(out / GPT).items() if r["success"] is not None}
    raw = _independent_counts(DATA / "openai_gpt-oss-20b" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json", keep)
    ours = {k: v for k, v in row["after_error_counts"].items() if v}
    assert ours == {k: v for k, v in raw.items() if k != "errors"} and row["after_error_n"] == raw["errors"] > 0
    result, text = invoke("report", out / GPT)
    flat = " ".join(text.split())
    assert "After an error: what the next attempt did" in flat and "bfcl-native 6 0.0% 16.7% 83.3% 0.0% 0.0%" in flat


@pytest.mark.extra("bfcl")
def test_a_second_import_adds_nothing(imported, tmp_path):
    out, _ = imported
    copy = tmp_path / "again"
    shutil.copytree(out / GPT, copy / GPT)
    result, text = invoke("import", "bfcl", DATA / "openai_gpt-oss-20b", "--out", copy)
    assert result.exit_code == 0, text
    assert "0 records (none new); 5 already there" in text
    assert len((copy / GPT / "records.jsonl").read_text().splitlines()) == 5


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("notes.json", "{}", "not a BFCL multi-turn result file"),
        pytest.param(
            "BFCL_v4_multi_turn_base_result.json",
            "this is not json\n",
            "line 1 is not JSON",
            marks=pytest.mark.extra("bfcl"),
        ),
        pytest.param(
            "BFCL_v4_multi_turn_base_result.json",
            '{"name": "x"}\n',
            'has no "id" and "result"',
            marks=pytest.mark.extra("bfcl"),
        ),
    ],
)
def test_a_file_not_in_the_format_is_one_line_and_exit_2(tmp_path, name, content, says):
    f = tmp_path / "m" / name
    f.parent.mkdir()
    f.write_text(content)
    result, text = invoke("import", "bfcl", f, "--out", tmp_path / "out")
    assert result.exit_code == 2 and says in text and "Traceback" not in text
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("records.jsonl"))


def test_an_unknown_format_names_the_known_ones(tmp_path):
    result, text = invoke("import", "tau2", DATA, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "tau2" in text and "bfcl" in text


@pytest.mark.extra("bfcl")
def test_a_fork_of_imports_needs_a_repairing_model(imported, tmp_path):
    out, _ = imported
    result, text = invoke("fork", out / GPT, "--conditions", "raw", "--out", tmp_path / "fork")
    assert result.exit_code == 2 and "imported transcripts" in text and "--model" in text


@pytest.mark.extra("bfcl")
def test_the_reader_repairs_real_failures_only_when_shown_the_allowed_values(imported, tmp_path):
    out, _ = imported
    fork = tmp_path / "fork"
    result, text = invoke(
        "fork", out, "--model", "agent:reader", "--conditions", "raw,allowed_json", "--budget", "12", "--out", fork
    )
    assert result.exit_code == 0, text
    # the folder holds imports of three suites: one fork run each, but miss_func's only failure comes
    # after its replay diverged from what the model was shown (a v3 file on v4's backends): refused,
    # named, and the other suites fork
    assert sorted(p.name for p in fork.iterdir()) == ["bfcl-base", "bfcl-miss-param"]
    flat = " ".join(text.split())
    assert "skipped bfcl-miss-func: every fork point was refused" in flat
    assert "at or after the import's first divergence from what the model was shown" in flat
    rows = [json.loads(line) for d in fork.iterdir() for line in (d / "records.jsonl").read_text().splitlines()]
    by = collections.defaultdict(list)
    for r in rows:
        assert r["fork_segment"] is not None and r["segment_solved"] is not None
        by[r["condition"]].append(r["repaired_next"])
    assert not any(by["raw"]) and any(by["allowed_json"])
    result, text = invoke("report", fork / "bfcl-base", "--format", "json")
    forks = {f["condition"]: f for f in json.loads(result.stdout)["forks"]}
    assert forks["raw"]["part_solved"] == 0.0 and forks["allowed_json"]["part_solved"] is not None


def test_a_plugin_registers_an_importer_of_another_format(tmp_path):
    plugin = tmp_path / "other_format.py"
    plugin.write_text(
        "from harness.imports import IMPORTERS, Importer\n\n"
        "def batches(paths, out, model):\n"
        "    yield f'read {len(paths)} paths for {model}'\n\n"
        "IMPORTERS.register('other', Importer('other', 'a test format', batches))\n"
    )
    result, text = invoke("import", "other", DATA, "--out", tmp_path / "o", "--model", "m", "--plugin", plugin)
    assert result.exit_code == 0 and "read 1 paths for m" in text


@pytest.mark.extra("bfcl")
def test_show_tells_bfcls_feedback_from_the_environments_answers(imported):
    out, _ = imported
    result, text = invoke("show", out / GPT, "--task", "base_11")
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert "told the agent (bfcl-native, as tool)" in flat and "the environment answered (as tool)" in flat
    assert "cd: /temp: Unsupported path" in flat


@pytest.mark.extra("bfcl")
@pytest.mark.parametrize(
    "call", ["[power(base=9, exponent=999999999)]", [{"power": '{"base": 9, "exponent": 999999999}'}]]
)
def test_a_computation_that_never_returns_is_the_entrys_harness_error_and_the_rest_import(tmp_path, monkeypatch, call):
    """Issue 57: a model's literal `power(base=9, exponent=999999999)` was computed by BFCL's MathAPI
    for minutes, in C holding the GIL: the import hung. Now the call runs in the episode's sidecar
    process, killed at the limit: that entry is a harness error naming the call (never scored),
    and the file's other entries import as before."""
    monkeypatch.setenv("REPAIR_HARNESS_COMPUTE_LIMIT_S", "2")
    model = tmp_path / "m"
    model.mkdir()
    lines = [
        {"id": "multi_turn_base_31", "result": [[call, "done"], ["done"]]},
    ]
    normal = (DATA / "handwritten" / "BFCL_v4_multi_turn_base_result.json").read_text().splitlines()[0]  # base_100
    (model / "BFCL_v4_multi_turn_base_result.json").write_text("".join(json.dumps(x) + "\n" for x in lines) + normal)
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 0 and "Traceback" not in text, text
    rows = _records(tmp_path / "out" / "m--bfcl-base")
    hung = rows["base_31"]
    assert hung["success"] is None, hung
    assert "BFCL's backend call power(base=9, exponent=999999999) did not return within 2 s" in hung["harness_error"]
    assert len(rows) == 2 and rows["base_100"]["harness_error"] is None
