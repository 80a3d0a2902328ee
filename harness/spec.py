"""Build and validate a RunSpec from CLI flags or a TOML grid file.

Every name is checked against its registry here, before anything runs: an unknown suite,
condition, model or config key is one message with the bad value and the allowed ones.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from conditions import CONDITIONS, Condition, UnplayableCondition
from conditions import resolve as resolve_condition
from envs import get_suite, options_model, suite_entry, suite_names
from envs.contract import Suite
from envs.errors import UserError
from harness import defaults
from harness.plugins import Plugin
from harness.plugins import load as load_plugins
from harness.redact import cut, without_credentials
from harness.run_spec import RunSpec, once_each
from harness.serving import describe_models, validate_model


class SpecError(UserError):
    """A spec that cannot run; the message says which field and what was expected."""


def _allowed(field: str) -> str:
    """What a required RunSpec field may hold, for the message that says it is missing."""
    if field == "suite":
        return "one of " + ", ".join(suite_names())
    if field == "conditions":
        return "comma-separated, from " + ", ".join(CONDITIONS)
    if field == "models":
        return describe_models()
    return ""


# RunSpec field -> the `run` flag that sets it, for messages about flags
FLAGS = {"suite": "--suite", "models": "--model", "conditions": "--conditions"}


def _explain(exc: ValidationError, source: str, model: type[BaseModel]) -> SpecError:
    """One line per error; an unknown key also lists the keys `model` accepts."""
    lines, unknown = [], False
    for err in exc.errors(include_url=False):
        path = ".".join(str(p) for p in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            unknown = True
            lines.append(f"{source}: unknown key {path!r}")
        elif err["type"] == "missing":
            name = FLAGS.get(path, path) if source == "flags" else f"key {path!r}"
            allowed = _allowed(path)
            lines.append(f"{source}: {name} is required" + (f" ({allowed})" if allowed else ""))
        else:
            # an input may be a URL with a password in it: what is echoed has its credentials masked
            got = without_credentials(repr(err.get("input")))
            got = got if len(got) <= 100 else cut(got, 97) + "..."  # a value 50,000 characters long stays one line
            lines.append(f"{source}: {path}: {err['msg']} (got {got})")
    if unknown:
        lines[-1] += f"; allowed keys: {', '.join(sorted(f.alias or n for n, f in model.model_fields.items()))}"
    return SpecError("\n".join(lines))


@dataclass(frozen=True)
class Resolved:
    """What a spec's names mean: the suite, its validated options, each condition as it plays in
    the suite's feedback family, the budgets. Made by `resolved` (a value beside the spec, never
    kept on it): `build_spec` makes one to check the names, `run` one that the run reads throughout."""

    spec: RunSpec
    suite: Suite
    options: BaseModel
    conditions: dict[str, Condition]
    budgets: list[int]
    # the plugins loaded for it (installed ones and the spec's files), as run.json records them
    plugins: list[Plugin]


def build_spec(values: dict[str, Any], source: str = "flags") -> RunSpec:
    try:
        spec = RunSpec(**values)
    except ValidationError as exc:
        raise _explain(exc, source, RunSpec) from None
    load_plugins(spec.plugins)  # before a name is looked up: a plugin's suite is a name like any other
    spec = _protocol_defaults(spec, values, source)
    if spec.budgets is None:  # not given: the suite's own, the budget `suites` shows
        spec = spec.model_copy(update={"budgets": [suite_entry(spec.suite).budget]})
    for field in _GRID:
        if not getattr(spec, field):
            raise SpecError(f"{source}: {field} is empty: the grid would play nothing")
    # a value named twice is one axis value: played once, recorded once
    spec = spec.model_copy(update={f: once_each(getattr(spec, f)) for f in _GRID})
    plan = resolved(spec, source)
    names, also = _one_name_each(spec.conditions, plan)
    spec = spec.model_copy(update={"conditions": names, "also_named": also})
    for name in spec.models:
        validate_model(name, spec)
    return spec


def _protocol_defaults(spec: RunSpec, values: dict[str, Any], source: str) -> RunSpec:
    """A protocol's own values for the fields the run did not set, the fields it must set and those
    it may not (a suite's `run_defaults`: BFCL's sampling, bound and handler under `protocol=bfcl`)."""
    try:
        suite = get_suite(spec.suite)
        options = suite.options_model(**spec.env_options)
    except (UserError, ValidationError):  # `resolved` names the bad suite or option
        return spec
    hook = getattr(suite, "run_defaults", None)
    if hook is None:
        return spec
    own, choose, refuse = hook(options)
    served = [m for m in spec.models if not m.startswith("agent:")]  # a reference agent reads no request
    for field, why in choose.items():
        if field not in values and served:
            raise SpecError(f"{source}: {why} (models {', '.join(served)})")
    for field, why in refuse.items():
        # the default, said or copied (a fork copies its source's): nothing asked that does not apply
        if values.get(field) not in (None, RunSpec.model_fields[field].get_default(call_default_factory=True)):
            raise SpecError(f"{source}: {why} (got {values[field]!r})")
    given = set(values.get("decoding", {}))
    update: dict[str, Any] = {}
    if "decoding" in own:
        update["decoding"] = spec.decoding.model_copy(
            update={k: v for k, v in own["decoding"].items() if k not in given}
        )
    if "budgets" in own and "budgets" not in values:
        update["budgets"] = own["budgets"]
    return spec.model_copy(update=update)


def check_grid_size(size: int) -> None:
    """A grid counted before it is expanded (`run` and `fork` alike): each episode costs memory."""
    if size > defaults.MAX_EPISODES:
        raise SpecError(
            f"the grid has {size:,} episodes, more than one run plays ({defaults.MAX_EPISODES:,}; about 1.4 KB of "
            "memory each before the first plays): split it into several runs (fewer seeds, tasks or conditions each)"
        )


# the grid's axes (RunSpec fields): each a list that must name something, each value once
_GRID = ("conditions", "models", "budgets", "sample_seeds", "constrain")


def _one_name_each(names: list[str], plan: Resolved) -> tuple[list[str], dict[str, str]]:
    """One name per condition: a later name of a condition already named (an alias beside its
    composition spelled out) would play every episode twice; it plays once, under the first
    name (a resumed run keeps its keys), and {later name: first name} is returned for the run to
    say so. Either name answers afterwards (results.spellings: report, show, plot)."""
    seen: dict[str, str] = {}
    also: dict[str, str] = {}
    for name in names:
        record = {k: v for k, v in plan.conditions[name].record().items() if k != "paper_name"}
        first = seen.setdefault(json.dumps(record, sort_keys=True, default=str), name)
        if first != name:
            also[name] = first
    return list(seen.values()), also


def resolved(spec: RunSpec, source: str = "spec") -> Resolved:
    """The spec's resolution: every name checked against its registry. The runner makes it once
    per run and hands it down; nothing looks a name up again."""
    plugins = load_plugins(spec.plugins)  # first: a plugin's suite or condition is a name like any other
    suite = get_suite(spec.suite)
    budgets = spec.budgets if spec.budgets is not None else [suite_entry(spec.suite).budget]
    if any(b < 1 for b in budgets):
        raise SpecError(f"{source}: budgets must be >= 1 (got {budgets})")
    if "protocol" in spec.env_options and "protocol" not in suite.options_model.model_fields:
        raise SpecError(
            f"{source}: suite {spec.suite!r} cannot play protocol {spec.env_options['protocol']!r} "
            f"(it has no protocol option); allowed: {_protocol_suites()}"
        )
    try:
        options = suite.options_model(**spec.env_options)
    except ValidationError as exc:
        raise _explain(exc, f"{source}: env_options of suite {spec.suite}", suite.options_model) from None
    family = suite.feedback_family(options)
    keys = {f.alias or name for name, f in suite.options_model.model_fields.items()}
    conditions: dict[str, Condition] = {}
    for name in spec.conditions:
        try:
            condition = resolve_condition(
                name, family, who=f"protocol {getattr(options, 'protocol', spec.suite)!r}", cut=spec.feedback_cut
            )
        except UnplayableCondition as exc:
            raise SpecError(f"{source}: {exc}") from None
        missing = sorted(set(condition.definition.env) - keys)
        if missing:
            raise SpecError(
                f"{source}: condition {name!r} sets {', '.join(missing)}, which suite {spec.suite!r} does not have "
                "(it needs a suite with backend faults)"
            )
        conditions[name] = condition
    return Resolved(
        spec=spec, suite=suite, options=options, conditions=conditions, budgets=list(budgets), plugins=plugins
    )


def _protocol_suites() -> str:
    """The suites that take a `protocol` option, with its values."""
    out = []
    for name in suite_names():
        field = options_model(name).model_fields.get("protocol")
        if field is not None:
            out.append(f"{name} ({' | '.join(get_args(field.annotation))})")
    return ", ".join(out)


def load_toml(path: Path) -> dict[str, Any]:
    """A TOML grid; its paths (`plugins`, `out`) are relative to the TOML file's folder, as a
    path written in a file is read (a flag's `--out` stays relative to where the command runs)."""
    try:
        values = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise SpecError(f"config file {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start}), which TOML must be") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{path}: arrays or tables nested too deep to read") from None
    for table in ("decoding", "env_options"):
        if table in values and not isinstance(values[table], dict):
            raise SpecError(f"{path}: {table} must be a table (e.g. [{table}]), got {values[table]!r}")
    plugins = values.get("plugins", [])
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise SpecError(f"{path}: plugins must be a list of file names, got {plugins!r}")
    values["plugins"] = [_beside(path, p) if not Path(p).is_absolute() else p for p in plugins]
    if isinstance(values.get("out"), str) and not Path(values["out"]).is_absolute():
        values["out"] = _beside(path, values["out"])
    return values


def _beside(toml: Path, name: str) -> str:
    """A path written in a TOML file, resolved from its folder (no `configs/../runs` shown): relative
    to the working directory where it lies below it, else absolute."""
    full = (toml.parent.resolve() / name).resolve()
    try:
        return str(full.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(full)
