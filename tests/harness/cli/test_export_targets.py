"""An export, a figure or a log never written onto what the command reads, nor onto what is not a
regular file (issue 66): `export r --parquet r/records.jsonl` would replace the run's records, and
a rename onto a device, a FIFO or a link would replace it with a plain file. One line, exit 2,
nothing changed."""

import hashlib
import os

import pytest

from tests.harness.cli.invoke import invoke


def _digest(folder):
    return {p.relative_to(folder): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def _one_line(result, text, *words):
    assert result.exit_code == 2, text
    assert "Traceback" not in text and isinstance(result.exception, SystemExit), text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), text
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("name", ["records.jsonl", "run.json", "new.parquet", "transcripts/x.parquet"])
def test_an_export_into_the_run_it_reads_is_refused_and_the_run_is_byte_identical(agents_run, name):
    before = _digest(agents_run)
    result, text = invoke("export", agents_run, "--parquet", agents_run / name)
    _one_line(result, text, "inside the run directory", "which this command reads", "nothing was written")
    assert _digest(agents_run) == before
    assert not list(agents_run.rglob("*.part")) and not (agents_run / "new.parquet").exists()


def test_the_records_file_named_as_the_source_is_its_run_too(agents_run):
    before = _digest(agents_run)
    result, text = invoke("export", agents_run / "records.jsonl", "--parquet", agents_run / "records.jsonl")
    _one_line(result, text, "inside the run directory")
    assert _digest(agents_run) == before


def test_a_run_reached_through_a_link_or_dots_is_the_same_run(agents_run, tmp_path):
    link = tmp_path / "alias"
    link.symlink_to(agents_run)
    before = _digest(agents_run)
    for target in (link / "records.jsonl", agents_run / ".." / agents_run.name / "run.json"):
        result, text = invoke("export", agents_run, "--parquet", target)
        _one_line(result, text, "inside the run directory")
    assert _digest(agents_run) == before


@pytest.mark.parametrize("option", ["--inspect", "plot"])
def test_a_folder_of_logs_or_figures_inside_the_run_is_refused(agents_run, option):
    before = _digest(agents_run)
    if option == "plot":
        result, text = invoke("plot", agents_run, "--out", agents_run / "figures")
    else:
        result, text = invoke("export", agents_run, "--inspect", agents_run / "logs")
    _one_line(result, text, "inside the run directory")
    assert _digest(agents_run) == before and not (agents_run / "figures").exists()


def test_a_fifo_and_a_link_are_not_replaced(agents_run, tmp_path):
    fifo = tmp_path / "x.parquet"
    os.mkfifo(fifo)
    result, text = invoke("export", agents_run, "--parquet", fifo)
    _one_line(result, text, "a FIFO")
    assert fifo.is_fifo()
    kept = tmp_path / "kept.txt"
    kept.write_text("kept")
    link = tmp_path / "y.parquet"
    link.symlink_to(kept)
    result, text = invoke("export", agents_run, "--parquet", link)
    _one_line(result, text, "a symbolic link")
    assert link.is_symlink() and kept.read_text() == "kept"


def test_a_device_is_not_replaced(agents_run):
    # as root, a rename onto /dev/null would replace the system's /dev/null
    before = os.lstat("/dev/null")
    result, text = invoke("export", agents_run, "--parquet", "/dev/null")
    _one_line(result, text, "a character device")
    after = os.lstat("/dev/null")
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


def test_a_link_among_the_figures_or_logs_is_refused_before_any_is_written(agents_run, tmp_path):
    kept = tmp_path / "kept.txt"
    kept.write_text("kept")
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "repair_funnel.pdf").symlink_to(kept)
    result, text = invoke("plot", agents_run, "--out", figures)
    _one_line(result, text, "repair_funnel.pdf is a symbolic link")
    assert sorted(p.name for p in figures.iterdir()) == ["repair_funnel.pdf"] and kept.read_text() == "kept"


def test_a_stale_part_link_is_never_written_through(agents_run, tmp_path):
    kept = tmp_path / "kept.txt"
    kept.write_text("kept")
    (tmp_path / "x.parquet.part").symlink_to(kept)
    result, text = invoke("export", agents_run, "--parquet", tmp_path / "x.parquet")
    assert result.exit_code == 0, text
    assert kept.read_text() == "kept" and (tmp_path / "x.parquet").stat().st_size > 0


def test_an_export_beside_the_run_still_writes(agents_run, tmp_path):
    result, text = invoke("export", agents_run, "--parquet", tmp_path / "ok.parquet")
    assert result.exit_code == 0 and (tmp_path / "ok.parquet").is_file(), text


@pytest.mark.parametrize("where", [".", "sub"])
def test_a_fork_into_its_source_is_refused(agents_run, where):
    before = _digest(agents_run)
    out = agents_run / where
    result, text = invoke("fork", agents_run, "--conditions", "raw", "--model", "agent:reader", "--out", out)
    _one_line(result, text, "--out", "inside the run directory")
    assert _digest(agents_run) == before and not (agents_run / "sub").exists()
