"""`run --out ''` (an unset shell variable) wrote the run in among the current folder's files
(issue 66): it names no folder, one line, exit 2; `--out .` says so and stays allowed."""

from tests.harness.cli.invoke import invoke


def test_an_empty_out_is_refused_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for empty in ("", "  "):
        result, text = invoke(
            "run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--out", empty
        )
        assert result.exit_code == 2 and "names no folder" in text and "Traceback" not in text, text
    assert list(tmp_path.iterdir()) == []
