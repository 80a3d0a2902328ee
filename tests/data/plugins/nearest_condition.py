"""A condition of one's own (a renderer with its own wording) and the parser that teaches
agent:reader to read it (docs/plugins.md, "What agent:reader reads")."""

import re

from conditions import register_condition
from harness.agents.reader import register_reader


def nearest(violation, cut):
    options = " | ".join(violation.allowed) or "nothing listed"
    return f"Nope: {violation.location or 'the call'} cannot be {violation.observed!r}. Pick from: {options}"


register_condition("nearest", nearest, "the location, the value sent and the options, in a wording of its own")

_NEAREST = re.compile(r"^Nope: (\S+) cannot be .*\. Pick from: (.*)$")


def read_nearest(text):
    items = []
    for line in text.splitlines():
        m = _NEAREST.match(line.strip())
        if m and m.group(2) != "nothing listed":
            items.append((m.group(1), m.group(2).split(" | ")))
    return items


register_reader("nearest", read_nearest)
