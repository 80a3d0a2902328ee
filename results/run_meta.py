"""run.json as every reader takes it (`run`, `report`, `export`, `fork`, an import): the fields
readers act on are of their types, or the file is damaged, one verdict and one message for all."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from results.errors import RecordsError
from results.rundir import PathLike, meta_file, not_regular


class _Grid(BaseModel):
    """The fields of run.json's spec that readers act on, each of its type where present."""

    model_config = ConfigDict(extra="allow")
    suite: StrictStr | None = None
    models: list[StrictStr] | None = None
    conditions: list[StrictStr] | None = None
    budgets: list[StrictInt] | None = None
    sample_seeds: list[StrictInt] | None = None
    tasks: StrictInt | None = None
    task_ids: list[StrictStr] | None = None
    fork: dict[str, Any] | None = None


class _Session(BaseModel):
    """The fields of a session that readers act on (`report`'s notes, an import's release)."""

    model_config = ConfigDict(extra="allow")
    served: dict[str, dict[str, Any] | None] | None = None
    concurrency: dict[str, Any] | None = None
    imported: dict[str, Any] | None = None


class RunMeta(BaseModel):
    """run.json as every reader takes it (`run`, `report`, `export`, `fork`): the fields present
    are of their types, or the file is damaged, one verdict for all of them."""

    model_config = ConfigDict(extra="allow")
    run_id: StrictStr | None = None
    identity_hash: StrictStr | None = None
    spec: _Grid | None = None
    sessions: list[_Session] | None = None
    plugins: list[dict[str, Any]] | None = None
    execution: dict[str, Any] | None = None
    moving_errors: StrictStr | None = None


def read_meta(run_dir: PathLike) -> dict[str, Any] | None:
    """run.json as a dict, its fields checked (`RunMeta`); None where it is absent."""
    meta = meta_file(run_dir)
    if not meta.exists():
        return None
    if kind := not_regular(meta):  # a folder raised IsADirectoryError; a FIFO waits for a writer forever
        raise RecordsError(f"{meta} is {kind} where the run keeps its run.json: move it away or use another --out")
    try:
        data = json.loads(meta.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, nested too deep
        raise RecordsError(
            f"{meta}: not valid JSON ({getattr(e, 'msg', e)}); move it away or use another --out"
        ) from None
    if not isinstance(data, dict):
        raise RecordsError(f"{meta}: holds {type(data).__name__}, not a JSON object; move it away or use another --out")
    try:
        RunMeta.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise RecordsError(f"{meta}: {where}: {err['msg']}; the file is damaged: move it away or restore it") from None
    return data


def check_metas(run_dirs: Iterable[PathLike]) -> None:
    """Every run directory's run.json readable (`read_meta`), or one RecordsError with a line for
    each damaged one: a reader of many runs (`report`, `plot`, `export`) names them all at once,
    not the first only, so that they are not mended one failed command at a time."""
    damaged = []
    for run_dir in run_dirs:
        try:
            read_meta(run_dir)
        except RecordsError as exc:
            damaged.append(str(exc))
    if damaged:
        raise RecordsError("\n".join(damaged))  # one line each, as a spec's errors (harness.spec)
