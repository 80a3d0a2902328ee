"""A fork's spec from its sources and the flags given: the sources' environment and conversation
settings, the fork's own grid, and the checks of its flags (one line, exit 2)."""

from __future__ import annotations

from typing import Any

from harness.fork import SHARED, ForkError, Source
from harness.fork_imports import imported, imported_said, release_of
from harness.run_spec import ForkSpec


def fork_spec_values(sources: list[Source], given: dict[str, Any]) -> dict[str, Any]:
    """A fork's RunSpec values: the first source's environment and conversation settings, the
    fork's own grid (`given`, None where not given) and its ForkSpec."""
    first = sources[0].spec
    execution = dict(sources[0].meta.get("execution") or {})
    plugins = [p for s in sources for p in s.meta.get("plugins") or []]
    recorded = sorted({str(p.get("name")) for p in plugins if "distribution" not in p})  # not installed ones
    if recorded and not given.get("plugins"):
        raise ForkError(f"the sources were played with plugin {', '.join(recorded)}: give it with --plugin")
    values: dict[str, Any] = {k: first[k] for k in (*SHARED, "decoding") if k in first}
    values["constrain"] = sorted({c for s in sources for c in s.spec.get("constrain") or ["none"]})
    values["budgets"] = [given["budget"]] if given.get("budget") else first.get("budgets")
    models = given.get("models")
    runner = runner_of(sources[0])
    if runner.get("decoding"):  # an import's spec holds no sampling of the model's: BFCL's runner's
        values["decoding"] = dict(runner["decoding"])
    elif imported(sources[0]):  # imported before it said: the protocol's own (harness.spec), not ours
        values.pop("decoding", None)
    if runner.get("tool_mode") and any(not m.startswith("agent:") for m in given.get("models") or []):
        values["tool_mode"] = runner["tool_mode"]  # a served model meets the handler the file's model met
    if not models and any(imported(s) for s in sources) and not given.get("check"):
        raise ForkError(
            "the sources are imported transcripts: their model cannot play again here; give the repairing "
            "model with --model (a served model with --endpoint, local, or a reference agent such as agent:reader)"
        )
    values["models"] = models or sorted({m for s in sources for m in s.spec.get("models", [])})
    if not models and given.get("check") and any(imported(s) for s in sources):
        # an import's check plays nothing (harness.fork_checks): the spec still names a player it knows
        values["models"] = ["agent:gold"]
    if not models and not given.get("endpoints"):  # the source's own models: where they were served
        for k in ("endpoints", "backend", "api_key_env"):
            if k in execution:
                values[k] = execution[k]
    values["sample_seeds"] = given.get("seeds") or sorted({x for s in sources for x in s.spec.get("sample_seeds", [])})
    values["fork"] = ForkSpec(
        sources=[str(s.path) for s in sources],
        runs=[s.run_id for s in sources],
        at=given.get("at") or "first",
        models=models,
        seeds=given.get("seeds"),
        budget=given.get("budget"),
        check=bool(given.get("check")),
        release=release_of(sources[0]),  # one a group (harness.fork.groups)
    ).model_dump()
    return values


def runner_of(source: Source) -> dict[str, Any]:
    """How BFCL's runner played the file an import was read from (`imported.bfcl_runner`,
    harness.imports.bfcl.runner): its handler's tool mode and its sampling; {} where not said.
    One a group (harness.fork.groups)."""
    runner = imported_said(source, "bfcl_runner")
    return dict(runner) if isinstance(runner, dict) else {}


def check_at(at: str) -> str:
    if at in ("first", "all") or (at.isascii() and at.isdigit() and int(at) >= 1):  # '²' is a digit, no int
        return at
    raise ForkError(f"--at takes first, all or a call number N >= 1, got {at!r}")


def check_budget(budget: int | None) -> int | None:
    if budget is not None and budget < 1:  # 0 was read as not given, -1 reached pydantic's dump
        raise ForkError(f"--budget takes the repair calls after the failure, N >= 1, got {budget}")
    return budget
