"""Which servers the harness starts for a run, on which GPUs, and in which phase.

A phase is a set of servers alive at once. Models that fit together run in one phase: each vLLM
server on GPUs of its own (the default: a neighbour's load never enters a model's latencies, and
no vLLM profiles its memory beside another), or with `--share-gpus` sharing a GPU with others,
their `--gpu-memory-utilization`s split by need and never summing over `MAX_UTILIZATION` on any
GPU; the rest wait for a later phase. A server is given the GPU whose free share is largest (so
two models on two GPUs get one each). A model whose estimate does not fit one GPU gets its
preset's tensor-parallel size doubled until it fits. `--max-servers N` caps the servers of a
phase, llama.cpp's (`local`, `gguf:`) included. Models the harness does not serve (an
`--endpoint`'s, reference agents, in-process vLLM) play in the first phase. The runner plays a
phase's episodes, stopping each server when its model's episodes are done, then starts the next
phase; `run --dry-run` prints the plan.
"""

from __future__ import annotations

import math
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.errors import UserError
from harness.run_spec import RunSpec
from harness.serving.gpus import Estimate, Inventory, estimate, fraction_up, inventory
from harness.serving.kinds import ServerKind, resolve
from harness.serving.server_proc import free_port
from harness.serving.vllm.presets import launcher, shown_row, vllm_command

# what the servers sharing one GPU may ask for together; a server alone on its GPUs asks for SOLO
MAX_UTILIZATION = 0.95
SOLO_UTILIZATION = 0.90  # vLLM's own default


class PlacementError(UserError):
    """A model that fits on no GPU of the inventory, whatever its tensor-parallel size."""


@dataclass
class ServerPlan:
    model: str
    kind: ServerKind
    gpus: tuple[str, ...] = ()  # CUDA_VISIBLE_DEVICES of the server; () on the CPU
    utilization: float | None = None  # --gpu-memory-utilization
    tp: int = 1
    estimate: Estimate | None = None
    need: float = 0.0  # the estimate as a share of its GPU


@dataclass
class Phase:
    servers: list[ServerPlan] = field(default_factory=list)
    # models the harness does not serve, played alongside (first phase only)
    others: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return [s.model for s in self.servers] + self.others


@dataclass
class Plan:
    phases: list[Phase]
    inventory: Inventory
    notes: list[str] = field(default_factory=list)

    def server(self, model: str) -> ServerPlan | None:
        return next((s for p in self.phases for s in p.servers if s.model == model), None)


def server_kind(name: str, spec: RunSpec) -> ServerKind | None:
    """The server the harness starts for a model of this spec; None where it starts none."""
    if spec.endpoints or spec.backend != "openai":
        return None
    return resolve(name).kind.server


def plan(spec: RunSpec, models: list[str], inv: Inventory | None = None) -> Plan:
    """The phases that play `models` (those with episodes left), in the spec's order within a kind."""
    kinds = {m: server_kind(m, spec) for m in models}
    vllm = [m for m in models if kinds[m] == "vllm"]
    llama = [m for m in models if kinds[m] == "llama.cpp"]
    others = [m for m in models if kinds[m] is None]
    if inv is None:
        inv = inventory(spec.gpus, spec.gpu_memory_gib) if vllm else Inventory((), "not needed")
    cap = spec.max_servers
    notes: list[str] = []
    if vllm and not inv.gpus:
        notes.append(
            f"no GPU inventory ({'; '.join(inv.notes)}): vLLM servers are started without GPU placement or "
            "memory estimates"
        )
        phases = _chunks([ServerPlan(m, "vllm", tp=_preset(m).tp) for m in vllm], cap)
    else:
        phases = _gpu_phases([_sized(m, inv) for m in vllm], inv, cap, spec.share_gpus)
    for server in (ServerPlan(m, "llama.cpp") for m in llama):
        room = next((p for p in phases if cap is None or len(p.servers) < cap), None)
        if room is None:
            room = Phase()
            phases.append(room)
        room.servers.append(server)
    if not phases:
        phases.append(Phase())
    phases[0].others = others
    return Plan(phases, inv, notes)


def _preset(model: str) -> Any:
    return resolve(model).preset


def _chunks(servers: list[ServerPlan], cap: int | None) -> list[Phase]:
    step = cap or max(1, len(servers))
    return [Phase(servers[i : i + step]) for i in range(0, len(servers), step)]


def _sized(model: str, inv: Inventory) -> ServerPlan:
    """The server of a preset with its estimate and tensor-parallel size: the preset's, doubled
    until a GPU of the inventory holds its share (a preset without a size takes whole GPUs)."""
    row = _preset(model)
    largest = max(g.memory_gib * MAX_UTILIZATION - g.used_gib for g in inv.gpus)
    tp = row.tp
    if row.size is None:
        return ServerPlan(model, "vllm", tp=tp, need=SOLO_UTILIZATION)
    while True:
        est = estimate(row.size, quantization=row.quantization, max_model_len=row.max_model_len, tp=tp)
        if est.per_gpu_gib <= largest:
            break
        if tp * 2 > len(inv.gpus):
            raise PlacementError(
                f"{model} needs {est.per_gpu_gib:.1f} GiB per GPU at tensor parallel {tp} ({est.describe()}); "
                f"the GPUs here hold {largest:.1f} GiB each at most ({inv.source}). Use more GPUs or a "
                "quantized preset"
            )
        tp *= 2
    return ServerPlan(model, "vllm", tp=tp, estimate=est)


def _gpu_phases(servers: list[ServerPlan], inv: Inventory, cap: int | None, sharing: bool) -> list[Phase]:
    """Phases of servers on GPUs: the largest needs first, each on the GPUs with the most room.
    Unless `sharing`, every server takes whole GPUs; so does one of tensor parallel > 1, or one
    without an estimate."""
    order = sorted(servers, key=lambda s: -(s.estimate.per_gpu_gib * s.tp if s.estimate else math.inf))
    limit = {g.id: MAX_UTILIZATION - g.used_gib / g.memory_gib for g in inv.gpus}
    phases: list[Phase] = []
    while order:
        room = dict(limit)
        phase, left = Phase(), []
        for s in order:
            whole = not sharing or s.estimate is None or s.tp > 1

            def share(g: str, s: ServerPlan = s) -> float:
                est = s.estimate
                return fraction_up(est.per_gpu_gib, inv.get(g).memory_gib) if est else SOLO_UTILIZATION

            fits = [g for g in room if (room[g] >= limit[g] - 1e-9 if whole else room[g] >= share(g) - 1e-9)]
            fits.sort(key=lambda g: -room[g])
            if (cap is not None and len(phase.servers) >= cap) or len(fits) < s.tp:
                left.append(s)
                continue
            s.gpus = tuple(sorted(fits[: s.tp], key=[g.id for g in inv.gpus].index))
            s.need = max(share(g) for g in s.gpus)
            for g in s.gpus:
                room[g] = 0.0 if whole else room[g] - share(g)
            phase.servers.append(s)
        if not phase.servers:  # cannot happen: every server fits an empty phase (`_sized`)
            raise PlacementError(f"no GPU room for {', '.join(s.model for s in left)}")
        _split(phase, inv)
        phases.append(phase)
        order = left
    return phases


def _split(phase: Phase, inv: Inventory) -> None:
    """Each server's --gpu-memory-utilization: alone on its GPUs, SOLO (or its need, if more);
    sharing a GPU, its need plus a share of the GPU's spare room, in proportion to its need."""
    on: dict[str, list[ServerPlan]] = {}
    for s in phase.servers:
        for g in s.gpus:
            on.setdefault(g, []).append(s)
    for s in phase.servers:
        offers = []
        for g in s.gpus:
            gpu, sharing = inv.get(g), on[g]
            limit = MAX_UTILIZATION - gpu.used_gib / gpu.memory_gib
            target = min(limit, max(SOLO_UTILIZATION, sum(x.need for x in sharing)))
            total = sum(x.need for x in sharing)
            offers.append(math.floor(target * s.need / total * 100 + 1e-9) / 100)
        s.utilization = max(s.need, min(offers))


def commands(server: ServerPlan, spec: RunSpec, port: int) -> tuple[list[str], dict[str, str]]:
    """The exact command and the environment (beyond the harness's own) a server starts with."""
    if server.kind == "llama.cpp":
        return [sys.executable, "-m", "harness.serving.llama.entry", "--config_file", "CONFIG.json"], {
            "OMP_WAIT_POLICY": "PASSIVE"
        }

    native = spec.tool_mode == "native"
    row = shown_row(_preset(server.model), native)
    cmd = vllm_command(
        row,
        tp=server.tp,
        port=port,
        native_tools=native,
        gpu_memory_utilization=server.utilization,
        launcher=launcher(),
    )
    env = {**row.env, **({"CUDA_VISIBLE_DEVICES": ",".join(server.gpus)} if server.gpus else {})}
    return cmd, env


def _where(s: ServerPlan) -> str:
    if s.kind == "llama.cpp":
        return f"{s.model} (llama.cpp, CPU)"
    if not s.gpus:
        return f"{s.model} (vLLM, no GPU placement)"
    gpus = ",".join(s.gpus)
    memory = f", ~{s.estimate.per_gpu_gib:.1f} GiB" if s.estimate else ""
    return f"{s.model} on GPU {gpus} (--gpu-memory-utilization {s.utilization:.2f}{memory}, tp {s.tp})"


def describe_phase(phase: Phase, number: int, total: int) -> str:
    """One line: the servers a phase starts, where."""
    parts = [_where(s) for s in phase.servers] + phase.others
    return f"phase {number}/{total}: " + ("; ".join(parts) or "nothing to start")


def _missing_files(command: list[str]) -> list[str]:
    """What a command names that is not on this machine (a preset's chat template lives in vLLM's
    source tree, not in its wheel): the server would not start as planned."""
    out = []
    for flag, value in zip(command, command[1:], strict=False):
        if flag == "--chat-template" and not Path(value).is_file():
            out.append(
                f"chat template {value} is not on this machine (it is part of vLLM's source tree, not its "
                "wheel): set VLLM_SOURCE_DIR to a vLLM checkout of your version, or pass --chat-template PATH"
            )
    return out


def to_json(placed: Plan, spec: RunSpec) -> dict[str, Any]:
    """The plan as `run --dry-run --format json` prints it."""
    phases = []
    for phase in placed.phases:
        servers = []
        for s in phase.servers:
            command, env = commands(s, spec, free_port())
            servers.append(
                {
                    "model": s.model,
                    "server": s.kind,
                    "gpus": list(s.gpus),
                    "gpu_memory_utilization": s.utilization,
                    "tp": s.tp,
                    "memory_gib": round(s.estimate.per_gpu_gib, 2) if s.estimate else None,
                    "estimate": None
                    if s.estimate is None
                    else {
                        "weights_gib": round(s.estimate.weights_gib, 2),
                        "kv_gib": round(s.estimate.kv_gib, 2),
                        "runtime_gib": s.estimate.runtime_gib,
                        "inputs": s.estimate.inputs,
                    },
                    "command": command,
                    "env": env,
                    "warnings": _missing_files(command),
                }
            )
        phases.append({"servers": servers, "not_served": phase.others})
    inv = placed.inventory
    return {
        "gpus": [
            {"id": g.id, "memory_gib": round(g.memory_gib, 2), "used_gib": round(g.used_gib, 2)} for g in inv.gpus
        ],
        "gpu_source": inv.source,
        "notes": placed.notes,
        "phases": phases,
    }


def render(placed: Plan, spec: RunSpec) -> str:
    """The plan as `run --dry-run` prints it: GPUs, each estimate and its inputs, each phase's
    servers with the exact command and environment."""
    data = to_json(placed, spec)
    inv = placed.inventory
    lines = [
        "GPUs: "
        + (", ".join(f"{g.id} ({g.memory_gib:.1f} GiB, {g.used_gib:.1f} in use)" for g in inv.gpus) or "none")
        + f" [{inv.source}]"
    ]
    lines += [f"note: {n}" for n in placed.notes]
    for number, (phase, shown) in enumerate(zip(placed.phases, data["phases"], strict=True), start=1):
        lines.append(describe_phase(phase, number, len(placed.phases)))
        for s, row in zip(phase.servers, shown["servers"], strict=True):
            if s.estimate is not None:
                lines.append(f"  {s.model}: {s.estimate.describe()}")
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in row["env"].items())
            lines.append(f"  $ {env + ' ' if env else ''}{shlex.join(row['command'])}")
            lines += [f"  warning: {w}" for w in row["warnings"]]
    lines.append("(ports are taken free when each server starts; nothing was written)")
    return "\n".join(lines)
