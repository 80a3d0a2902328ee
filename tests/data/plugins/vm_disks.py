"""A cloud-VM provisioning suite written from docs/plugins.md's reference alone: a disk size with
bounds (`Field(ge=10, le=2048)`), an image whose minimum disk the state knows, and an agent of its own
that asks for twice the disk it should (so that its failures can be forked)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from envs.authoring import Refused, TaskDraft, ToolDef, ToolSuite, register
from envs.contract import ToolCall
from harness.agents import ReferenceAgent, register_agent

IMAGES = {"ubuntu-24.04": 10, "windows-2022": 64, "rhel-9": 20}


@dataclass
class Cloud:
    disks: dict[str, int] = field(default_factory=dict)


class CreateDisk(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    image: str
    disk_gb: int = Field(ge=10, le=2048)


def create_disk(cloud: Cloud, inp: CreateDisk) -> dict:
    if inp.image not in IMAGES:
        raise Refused("unknown_image", f"no image named {inp.image!r}", field="image")
    if inp.disk_gb < IMAGES[inp.image]:
        raise Refused("disk_too_small", f"{inp.image} needs at least {IMAGES[inp.image]} GB", field="disk_gb")
    cloud.disks[inp.name] = inp.disk_gb
    return {"name": inp.name, "disk_gb": inp.disk_gb}


def task(seed: int, cloud: Cloud) -> TaskDraft:
    rng = random.Random(seed)
    image = rng.choice(sorted(IMAGES))
    size = rng.choice([1024, 1536, 2048])
    name = f"vm-{seed}"
    return TaskDraft(
        utterance=f"Create a disk named {name} from {image} with {size} GB.",
        gold=[ToolCall(name="create_disk", arguments={"name": name, "image": image, "disk_gb": size})],
        facts={"name": name, "size": size},
    )


SUITE = register(
    ToolSuite(
        name="vm-disks",
        tools=[
            ToolDef(
                "create_disk",
                "Create a disk from an image.",
                CreateDisk,
                run=create_disk,
                allowed={"image": lambda cloud: sorted(IMAGES)},
            )
        ],
        state=lambda seed: Cloud(),
        task=task,
        success=lambda cloud, draft: cloud.disks.get(draft.facts["name"]) == draft.facts["size"],
        system="You provision cloud VMs. Act only through the tools.",
        n_tasks=10,
    ),
    budget=3,
    description="cloud disks with a bounded size",
)


class Oversize(ReferenceAgent):
    """Asks for twice the disk the reference does on its first call, then plays the reference."""

    kind = "oversize"
    description = "doubles the first call's disk_gb, then plays the reference"

    def decide(self, messages, tools, reference, decoding):
        call = reference[min(self.turns, len(reference) - 1)]
        if self.turns == 0 and isinstance(call, ToolCall):
            return call.model_copy(update={"arguments": {**call.arguments, "disk_gb": call.arguments["disk_gb"] * 2}})
        return call


register_agent("agent:oversize", Oversize)
