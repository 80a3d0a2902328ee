"""A name holding control characters (a folder named with an ESC sequence, a C1 CSI) reaches the
console written out, never obeyed: by `echo`, by every rich console's print and by the guard's
error line, while rich's own colours and the progress bar's cursor codes still reach a terminal."""

from __future__ import annotations

import io
import json

import pytest
from rich.progress import Progress

from harness.printable import console, printable
from tests.harness.cli.invoke import invoke

HOSTILE = "esc\x1b[31mRED\x1b]0;title\x07\u009b2J\x00\x7f"


def test_every_control_but_tab_and_newline_is_written_out_and_json_reads_it_back():
    shown = printable(HOSTILE + "\ttab\nline")
    assert shown == "esc\\u001b[31mRED\\u001b]0;title\\u0007\\u009b2J\\u0000\\u007f\ttab\nline"
    assert not any(ord(c) < 0x20 and c not in "\t\n" or 0x7F <= ord(c) <= 0x9F for c in shown)
    # report --format json goes through echo: the escapes are JSON's own, so the value is unchanged
    assert json.loads(printable(json.dumps({"dir": HOSTILE}, ensure_ascii=False))) == {"dir": HOSTILE}
    assert printable("plain é ✓") == "plain é ✓"


def test_a_terminal_console_keeps_its_own_colours_and_shows_the_names_controls():
    out = io.StringIO()
    term = console(file=out, force_terminal=True, color_system="standard", width=200)
    term.print(f"[red]error:[/red] {HOSTILE}", highlight=False)
    text = out.getvalue()
    assert "\x1b[31merror:" in text  # rich's own style code: still a colour
    assert "esc\\u001b[31mRED" in text and "\\u009b2J" in text
    assert "\x1b[31mRED" not in text and "\u009b" not in text and "\x07" not in text


def test_the_progress_bar_on_a_terminal_still_draws_with_its_cursor_codes():
    out = io.StringIO()
    term = console(file=out, force_terminal=True, color_system="standard", width=120)
    with Progress(console=term, auto_refresh=False) as bar:
        task = bar.add_task("episodes", total=2)
        bar.update(task, advance=2)
        bar.refresh()
        bar.console.print(f"a line about {HOSTILE}", highlight=False)  # printed above the live bar
    text = out.getvalue()
    assert "\x1b[?25l" in text and "\x1b[?25h" in text  # the bar hides and shows the cursor: untouched
    assert "episodes" in text and "100%" in text
    assert "a line about esc\\u001b[31mRED" in text and "\x1b[31mRED" not in text


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("esc") / HOSTILE.replace("\x00", "")  # a file name holds no NUL
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--tasks", "2", "--out", out
    )
    assert result.exit_code == 0, text
    return out, text


def test_run_report_show_plot_and_the_error_line_print_the_folders_name_written_out(hostile_run, tmp_path):
    out, run_text = hostile_run
    texts = {"run": run_text}
    for name, args in {
        "report": ("report", out),
        "report json": ("report", out, "--format", "json"),
        "show": ("show", out),
        "plot": ("plot", out, "--out", out.with_name(out.name + "-figs")),  # outside the run it reads
        "error": ("report", out / "absent"),
    }.items():
        result, texts[name] = invoke(*args)
        assert result.exit_code == (2 if name == "error" else 0), texts[name]
    for name, text in texts.items():
        assert "\x1b" not in text and "\u009b" not in text and "\x07" not in text, name
    for name in ("run", "report", "plot", "error"):
        assert "esc\\u001b[31mRED" in "".join(texts[name].split()), name  # the name is there, written out
    assert json.loads(texts["report json"])["cells"], "the JSON report still parses"
