"""What BFCL's OpenAI chat-completions handler (`OpenAICompletionsHandler`) sends, for
`protocol=bfcl`: the tool list as its `convert_to_tool(..., ModelStyle.OPENAI_COMPLETIONS)` builds
it, and the request's sampling keys.

`model_handler.utils`, where `convert_to_tool` lives, imports tree_sitter and BFCL's other parsers,
which are not installed here; the two functions are written again from its source (the tests run
BFCL's own text of them on every entry's functions and compare).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

from envs.contract import Decoding, ToolSpec


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    """`_cast_to_openai_type` with BFCL's own table: a float gets `format` and a sentence, a type
    it does not know becomes a string, nested properties and list items are cast in place (a key
    error where BFCL meets one: its items' types must be in the table)."""
    for key, value in properties.items():
        if "type" not in value:
            properties[key]["type"] = "string"
        else:
            kind = value["type"]
            if kind == "float":
                properties[key]["format"] = "float"
                properties[key]["description"] += " This is a float type value."
            properties[key]["type"] = GORILLA_TO_OPENAPI.get(kind, "string")
        prop = properties[key]
        if prop["type"] in ("array", "object"):
            if "properties" in prop:
                prop["properties"] = _cast(prop["properties"])
            elif "items" in prop:
                items = prop["items"]
                items["type"] = GORILLA_TO_OPENAPI[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = GORILLA_TO_OPENAPI[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast(items["properties"])
    return properties


def tool(doc: dict[str, Any]) -> ToolSpec:
    """One function doc as BFCL's handler sends it (its `response` schema kept, a "." in the name
    written "_"), carried whole in `ToolSpec.wire`."""
    item = copy.deepcopy(doc)
    item["name"] = re.sub(r"\.", "_", item["name"])
    item["parameters"]["type"] = "object"
    item["parameters"]["properties"] = _cast(item["parameters"]["properties"])
    wire = {"type": "function", "function": item}
    return ToolSpec(name=item["name"], description=item["description"], parameters=item["parameters"], wire=wire)


def decoding(run: Decoding) -> Decoding:
    """The run's decoding (BFCL's defaults where the run set none: BfclSuite.run_defaults) as BFCL's
    handler sends it: its keys only (`store: false`, no `tool_choice`, no seed), its reading of an
    answer (Decoding.reading)."""
    return run.model_copy(update={"tool_choice": None, "store": False, "seed": None, "reading": "bfcl"})
