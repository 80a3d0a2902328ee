"""`doctor`: can the embedded model run on this machine? The diagnosis is `harness.serving.llama.doctor`'s."""

from __future__ import annotations

import textwrap

import typer

from harness.cli.common import EXIT_SERVER, echo, group, terminal_width

app = group()


@app.command("doctor")
def doctor(
    scan: bool = typer.Option(
        False, "--scan", help="also count AMX and AVX-512 (%zmm) instructions in its libraries (objdump, a few seconds)"
    ),
) -> None:
    """Check that the embedded model can run here: the llama.cpp build's CPU instructions, this CPU's, a probe.

    Exit code 0 when it runs, 3 when it cannot (the line says why and what fixes it).
    """
    # the serving front door imports its module on use: not for --help
    from harness.serving import diagnose

    d = diagnose(scan)
    # a line longer than the terminal wraps under its value, past the label column ("packages   ")
    indent = " " * 11
    width = terminal_width()
    echo("\n".join(textwrap.fill(line, width, subsequent_indent=indent, break_on_hyphens=False) for line in d.lines))
    echo(f"\nverdict: {d.summary}" + (f"\nfix: {d.fix}" if d.fix else ""))
    if not d.runs:
        raise typer.Exit(EXIT_SERVER)
