from harness.serving.backends.openai_compat import _flatten_tool_turns
from harness.serving.backends.parse import parse_tool_calls


def test_tool_turns_become_text_the_chat_template_renders():
    messages = [
        {"role": "user", "content": "open it"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "open_dispute", "arguments": '{"reason": "fraud"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": '{"error": "unknown_card"}'},
    ]
    flat = _flatten_tool_turns(messages)
    assert [m["role"] for m in flat] == ["user", "assistant", "user"]
    assert all("tool_calls" not in m for m in flat)
    (call,) = parse_tool_calls(flat[1]["content"]).calls
    assert call.name == "open_dispute" and call.arguments == {"reason": "fraud"}
    assert "unknown_card" in flat[2]["content"]
