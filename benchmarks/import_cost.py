"""CPU an entry of `repair-harness import bfcl`, every process it starts counted.

    .venv/bin/python benchmarks/import_cost.py FOLDER... [--auto] [--rounds 1] [--before PATH] [--no-peer]

Each FOLDER (a run's folder of BFCL's published result files, e.g. one of bbrowning/bfcl-vllm-results'
2025-11-12-main and 2025-11-12-harmony-fixes: 1,600 multi-turn entries of gpt-oss-20b and -120b) is
imported into a fresh --out, a process each, as a user runs it (start-up included); `--auto` adds
`--bfcl-version auto` (REPAIR_HARNESS_BFCL_CACHE as set: point it at a cache that holds the releases
the files need, or auto installs them). The CPU of an import is the user + system time of its
process and of every process under it: this one is a child subreaper (Linux), so a process whose
parent left it running (a sidecar left to end at its input's end) is waited for, and counted, here.
With --before, another checkout imports the same folders in the same rounds, and the two imports'
records and transcripts are compared (identical but for the run id, which is drawn per import).
Issue 67's target: <= 10 ms of CPU an entry on the installed release.

The peer (--no-peer leaves it out): BFCL's own `bfcl evaluate` of the installed bfcl-eval, what a
researcher runs to score the same files (it replays every entry's calls on BFCL's backends and
checks each turn, as the import does), through tests/bfcl_runner.py, one process a FOLDER in the
same rounds, counted the same way, on a fresh BFCL project root whose result/ holds the FOLDER's
files as BFCL lays them out (MODEL/multi_turn/FILE). A model BFCL's model table lacks is added as
BFCL's docs add one (OpenAICompletionsHandler, FC or prompting as the import read the file) and
the line says so. Its scores and the import's verdicts are compared file by file and entry by entry.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.process_cpu import command_cpu, subreaper  # noqa: E402


def entries(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*_result.json") for line in f.open(encoding="utf-8") if line.strip())


def _normal(value: object, run_ids: set[str]) -> object:
    if isinstance(value, dict):
        return {k: _normal(v, run_ids) for k, v in value.items() if k != "run_id"}
    if isinstance(value, list):
        return [_normal(v, run_ids) for v in value]
    if isinstance(value, str):
        for run_id in run_ids:
            value = value.replace(run_id, "RUN")
    return value


def written(out: Path) -> dict[str, tuple[list[str], dict[str, object]]]:
    """Each run folder's records (sorted) and transcripts (by name), the run id taken out."""
    found: dict[str, tuple[list[str], dict[str, object]]] = {}
    for records in sorted(out.rglob("records.jsonl")):
        lines = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
        ids = {str(r["run_id"]) for r in lines}
        found[str(records.parent.relative_to(out))] = (
            sorted(json.dumps(_normal(r, ids), sort_keys=True) for r in lines),
            {p.name: _normal(json.loads(p.read_text()), ids) for p in (records.parent / "transcripts").iterdir()},
        )
    return found


def _paths(a: object, b: object, at: str = "") -> set[str]:
    """Where two JSON values differ, list indices written []: the fields, not each place."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {p for k in a.keys() | b.keys() for p in _paths(a.get(k, ...), b.get(k, ...), f"{at}.{k}")}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return {p for x, y in zip(a, b, strict=True) for p in _paths(x, y, f"{at}[]")}
    return set() if a == b else {at or "."}


def compared(
    after: dict[str, tuple[list[str], dict[str, object]]], before: dict[str, tuple[list[str], dict[str, object]]]
) -> str:
    """The two imports' records, then their transcripts: identical but for the run id, or what differs
    (a newer harness may write more into a transcript than an older one for the same records)."""
    if after.keys() != before.keys():
        return f"records: other run folders ({sorted(after)} against {sorted(before)})"
    records = sum(after[run][0] != before[run][0] for run in after)
    said = [f"records: {'identical but for the run id' if not records else f'DIFFER in {records} run folders'}"]
    differ = [
        (a, before[run][1].get(name))
        for run in after
        for name, a in after[run][1].items()
        if a != before[run][1].get(name)
    ]
    total = sum(len(after[run][1]) for run in after)
    fields = sorted({p for a, b in differ for p in _paths(a, b)})
    said.append(
        f"transcripts: {'identical but for the run id' if not differ else f'{len(differ)} of {total} differ'}"
        + (f", in {', '.join(fields[:6])}{' ...' if len(fields) > 6 else ''}" if fields else "")
    )
    return "; ".join(said)


def model_of(path: Path) -> str:
    """The model folder a result file sits in, as BFCL lays them out: MODEL/multi_turn/FILE, MODEL/FILE."""
    return path.parent.parent.name if path.parent.name == "multi_turn" else path.parent.name


def category_of(name: str) -> str:
    """`BFCL_v4_multi_turn_long_context_result.json`, `..._score.json`: `multi_turn_long_context`."""
    found = re.search(r"(multi_turn_[a-z_]+?)_(?:result|score)\.json$", name)
    return found.group(1) if found else name


Verdicts = dict[tuple[str, str], dict[str, bool | None]]  # (model, category): entry id -> won (None: harness error)


def ours(out: Path) -> tuple[Verdicts, dict[str, str | None]]:
    """The import's verdicts, and BFCL's handler kind it told from each model's files (FC,
    prompting; None: no call to tell by)."""
    verdicts: Verdicts = {}
    kinds: dict[str, str | None] = {}
    for meta in sorted(out.rglob("run.json")):
        imported = json.loads(meta.read_text(encoding="utf-8"))["sessions"][-1]["imported"]
        model = model_of(Path(imported["files"][0]["path"]))
        kinds[model] = kinds.get(model) or imported["bfcl_runner"]["handler"]
        for line in (meta.parent / "records.jsonl").read_text(encoding="utf-8").splitlines():
            entry = f"multi_turn_{json.loads(line)['task_id']}"
            verdicts.setdefault((model, entry.rsplit("_", 1)[0]), {})[entry] = json.loads(line)["success"]
    return verdicts, kinds


def bfcl_evaluate(folder: Path, project: Path, kinds: dict[str, str | None]) -> tuple[float, float, int, list[str]]:
    """`bfcl evaluate` of a FOLDER's files in a fresh BFCL project root: its CPU and wall seconds,
    the entries it scored, and what it said of its model table (or why a model was left out)."""
    notes: list[str] = []
    models: set[str] = set()
    for path in sorted(folder.rglob("*_result.json")):
        model = model_of(path)
        if kinds.get(model) is None:
            notes.append(f"{model}: left out (the import found no call to tell BFCL's handler by)")
            continue
        dest = project / "result" / model / "multi_turn" / path.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        models.add(model)
    if not models:
        return 0.0, 0.0, 0, notes
    n = entries(project / "result")
    from tests.bfcl_runner import command, environment

    # BFCL names a model folder's model by its underscores made slashes (eval_runner's own rule)
    adds = [f"{m.replace('_', '/')}={kinds[m]}" for m in sorted(models)]
    cmd = [*command(*adds), "evaluate", "--model", ",".join(a.split("=")[0] for a in adds)]
    cpu, wall, err = command_cpu(
        [*cmd, "--test-category", "multi_turn"], environment(project, OPENAI_API_KEY="none"), project, orphans=True
    )
    notes += [line.strip() for line in err.splitlines() if "not in BFCL's model table" in line]
    return cpu, wall, n, notes


def theirs(project: Path) -> tuple[Verdicts, dict[tuple[str, str], dict[str, float]]]:
    """BFCL's verdicts (an entry its score file lists is invalid) and its summary line, per file."""
    verdicts: Verdicts = {}
    summary = {}
    for score in sorted((project / "score").glob("*/multi_turn/*_score.json")):
        model, category = score.parents[1].name, category_of(score.name)
        lines = [json.loads(line) for line in score.read_text(encoding="utf-8").splitlines() if line.strip()]
        invalid = {str(row.get("id")) for row in lines[1:]}
        result = project / "result" / model / "multi_turn" / score.name.replace("_score.json", "_result.json")
        ids = [str(json.loads(line)["id"]) for line in result.read_text(encoding="utf-8").splitlines() if line.strip()]
        verdicts[(model, category)] = {i: i not in invalid for i in ids}
        summary[(model, category)] = lines[0]
    return verdicts, summary


def agreement(folder: Path, mine: Verdicts, project: Path) -> None:
    """The import's success rate beside `bfcl evaluate`'s accuracy, file by file, and the entries
    whose verdicts differ."""
    bfcl, summary = theirs(project)
    for key in sorted(set(mine) | set(bfcl)):
        where = f"  {folder.name}/{key[0]} {key[1]}:"
        if key not in mine or key not in bfcl:
            print(where, "only", "the import" if key in mine else "bfcl evaluate", "scored it")
            continue
        o, t = mine[key], bfcl[key]
        won, errors = sum(v is True for v in o.values()), sum(v is None for v in o.values())
        line = summary[key]
        accuracy = float(line["accuracy"])
        differ = sorted(i for i in set(o) | set(t) if (o.get(i) is True) != bool(t.get(i)))
        gap = (won / len(o) - accuracy) * 100
        said = "agree" if not differ and abs(gap) < 1e-9 else f"DIFFER by {gap:+.2f} points"
        shown = f" ({', '.join(differ[:5])}{' ...' if len(differ) > 5 else ''})" if differ else ""
        print(
            f"{where} ours {won}/{len(o)} = {won / len(o):.2%} ({errors} harness errors), bfcl evaluate "
            f"{line['correct_count']}/{line['total_count']} = {accuracy:.2%}: {said}; verdicts differ on "
            f"{len(differ)} entries{shown}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--auto", action="store_true", help="import with --bfcl-version auto")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", type=Path, help="another checkout of the harness, measured in the same rounds")
    ap.add_argument("--no-peer", action="store_true", help="leave BFCL's own `bfcl evaluate` (the peer) out")
    args = ap.parse_args()
    reaped = subreaper()
    if not reaped:
        print("(no child subreaper here: a descendant left running by its parent is not counted)")
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    n = sum(entries(f) for f in args.folders)
    flags = ["--bfcl-version", "auto"] if args.auto else []
    cpu: dict[str, list[float]] = {side: [] for side in [*trees, *([] if args.no_peer else ["bfcl"])]}
    scored, notes = 0, set[str]()
    with tempfile.TemporaryDirectory(prefix="import-cost-") as tmp:
        for r in range(args.rounds):
            for side, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                total = 0.0
                for i, folder in enumerate(args.folders):
                    out = Path(tmp) / f"{side}-{r}" / f"{i}-{folder.name}"
                    cmd = [sys.executable, "-m", "harness.cli", "import", "bfcl", str(folder.resolve()), "--out"]
                    seconds, wall, _ = command_cpu([*cmd, str(out), *flags], env, tree, orphans=True)
                    print(f"round {r + 1}, {side}: {folder.name}: {seconds:.2f} cpu s, {wall:.1f} wall s", flush=True)
                    total += seconds
                cpu[side].append(total)
            if not args.no_peer:
                total, scored = 0.0, 0
                for i, folder in enumerate(args.folders):
                    _, kinds = ours(Path(tmp) / f"after-{r}" / f"{i}-{folder.name}")
                    project = Path(tmp) / f"bfcl-{r}" / f"{i}-{folder.name}"
                    seconds, wall, scored_here, said = bfcl_evaluate(folder, project, kinds)
                    print(
                        f"round {r + 1}, bfcl evaluate: {folder.name}: {seconds:.2f} cpu s, {wall:.1f} wall s",
                        flush=True,
                    )
                    total, scored, notes = total + seconds, scored + scored_here, notes | set(said)
                cpu["bfcl"].append(total)
        if not args.no_peer:
            print(
                f"the import's success rate ({'--bfcl-version auto' if args.auto else 'installed release'}) beside "
                f"bfcl evaluate's accuracy (installed bfcl-eval {version('bfcl-eval')}), round 1:"
            )
            for i, folder in enumerate(args.folders):
                mine, _ = ours(Path(tmp) / "after-0" / f"{i}-{folder.name}")
                agreement(folder, mine, Path(tmp) / "bfcl-0" / f"{i}-{folder.name}")
        if args.before:
            same = compared(written(Path(tmp) / "after-0"), written(Path(tmp) / "before-0"))
    release = "--bfcl-version auto" if args.auto else "the installed release"
    medians = {side: statistics.median(totals) for side, totals in cpu.items()}
    for side, median in medians.items():
        if side == "bfcl":
            continue
        print(f"{side}: {median:.2f} cpu s for {n} entries on {release} = {median / n * 1000:.2f} ms an entry")
    if "bfcl" in medians:
        for note in sorted(notes):
            how = (
                " (as BFCL's docs add a model; FC or prompting as the import read the file)" if "added" in note else ""
            )
            print(f"  bfcl evaluate: {note}{how}")
        each = medians["bfcl"] / scored * 1000 if scored else float("nan")
        peer = f"bfcl evaluate (BFCL's own scorer, bfcl-eval {version('bfcl-eval')}, the peer)"
        print(f"{peer}: {medians['bfcl']:.2f} cpu s for {scored} entries = {each:.2f} ms an entry")
        print(f"after / bfcl evaluate, CPU an entry: {medians['after'] / n * 1000 / each:.2f}")
    if args.before:
        print(same)
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
