from envs.contract import ToolSpec
from harness.serving.backends.parse import parse_tool_calls
from harness.serving.backends.prompt_tools import tools_prompt, with_tools_prompt

MOVE = ToolSpec(
    name="move",
    description="Walk in a direction.",
    parameters={
        "type": "object",
        "properties": {"direction": {"type": "string", "enum": ["north", "south"]}},
        "required": ["direction"],
    },
)
LOOK = ToolSpec(name="look", description="Describe the room.", parameters={"type": "object", "properties": {}})


def test_prompt_names_every_tool_with_its_schema_and_the_format():
    text = tools_prompt([MOVE, LOOK])
    for needle in [
        "- move: Walk in a direction.",
        "- look: Describe the room.",
        '"enum": ["north", "south"]',
        "<tool_call>",
        "</tool_call>",
    ]:
        assert needle in text
    assert tools_prompt([]) == ""


def test_the_format_line_the_prompt_asks_for_is_what_the_parser_reads():
    answer = '<tool_call>{"name": "move", "arguments": {"direction": "north"}}</tool_call>'
    assert '<tool_call>{"name": ' in tools_prompt([MOVE])
    assert parse_tool_calls(answer, ["move"]).calls[0].parse_mode == "tag"


def test_with_tools_prompt_appends_to_the_system_message_without_mutating():
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    out = with_tools_prompt(msgs, [MOVE])
    assert out[0]["content"].startswith("Be brief.\n\nYou can use these tools") and msgs[0]["content"] == "Be brief."
    no_system = with_tools_prompt([{"role": "user", "content": "hi"}], [MOVE])
    assert [m["role"] for m in no_system] == ["system", "user"]
