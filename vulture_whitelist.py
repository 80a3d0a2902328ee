"""Names vulture cannot see used: a framework or a library reads them, or only the tests call them.

vulture reads this file beside the packages (`[tool.vulture]` in pyproject.toml); nothing imports
or runs it. It matches by name, so one entry covers every definition of that name (one
`model_config` stands for all the models). The entries are real attributes, so mypy fails here
when one of them is renamed or removed. Genuinely dead code is deleted, never listed here.
"""

from typing import Any

import pydantic
import textworld

import results
from conditions import veriharness
from envs import contract, schema
from envs.bfcl import suite as bfcl_suite
from envs.textworld import manifest, options, suite, zmachine
from envs.textworld.veriharness import envelope
from envs.tools import tooling
from envs.tools.travel import world
from examples.plugins import shop_refunds
from harness import run_spec, types
from harness.agents import reader
from harness.cli import common, imports, listing, power, reproduce
from harness.imports import bfcl as bfcl_import
from harness.serving import server_proc
from results import report_model, run_meta

# names that no object importable here carries: TypedDict keys, a transformers model's attribute
by_name: Any = None

_ = (
    # pydantic reads a model's configuration from its class attribute
    pydantic.BaseModel.model_config,
    # pydantic validators: @field_validator / @model_validator register them, pydantic calls them
    contract.ToolCall._unicode,
    options.PlayOptions._seeds_parse,
    options.PaperOptions._seeds_in_paper,
    tooling.ToolInput._after,
    shop_refunds.StateRules._state,
    run_spec.ForkSpec._each_once,
    run_spec.RunSpec._urls,
    run_spec.RunSpec._model_names,
    run_spec.RunSpec._out,
    run_spec.RunSpec._shard,
    # pydantic fields run.json is validated against (results.run_meta.RunMeta), read as a dict after
    run_meta.RunMeta.moving_errors,
    types.EpisodeRecord._without_fork,
    contract.Violation._without_bounds,
    # pydantic fields filled by name (envs.validation.bounds_of) and written by Bounds.given
    contract.Bounds.ge,
    contract.Bounds.gt,
    contract.Bounds.le,
    contract.Bounds.lt,
    contract.Bounds.multiple_of,
    contract.Bounds.min_length,
    contract.Bounds.max_length,
    # pydantic's GenerateJsonSchema calls decimal_schema for every Decimal field (StableJsonSchema)
    schema.StableJsonSchema.decimal_schema,
    # pydantic fields written by model_dump: the records (records.jsonl)
    types.CallLog.parse_modes,
    types.EpisodeRecord.schema_version,
    types.EpisodeRecord.budget_spent,
    types.EpisodeRecord.action_calls,
    types.EpisodeRecord.review_calls,
    types.EpisodeRecord.invalid_calls,
    # pydantic fields written by model_dump: the JSON report (report --format json)
    report_model.DynamicsRow.episodes_with_rejection,
    report_model.DynamicsRow.preventable_ci_low,
    report_model.DynamicsRow.preventable_ci_high,
    report_model.DynamicsRow.after_error_counts,
    report_model.References.planned_contrasts,
    report_model.References.self_reflective,
    report_model.Report.schema_,
    report_model.ImportRow.score_files,
    # pydantic fields written by model_dump: a TextWorld suite's manifest.json and a game's entry
    manifest.GameEntry.textworld_version,
    manifest.Manifest.pythonhashseed,
    # pydantic fields of the veriharness envelope: LeafOutput validates the model's answer with them
    envelope.EvidenceRef.locator,
    envelope.EvidenceRef.quote,
    envelope.Claim.claim,
    envelope.Claim.evidence_refs,
    envelope.Claim.confidence,
    envelope.LeafOutput.claims,
    # a pydantic field of the travel backend's state: pydantic's __eq__ compares it with the gold state
    world.Booking.return_flight,
    # TypedDict keys of results.paper.SELF_REFLECTIVE: results/report.py reads them by subscript
    by_name.setting,
    by_name.completion_gain_points,
    by_name.ours_structured,
    by_name.ours_plain,
    # registries import these by their "module:name" string (envs/__init__.py, conditions/__init__.py)
    bfcl_suite.Base,
    bfcl_suite.MissParam,
    bfcl_suite.MissFunc,
    bfcl_suite.LongContext,
    suite.TextWorld,
    veriharness.FAMILY,
    bfcl_import.IMPORTER,  # harness/imports/__init__.py
    # a record field filled by name (harness.recording._fork_fields) and read by its users, not by results/
    types.EpisodeRecord.fork_segment,
    # typer commands: @app.command registers them, typer calls them
    imports.import_,
    power.power_command,
    # called by plugins (docs/plugins.md, "What agent:reader reads"), by no module here
    reader.register_reader,
    listing.list_conditions,
    listing.list_suites,
    reproduce.reproduce_paper,
    # click calls format_commands to list a group's commands in --help (GuardedGroup overrides it)
    common.GuardedGroup.format_commands,
    # Python calls a module's __getattr__ and __dir__ (PEP 562): harness.cli.common's consoles,
    # results' lazy attributes; results sets its module's __class__ to _Package (its __setattr__)
    common.__getattr__,
    results.__getattr__,
    results.__dir__,
    results.__class__,
    # textworld.make reads these GameOptions attributes (envs/textworld/generate.py sets them)
    textworld.GameOptions.nb_rooms,
    textworld.GameOptions.nb_objects,
    textworld.GameOptions.force_recompile,
    # transformers' save_pretrained reads model.hf_quantizer (harness/serving/vllm/local_hf.py clears it)
    by_name.hf_quantizer,
    # the backend sends the optional decoding fields by name (getattr in openai_compat.generate)
    contract.Decoding.stream,
    # used by tests: zombie-aware liveness of a server's processes (tests/harness/serving/backends/, test_cli_serve)
    server_proc.pid_alive,
    # used by tests: the count of live game interpreters, which only zmachine knows (test_textworld_leaks)
    zmachine.open_sessions,
)
