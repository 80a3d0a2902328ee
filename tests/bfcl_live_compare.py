"""`python tests/bfcl_live_compare.py`: BFCL's own runner and `run --env protocol=bfcl`
against one server, request for request.

Each phase starts a server of its own (tests/bfcl_replay_server.py) that plays a model on a
few entries: a real model's published logged run (its answers replayed from the result file) or
the synthetic model (tests/bfcl_synthetic.py, one variant per difference the live protocol
had with BFCL's runner). BFCL's command line (`bfcl generate`, then `bfcl evaluate`, of the
installed bfcl-eval, run by tests/bfcl_runner.py on `OpenAICompletionsHandler`, FC or
prompting) plays them, then `repair-harness run --env protocol=bfcl --conditions bfcl-native`.
The server keeps every chat request; per entry the two sequences are compared whole (every key
of every body: messages, tools, sampling), and so are the calls executed (BFCL's inference log
against the record's), the force-quits and the verdicts (BFCL's score file against the record's
success). The preflight's requests carry their own header and are counted apart.

Prints one line per phase and the totals; exits 1 when anything differs. On 2 cores: ~2 minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.bfcl import data  # noqa: E402
from envs.bfcl.decode import call_text  # noqa: E402
from envs.contract import ToolCall  # noqa: E402
from tests import bfcl_synthetic as synthetic  # noqa: E402
from tests.bfcl_replay_server import ReplayServer, from_result  # noqa: E402
from tests.bfcl_runner import command, environment  # noqa: E402

DATA = ROOT / "tests" / "data" / "bfcl_results"
# real models' published runs with an inference log (tests/data/bfcl_results/README.md says whence)
REAL = [
    ("fc", "base", DATA / "openai_gpt-oss-20b" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"),
    ("prompt", "long_context", DATA / "Qwen_Qwen3-8B" / "BFCL_v3_multi_turn_long_context_result.json"),
]
SYNTHETIC_ENTRIES = {
    "base": ["multi_turn_base_4", "multi_turn_base_7", "multi_turn_base_28"],
    "miss_func": ["multi_turn_miss_func_4"],
}


def _first(entry: dict[str, Any]) -> str:
    return str(next(m["content"] for m in entry["question"][0] if m["role"] == "user"))


def bfcl(server: ReplayServer, form: str, category: str, ids: list[str], work: Path) -> tuple[dict, dict]:
    """BFCL's generate and evaluate: its result lines and its verdicts, by entry id."""
    model = server.model + ("-FC" if form == "fc" else "")
    (work / "test_case_ids_to_generate.json").write_text(json.dumps({f"multi_turn_{category}": ids}))
    env = environment(work, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="none")
    runner = command(served=server.model)
    for args in (
        ["generate", "--model", model, "--run-ids", "--num-threads", "1"],
        ["evaluate", "--model", model, "--test-category", f"multi_turn_{category}", "--partial-eval"],
    ):
        done = subprocess.run([*runner, *args], env=env, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"bfcl {args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    results = {}
    for path in (work / "result").rglob("*_result.json"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            results[row["id"]] = row
    failed = set()
    for path in (work / "score").rglob("*_score.json"):
        failed |= {json.loads(line).get("id") for line in path.read_text().splitlines()[1:]}
    return results, {i: i not in failed for i in results}


def harness(server: ReplayServer, form: str, category: str, ids: list[str], work: Path) -> dict[str, dict]:
    """`run --env protocol=bfcl`: its records, by entry id."""
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", f"bfcl-{category.replace('_', '-')}"]
    cmd += ["--model", server.model, "--endpoint", server.url, "--conditions", "bfcl-native"]
    cmd += ["--env", "protocol=bfcl", "--tool-mode", "native" if form == "fc" else "prompt"]
    cmd += ["--task-ids", ",".join(i.removeprefix("multi_turn_") for i in ids), "--no-suite-check"]
    cmd += ["--out", str(work / "run")]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "none"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"repair-harness run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    start = " ".join(done.stderr.split()).split(" preflight ")[0]  # the first line, however the console wrapped it
    records = {}
    for line in (work / "run" / "records.jsonl").read_text().splitlines():
        row = json.loads(line)
        records[f"multi_turn_{row['task_id']}"] = row
    records["_start"] = {"line": start}
    return records


def bfcl_executed(row: dict[str, Any]) -> tuple[list[list[Any]], bool]:
    """The calls BFCL's handler executed per turn (its log's decoded calls), and its force-quit."""
    turns, forced = [], False
    for turn in row.get("inference_log", []):
        if not isinstance(turn, dict):
            continue  # a state log
        calls = []
        for key, step in turn.items():
            if not key.startswith("step_"):
                continue
            for item in step:
                if item.get("role") == "handler_log" and item.get("content", "").startswith("Successfully decoded"):
                    calls += item["model_response_decoded"]
                forced |= "forced to quit" in str(item.get("content", ""))
        turns.append(calls)
    return turns, forced


def harness_executed(record: dict[str, Any], form: str) -> list[list[str]]:
    """The record's executed calls per turn, written as BFCL's handler writes the calls it
    executes: its FC decoder's text (`convert_to_function_call`), its prompting decoder's."""
    out = []
    for turn in record["extra"]["bfcl"]["executed"]:
        if form == "fc":
            out.append([f"{c['name']}({','.join(f'{k}={v!r}' for k, v in c['arguments'].items())})" for c in turn])
        else:
            out.append([call_text(ToolCall(name=c["name"], arguments=c["arguments"])) for c in turn])
    return out


def _diff(a: Any, b: Any, where: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{where}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'BFCL' if k in a else 'the harness'}"
            if d := _diff(a[k], b[k], f"{where}.{k}"):
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if d := _diff(x, y, f"{where}[{i}]"):
                return d
        return None
    return None if a == b else f"{where}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"


def phase(label: str, form: str, category: str, scripts: dict[str, list], model: str) -> dict[str, int]:
    entries = {i: data.entry(category, i) for i in scripts}
    firsts = {_first(e): i for i, e in entries.items()}
    assert len(firsts) == len(entries), "two entries open with the same question"
    server = ReplayServer(model, scripts, firsts)
    keys = ("entries", "requests", "same_requests", "same_calls", "same_quit", "same_verdict", "force_quits_won")
    counts = dict.fromkeys(keys, 0)
    problems = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "bfcl").mkdir()
            t0 = time.monotonic()
            rows, verdicts = bfcl(server, form, category, sorted(scripts), work / "bfcl")
            theirs = server.by_entry()
            t1 = time.monotonic()
            server.reset()
            records = harness(server, form, category, sorted(scripts), work)
            t2 = time.monotonic()
            ours, preflight, unknown = server.by_entry(), len(server.preflight), len(server.unknown)
    finally:
        server.close()
    for i in sorted(scripts):
        counts["entries"] += 1
        a, b = theirs.get(i, []), ours.get(i, [])
        counts["requests"] += len(a)
        same = sum(x == y for x, y in zip(a, b, strict=False)) if len(a) == len(b) else 0
        counts["same_requests"] += same
        if same != len(a) or len(a) != len(b):
            problems.append(f"{i}: requests {_diff(a, b)}")
        record = records.get(i)
        if record is None:
            problems.append(f"{i}: no record")
            continue
        calls, forced = bfcl_executed(rows[i])
        mine = harness_executed(record, form)
        counts["same_calls"] += calls == mine[: len(calls)] and len(mine) in (len(calls), len(calls) + 1)
        if not (calls == mine[: len(calls)]):
            problems.append(f"{i}: calls {_diff(calls, mine)}")
        quit_ = bool(record["extra"].get("force_quit"))
        counts["same_quit"] += forced == quit_
        counts["same_verdict"] += verdicts[i] == bool(record["success"])
        counts["force_quits_won"] += bool(record["extra"].get("force_quit_won"))
        if verdicts[i] != bool(record["success"]) or forced != quit_:
            problems.append(
                f"{i}: BFCL valid={verdicts[i]} quit={forced}; harness success={record['success']} quit={quit_}"
            )
    counts.update(preflight_marked=preflight, unclaimed=unknown)
    print(
        f"{label}: {counts['entries']} entries, {counts['requests']} requests: identical {counts['same_requests']}; "
        f"calls executed identical in {counts['same_calls']}, force-quits {counts['same_quit']}, verdicts "
        f"{counts['same_verdict']} (BFCL valid {sum(verdicts.values())}; won after a force-quit in the last turn, "
        f"which the harness's own rule loses: {counts['force_quits_won']}); preflight requests (marked, left out) "
        f"{preflight}; BFCL {t1 - t0:.1f} s, harness {t2 - t1:.1f} s",
        flush=True,
    )
    print(f"  start line: {records['_start']['line']}", flush=True)
    for p in problems:
        print(f"  DIFFERS {p}", flush=True)
    counts["problems"] = len(problems)
    return counts


def main() -> int:
    totals: dict[str, int] = {}
    phases = []
    for form, category, path in REAL:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        known = set(data.entry_ids(category))
        # every entry whose inference did not fail, on the installed release's questions
        scripts = {
            r["id"]: from_result(r["result"])
            for r in rows
            if isinstance(r["result"], list)
            and "inference_log" in r
            and r["id"] in known
            and _first(data.entry(category, r["id"])) == _logged_first(r)
        }
        phases.append(
            (
                f"real {path.parent.name if path.parent.name != 'multi_turn' else path.parents[1].name} "
                f"{category} {form}",
                form,
                category,
                scripts,
                "replayed-model",
            )
        )
    for form in ("fc", "prompt"):
        for category, ids in SYNTHETIC_ENTRIES.items():
            for variant in synthetic.VARIANTS:
                if form == "prompt" and variant in ("text_call", "empty_arguments"):
                    continue  # FC's own differences
                if category == "miss_func" and variant != "clean":
                    continue
                scripts = {f"{i}": synthetic.script(data.entry(category, i), variant, form == "fc") for i in ids}
                phases.append(
                    (
                        f"synthetic {variant} {category} {form} [{synthetic.VARIANTS[variant]}]",
                        form,
                        category,
                        scripts,
                        f"synthetic-{variant.replace('_', '-')}",
                    )
                )
    only = sys.argv[1:]  # phases whose label holds one of these words (all: none given)
    for label, form, category, scripts, model in phases:
        if only and not any(w in label for w in only):
            continue
        for k, v in phase(label, form, category, scripts, model).items():
            totals[k] = totals.get(k, 0) + v
    print(
        f"total: {totals['entries']} entries, {totals['requests']} requests, identical {totals['same_requests']}; "
        f"calls {totals['same_calls']}, force-quits {totals['same_quit']}, verdicts {totals['same_verdict']} of "
        f"{totals['entries']}; preflight requests marked and left out {totals['preflight_marked']}; "
        f"differences {totals['problems']}"
    )
    return 1 if totals["problems"] else 0


def _logged_first(row: dict[str, Any]) -> str:
    """The first user message the log says the model was shown."""
    for turn in row.get("inference_log", []):
        if isinstance(turn, dict) and "begin_of_turn_query" in turn:
            return str(next(m["content"] for m in turn["begin_of_turn_query"] if m["role"] == "user"))
    return ""


if __name__ == "__main__":
    sys.exit(main())
