"""Exports and figures onto a full disk: one line, exit 1, no partial file left (issue 49). Onto a
path that cannot be written as named (too long, under a file): one line, exit 2 (issue 57).

`ulimit -f` makes any write past the limit fail with EFBIG, as a full disk fails it with ENOSPC.
"""

import resource
import signal
import subprocess
import sys

import pytest

from tests.harness.cli.invoke import invoke

LIMIT = 4096  # bytes: more than run.json or a record, less than any export of 20 episodes


def _limited(*args):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *map(str, args)], capture_output=True, text=True, preexec_fn=limit
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "r"
    args = ("run", "--suite", "bank-disputes", "--model", "agent:reader,agent:gold", "--conditions", "raw,allowed_json")
    assert invoke(*args, "--tasks", "5", "--out", out)[0].exit_code == 0
    # matplotlib builds its font cache on first use: built here, under no limit, not in a limited child
    assert invoke("plot", out, "--out", out.parent / "warm")[0].exit_code == 0
    return out


@pytest.mark.parametrize(
    "kind, args",
    [
        ("parquet", ("--parquet", "x.parquet")),
        ("inspect", ("--inspect", "logs")),
        ("plot", ()),
    ],
)
def test_a_full_disk_under_an_export_is_one_line_and_leaves_no_partial_file(run, tmp_path, kind, args):
    target = tmp_path / "target"
    target.mkdir()
    if kind == "plot":
        done = _limited("plot", run, "--out", target)
    else:
        done = _limited("export", run, args[0], target / args[1])
    assert done.returncode == 1, done.stderr
    assert "File too large" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 3
    left = [p for p in target.rglob("*") if p.is_file()]
    assert all(p.stat().st_size < LIMIT for p in left) and not [p for p in left if p.suffix == ".part"], left


def test_a_hand_edited_integer_beyond_64_bits_is_named_by_export(run, tmp_path):
    import json
    import shutil

    edited = tmp_path / "edited"
    shutil.copytree(run, edited)
    rows = [json.loads(x) for x in (edited / "records.jsonl").read_text().splitlines()]
    rows[0]["prompt_words"] = 10**30
    (edited / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result, text = invoke("export", edited, "--parquet", tmp_path / "x.parquet")
    assert result.exit_code == 2 and "prompt_words holds an integer beyond 64 bits" in " ".join(text.split())
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "x.parquet.part").exists()


BAD_PATHS = {
    "a name over 255 bytes": lambda base: base / ("x" * 300),
    "300 folders of 200 characters (past PATH_MAX)": lambda base: base.joinpath(*["y" * 200] * 300),
    "a folder above it that is a file": lambda base: base / "afile" / "sub",
}


@pytest.mark.parametrize("kind", ["plot", "parquet", "inspect"])
@pytest.mark.parametrize("bad", list(BAD_PATHS))
def test_a_path_that_cannot_be_written_as_named_is_one_line_exit_2_and_nothing_written(run, tmp_path, kind, bad):
    (tmp_path / "afile").write_text("kept")
    target = BAD_PATHS[bad](tmp_path)
    if kind == "plot":
        result, text = invoke("plot", run, "--out", target)
    else:
        result, text = invoke("export", run, f"--{kind}", target / "x.parquet" if kind == "parquet" else target)
    # bad input, not a stop: the same path fails again however much space is freed
    assert result.exit_code == 2, text
    assert "Traceback" not in text and isinstance(result.exception, SystemExit)
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write ") and "name another path" in lines[0]
    assert str(tmp_path) in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and (tmp_path / "afile").read_text() == "kept"
