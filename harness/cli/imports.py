"""`import`: another harness's published transcripts as records (harness.imports)."""

from __future__ import annotations

from pathlib import Path

import typer

from envs.errors import UserError
from harness.cli.common import PLUGIN_HELP, echo, group

app = group()


@app.command("import")
def import_(
    kind: str = typer.Argument(..., metavar="FORMAT", help="the transcripts' format: bfcl"),
    paths: list[Path] = typer.Argument(..., help="result files, or folders of them"),
    out_dir: Path = typer.Option(..., "--out", help="a folder: one run directory per model and suite goes in it"),
    model: str | None = typer.Option(None, "--model", help="the model's name  [default: each file's folder]"),
    bfcl_version: str | None = typer.Option(
        None,
        "--bfcl-version",
        metavar="V|auto",
        help="replay on bfcl-eval release V (installed into a cache on first use, played in a process of "
        "its own), or auto: per file, the release that reproduces its log  [default: the installed one]",
    ),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP + "; an importer of another format"),
) -> None:
    """Import published transcripts: each recorded call played again on the suite's environment,
    judged by our contract and the suite's own checker, one record per entry; a rerun resumes."""
    # the episode loop, pydantic: not for --help
    from harness.imports.run import play_files

    # hashlib (3 ms): not for --help
    from harness.plugins import load

    load(plugin or [])
    # the model names its run directory, OUT/<model>--<suite>: `org/name` nested it, `../../x` left OUT
    if model is not None and (model in ("", ".", "..") or "/" in model or "\\" in model or model != model.strip()):
        raise UserError(f"--model {model!r}: an import's model names a folder: no '/', no leading or trailing space")
    if model is not None and not model.isprintable():
        raise UserError(f"--model {model!r}: a control character in a model's name")
    if model is not None and model.startswith("agent:"):  # every report would label a real model's play an agent's
        raise UserError(
            f"--model {model!r}: names a reference agent; an import holds a real model's transcripts: name that model"
        )
    if kind == "bfcl":  # the built-in importer (a registry refuses a plugin's second `bfcl`)
        # subprocess, BFCL's releases: not for --help
        from harness.imports.versions import import_bfcl

        import_bfcl(list(paths), out_dir, model, bfcl_version, echo)
        return
    if bfcl_version is not None:
        raise UserError(f"--bfcl-version is an option of `import bfcl`, not of `import {kind}`")
    play_files(kind, list(paths), out_dir, model, echo)
