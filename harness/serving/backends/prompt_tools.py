"""Prompt mode: the system-prompt block that describes the tools to a model that has no tools API.

The answer format asked for here is the one `harness.serving.backends.parse` reads first (`<tool_call>`
tags); the parser also accepts the fenced and bare JSON that models write anyway.
"""

from __future__ import annotations

import json
from typing import Any

from envs.contract import ToolSpec

_FORMAT = '<tool_call>{"name": "TOOL_NAME", "arguments": {ARGUMENTS}}</tool_call>'


def _schema(parameters: dict) -> str:
    # compact JSON: small local models have 2-4k tokens of context
    return json.dumps(parameters, separators=(", ", ": "), ensure_ascii=False)


def tools_prompt(tools: list[ToolSpec]) -> str:
    """Describe `tools` and the required call format, to append to the system message."""
    if not tools:
        return ""
    lines = ["You can use these tools. Each tool is listed with what it does and the JSON schema of its arguments:"]
    for tool in tools:
        lines.append(f"- {tool.name}: {tool.description.strip()}")
        lines.append(f"  arguments schema: {_schema(tool.parameters)}")
    lines += [
        "",
        # no filled-in example: a small model copies example values verbatim
        "To use a tool, answer with exactly one line in this format and nothing else:",
        _FORMAT,
        "The arguments must be a JSON object that matches the tool's schema, with double-quoted keys and strings.",
        "Do not put the call in a code block. Call one tool per answer and wait for its result.",
    ]
    return "\n".join(lines)


def with_tools_prompt(messages: list[dict[str, Any]], tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """A copy of `messages` with the tools block appended to the system message (or as one)."""
    block = tools_prompt(tools)
    out = [dict(m) for m in messages]
    if not block:
        return out
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content') or ''}\n\n{block}"
    else:
        out.insert(0, {"role": "system", "content": block})
    return out
