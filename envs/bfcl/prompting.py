"""BFCL's prompting handler's side of the conversation, for `protocol=bfcl` in prompt mode: the system
prompt that lists the functions, the execution results as one user message, the held-back functions'
message. Each is built from `bfcl_eval.constants.default_prompts` as `model_handler.utils` builds it
(that module imports tree_sitter and the rest of BFCL's runners, which are not installed here).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from bfcl_eval.constants import default_prompts as prompts

from envs.bfcl import data
from envs.errors import UserError

# the parts of BFCL's prompt format this module writes, and envs.bfcl.decode reads: Python calls, no
# <TOOLCALL> tag, the docs as JSON
WRITTEN = {"ret_fmt": "python", "tool_call_tag": "False", "func_doc_fmt": "json"}


def _format() -> dict[str, str]:
    """BFCL's default prompt format (`parse_prompt_variation_params` of it): a multi-turn entry's id
    names no format of its own, so every one gets the default (`extract_prompt_format_from_id`)."""
    fmt = dict(parse_qsl(prompts.DEFAULT_SYSTEM_PROMPT_FORMAT))
    if any(fmt.get(k) != v for k, v in WRITTEN.items()):
        raise UserError(
            f"bfcl-eval {data.version()} prompts in {prompts.DEFAULT_SYSTEM_PROMPT_FORMAT!r}; the prompting "
            f"protocol here writes and decodes {WRITTEN} only ({data.INSTALL})"
        )
    return fmt


def system_prompt(docs: list[dict[str, Any]]) -> str:
    """`formulate_system_prompt` for the default format, with `docs` written as BFCL's
    `format_function_doc` writes JSON."""
    fmt = _format()
    style = prompts.PROMPT_STYLE_TEMPLATES[fmt["style"]]
    ret = fmt["ret_fmt"]
    text: str = prompts.PROMPT_TEMPLATE_MAPPING[fmt["prompt_fmt"]].format(
        persona=style["persona"],
        task=style["task"],
        tool_call_format=style["tool_call_no_tag"].format(
            output_format=prompts.OUTPUT_FORMAT_MAPPING[ret], param_types=prompts.PARAM_TYPE_MAPPING[ret]
        ),
        multiturn_behavior=style["multiturn_behavior"],
        available_tools=style["available_tools"].format(
            format=fmt["func_doc_fmt"], functions=json.dumps(docs, indent=4)
        ),
    )
    return text


def with_system_prompt(messages: list[dict[str, Any]], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first turn's messages as `system_prompt_pre_processing_chat_model` leaves them: the prompt
    before an entry's own system message, else a system message of its own."""
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{system_prompt(docs)}\n\n{out[0]['content']}"
        return out
    return [{"role": "system", "content": system_prompt(docs)}, *out]


def results_message(calls: list[str], results: list[str]) -> dict[str, Any]:
    """`_add_execution_results_prompting`: one user message, the `repr` of a tool message per call,
    named by the call's decoded text (`format_execution_results_prompting`)."""
    tools = [{"role": "tool", "name": c, "content": r} for c, r in zip(calls, results, strict=True)]
    return {"role": "user", "content": repr(tools)}


def more_functions(held: list[dict[str, Any]]) -> str:
    """A `miss_func` holdout turn's user message in prompting mode: the held-back docs (as BFCL
    holds them, without the hint) written with `str`, then the FC handler's sentence."""
    text: str = prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
        functions=[data.unhinted(d) for d in held]
    )
    return text
