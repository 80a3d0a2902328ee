"""The text tool-call parser: real model answers (tests/data/traces) plus crafted output styles."""

import json
import time
from pathlib import Path

import pytest

from harness.serving.backends.parse import MAX_DEPTH, parse_tool_calls

TRACES = Path(__file__).parents[3] / "data" / "traces"
TOOLS = {"move", "get_weather", "transfer", "look"}


def _trace_rows(name):
    path = TRACES / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _calls(text, tools=TOOLS):
    return [(c.name, c.arguments, c.parse_mode) for c in parse_tool_calls(text, tools).calls]


# --- real answers (SmolLM2-135M, plan protocol): none is a tool call, none may crash the parser ---


@pytest.mark.parametrize("name", ["smollm2-135m-plan-free.jsonl", "smollm2-135m-plan-json-schema.jsonl"])
def test_real_plan_answers_are_not_tool_calls(name):
    rows = _trace_rows(name)
    assert len(rows) == 96
    for row in rows:
        parsed = parse_tool_calls(row["answer"], TOOLS)
        assert parsed.calls == [], row["answer"][:200]


def test_real_free_answers_sort_into_prose_broken_json_and_fences():
    rows = _trace_rows("smollm2-135m-plan-free.jsonl")
    parsed = [parse_tool_calls(r["answer"], TOOLS) for r in rows]
    prose = [p for r, p in zip(rows, parsed, strict=True) if "{" not in r["answer"]]
    assert prose and all(p.error is None for p in prose)
    # the echoed format line {"commands": ["...", ...]} is an attempt at JSON that does not decode
    echoed = [p for r, p in zip(rows, parsed, strict=True) if '{"commands": ["...", ...]}' in r["answer"]]
    assert echoed and all("broken JSON" in p.error for p in echoed)
    assert sum(p.fenced for p in parsed) == sum("```" in r["answer"] for r in rows) > 0


def test_real_fenced_answer_with_nested_name_keys_is_not_a_call():
    # a fenced, cut-off object whose inner items carry "name": not a tool call, but an error
    row = _trace_rows("smollm2-135m-plan-free.jsonl")[13]
    assert row["answer"].startswith("The text adventure game is not a game of JSON")
    parsed = parse_tool_calls(row["answer"], TOOLS)
    assert parsed.calls == [] and parsed.fenced and parsed.error


def test_real_schema_constrained_answers_are_json_without_a_tool_name():
    for row in _trace_rows("smollm2-135m-plan-json-schema.jsonl"):
        parsed = parse_tool_calls(row["answer"], TOOLS)
        assert "without a tool name (keys: commands)" in parsed.error


# --- crafted answers in the styles real models write ---


def test_hermes_tags_one_and_several():
    assert _calls('<tool_call>\n{"name": "move", "arguments": {"direction": "north"}}\n</tool_call>') == [
        ("move", {"direction": "north"}, "tag")
    ]
    two = (
        '<tool_call>{"name": "look", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "move", "arguments": {"direction": "east"}}</tool_call>'
    )
    assert _calls(two) == [("look", {}, "tag"), ("move", {"direction": "east"}, "tag")]


def test_tag_without_closing_tag_is_tolerated():
    assert _calls('I will move.\n<tool_call>\n{"name": "move", "arguments": {"direction": "west"}}') == [
        ("move", {"direction": "west"}, "tag")
    ]


def test_tag_holding_a_fence_or_prose_only():
    assert _calls('<tool_call>\n```json\n{"name": "look", "arguments": {}}\n```\n</tool_call>') == [("look", {}, "tag")]
    parsed = parse_tool_calls("<tool_call>go north</tool_call>", TOOLS)
    assert parsed.calls == [] and "holds no JSON" in parsed.error


def test_one_broken_tag_beside_a_good_one_is_a_warning():
    parsed = parse_tool_calls(
        '<tool_call>{"name": "look", "arguments": {}}</tool_call><tool_call>{"name": "move",</tool_call>', TOOLS
    )
    assert [c.name for c in parsed.calls] == ["look"]
    assert parsed.error is None and any("broken JSON" in w for w in parsed.warnings)


def test_qwen_coder_fenced_json():
    text = 'Here is the call:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
    parsed = parse_tool_calls(text, TOOLS)
    assert parsed.fenced
    assert _calls(text) == [("get_weather", {"city": "Paris"}, "fenced")]


def test_bare_json_with_leading_and_trailing_prose():
    text = 'Sure! {"name": "transfer", "arguments": {"amount": 5, "to": "bob"}} Let me know if that works.'
    assert _calls(text) == [("transfer", {"amount": 5, "to": "bob"}, "bare")]


def test_two_bare_calls_and_a_list_of_calls():
    two = '{"name": "look", "arguments": {}}\n{"name": "move", "arguments": {"direction": "up"}}'
    assert [c[0] for c in _calls(two)] == ["look", "move"]
    listed = '[{"name": "look", "arguments": {}}, {"name": "move", "arguments": {"direction": "up"}}]'
    assert [c[0] for c in _calls(listed)] == ["look", "move"]


def test_llama_styles():
    assert _calls('{"name": "get_weather", "parameters": {"city": "Oslo"}}') == [
        ("get_weather", {"city": "Oslo"}, "llama")
    ]
    assert _calls('{"type": "function", "name": "get_weather", "parameters": {"city": "Oslo"}}') == [
        ("get_weather", {"city": "Oslo"}, "llama")
    ]
    assert _calls('<|python_tag|>{"name": "look", "parameters": {}}') == [("look", {}, "llama")]
    assert _calls('<function=move>{"direction": "south"}</function>') == [("move", {"direction": "south"}, "llama")]


def test_openai_style_and_arguments_as_json_string():
    text = (
        '{"type": "function", "id": "call_7", '
        '"function": {"name": "move", "arguments": "{\\"direction\\": \\"north\\"}"}}'
    )
    (call,) = parse_tool_calls(text, TOOLS).calls
    assert (call.name, call.arguments, call.id) == ("move", {"direction": "north"}, "call_7")
    assert _calls('{"name": "look", "arguments": ""}') == [("look", {}, "bare")]


def test_mistral_marker():
    assert _calls('[TOOL_CALLS] [{"name": "move", "arguments": {"direction": "down"}}]') == [
        ("move", {"direction": "down"}, "tag")
    ]


def test_unknown_tool_name_is_kept_for_the_env_to_reject():
    assert _calls('{"name": "teleport", "arguments": {"to": "moon"}}') == [("teleport", {"to": "moon"}, "bare")]


def test_tool_names_enable_flat_and_keyed_objects_only_for_known_tools():
    assert _calls('{"name": "move", "direction": "north"}') == [("move", {"direction": "north"}, "bare")]
    assert _calls('{"move": {"direction": "north"}}') == [("move", {"direction": "north"}, "bare")]
    assert _calls('{"name": "Bob", "age": 3}') == []
    assert _calls('{"name": "move", "direction": "north"}', tools=None) == []


def test_broken_json_explains_itself():
    parsed = parse_tool_calls('{"name": "move", "arguments": {"direction": "north"}', TOOLS)
    assert parsed.calls == [] and "broken JSON at character 0" in parsed.error
    single = parse_tool_calls("{'name': 'move', 'arguments': {}}", TOOLS)
    assert "double quotes" in single.error
    bad_args = parse_tool_calls('{"name": "move", "arguments": "north"}', TOOLS)
    assert "not JSON" in bad_args.error
    not_obj = parse_tool_calls('{"name": "move", "arguments": ["north"]}', TOOLS)
    assert "must be a JSON object" in not_obj.error


def test_plain_prose_has_no_calls_and_no_error():
    parsed = parse_tool_calls("I would go north, then take the key {if it is there}.", TOOLS)
    assert parsed == parsed.__class__(calls=[], error=None, fenced=False)


# --- hostile input: never raises, always says what happened ---


def test_huge_answer_is_truncated_and_said_so():
    text = "blah " * 10_000 + '{"name": "look", "arguments": {}}'
    parsed = parse_tool_calls(text, TOOLS, max_chars=20_000)
    assert parsed.truncated and parsed.calls == [] and "only the first 20000" in parsed.error
    early = '{"name": "look", "arguments": {}}' + "x" * 50_000
    got = parse_tool_calls(early, TOOLS)
    assert [c.name for c in got.calls] == ["look"] and got.truncated and got.warnings


def test_binary_answer():
    # a call attempted in binary text is not read
    for text in ["\x1b" * 50 + '{"name": "look"}', '<tool_call>{"name": "look", "arguments": {}}</tool_call>\x00']:
        parsed = parse_tool_calls(text, TOOLS)
        assert parsed.calls == [] and "binary" in parsed.error
    # binary that attempts no call is prose: no call was made, so none is unparseable
    for text in ["\x00\x01\x02\x03 PNG", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "I think\x00 we should look"]:
        parsed = parse_tool_calls(text, TOOLS)
        assert parsed.calls == [] and parsed.error is None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 3000, 20_000])
def test_deeply_nested_json(depth):
    text = '{"name": "move", "arguments": ' + '{"a": ' * depth + "1" + "}" * depth + "}"
    parsed = parse_tool_calls(text, TOOLS, max_chars=10**6)
    assert parsed.calls == [] and "nested" in parsed.error


def test_nested_list_bomb_and_many_fragments_are_fast():
    start = time.perf_counter()
    for text in ["[" * 19_000, '[{"a": ' * 2500, '{"' * 10_000, '{"a": "' * 3000]:
        parsed = parse_tool_calls(text, TOOLS)
        assert parsed.calls == []
    assert time.perf_counter() - start < 5.0


def test_huge_integer_is_an_error_not_a_crash():
    parsed = parse_tool_calls('{"name": "move", "arguments": {"n": ' + "9" * 6000 + "}}", TOOLS)
    assert parsed.calls == [] and parsed.error
