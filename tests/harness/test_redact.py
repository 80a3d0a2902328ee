"""The key is masked however it was cut or rewritten before it reached the redactor (issue 57):
a start or an end of it left by a cut, any case, separators normalised, percent- or base64-encoded;
and every text the serving layer cuts is masked before the cut."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from harness.redact import MASK, Redactor, cut, remember
from harness.runner import run
from harness.spec import build_spec
from tests.scripted_server import Reply, ScriptedServer, call

KEY = "sk-redteam-secret-0123456789ABCDEF"


def forms(key: str) -> dict[str, str]:
    """Every form of the key issue 57 found written: what no file and no console may hold."""
    return {
        "whole": key,
        "lower": key.lower(),
        "upper": key.upper(),
        "normalised": key.lower().replace("-", "_"),
        "start": key[:-4],
        "end": key[4:],
        "percent": "".join(f"%{b:02x}" for b in key.encode()),
        "percent upper": quote(key.upper(), safe=""),
        "base64": base64.b64encode(key.encode()).decode(),
        "base64 after 1": base64.b64encode(b"u" + key.encode()).decode(),
        "base64 after 2": base64.b64encode(b"u:" + key.encode()).decode(),
        "base64 url": base64.urlsafe_b64encode(b"\xff\xfe" + key.encode()).decode(),
    }


def leaked(text: str, key: str = KEY) -> list[str]:
    """The forms of `key` (as found by a search for each: in any case, 8 characters of it or more)
    that `text` holds."""
    low = text.lower()
    found = [name for name, form in forms(key).items() if form[2:-2].lower() in low and "base64" not in name]
    for name in ("base64", "base64 after 1", "base64 after 2"):
        if forms(key)[name][4:-4] in text:
            found.append(name)
    # the key's first or last 8 characters, in its normalised form
    norm, k = low.replace("_", "-"), key.lower()
    found += [f"fragment {part!r}" for part in (k[:8], k[-8:]) if part in norm]
    return found


@pytest.mark.parametrize("name", list(forms(KEY)))
def test_every_form_of_the_key_is_masked_and_never_called_clean(name):
    redactor = Redactor([KEY])
    text = f"the server said: {forms(KEY)[name]}; fix it"
    assert not leaked(redactor.text(text)), redactor.text(text)
    assert MASK in redactor.text(text) and redactor.text(text).endswith("; fix it")
    assert not redactor.clean_json(json.dumps({"m": text}, ensure_ascii=False))


@pytest.mark.parametrize("at", [8, 9, 20, 33])
def test_a_key_cut_at_any_point_leaves_nothing_of_it(at):
    redactor = Redactor([KEY])
    assert not leaked(redactor.text(f"x {KEY[:at]}"))
    assert not leaked(redactor.text(f"{KEY[-at:]} y"))


def test_a_key_longer_than_a_block_is_masked_wherever_it_was_cut():
    key = "eyJ" + "".join(f"{i:03d}q" for i in range(150))  # 603 characters, like a JWT
    redactor = Redactor([key])
    for at in (8, 150, 199, 200, 201, 350, 599, 603):
        kept = redactor.text(f"[{key[:at]}]")
        assert key[:8] not in kept and all(key[i : i + 40] not in kept for i in range(0, at - 40)), (at, kept)


def test_ordinary_text_is_left_alone_and_a_fragment_in_a_public_name_is_kept():
    redactor = Redactor([KEY], public=("sk-redteam-model",))
    text = "redteam secret 0123 ABCDEF sk-redteam-model, and sk-"
    assert redactor.text(text) == text
    assert redactor.clean_json(json.dumps({"m": "hello, nothing here"}))


def test_cut_masks_before_it_cuts():
    remember(KEY)
    cut_text = cut("x" * 280 + KEY, 300)
    assert not leaked(cut_text) and cut_text.startswith("x" * 280)


def test_a_key_cut_by_a_servers_error_message_reaches_no_file(tmp_path, monkeypatch, capsys):
    """A 401 and a 500 whose message puts the key across the 300-character cut, and a 200 with
    no choices across the 500-character one."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for status, pad in ((401, 290), (500, 285), (200, 480)):
        body = {"error": {"message": "x" * pad + f" {KEY} tail"}}
        with ScriptedServer(lambda b, body=body, status=status: Reply(status=status, body=body)) as server:
            spec = build_spec(
                {
                    "suite": "bank-disputes",
                    "models": ["scripted-model"],
                    "endpoints": [server.url],
                    "conditions": ["raw"],
                    "tasks": 1,
                    "out": str(tmp_path / str(status)),
                    "tool_mode": "native",
                    "max_retries": 0,
                }
            )
            asyncio.run(run(spec))
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file() and p.name != ".lock")
    assert "xxxxx" in written and not leaked(written), leaked(written)
    printed = capsys.readouterr()
    assert not leaked(printed.out + printed.err)


def test_a_key_sent_back_as_a_choice_is_masked_in_its_normalised_form(tmp_path, monkeypatch):
    """The model answers with the key as the reason a card is blocked: the contract lower-cases it
    and writes its '-' as '_' before it reaches the transcript (29 such copies before issue 57)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    args = {"card_last4": "1234", "reason": KEY.upper()}
    with ScriptedServer(lambda b: Reply(text=None, tool_calls=[call("block_card", args)])) as server:
        spec = build_spec(
            {
                "suite": "tools-bank",
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["allowed_json"],
                "tasks": 1,
                "out": str(tmp_path / "run"),
                "tool_mode": "native",
                "max_retries": 0,
            }
        )
        asyncio.run(run(spec))
    written = "".join(p.read_text() for p in Path(spec.out).rglob("*") if p.is_file() and p.name != ".lock")
    assert "block_card" in written and not leaked(written), leaked(written)


def test_the_key_in_every_form_reaches_no_file_and_no_console_of_run_fork_export_show(tmp_path):
    """Issue 57's sweep: a server whose answers echo the key whole, lower-cased, normalised, cut,
    percent- and base64-encoded, as a choice argument, in a 500's message across its cut; then a
    fork, both exports, show, report and check. No form of the key anywhere."""
    import os
    import subprocess
    import sys

    echoed = " ".join(f"{name}={form}" for name, form in forms(KEY).items())
    count = [0]

    def reply(body):
        count[0] += 1
        if count[0] % 3 == 0:
            return Reply(status=500, body={"error": {"message": "y" * 290 + KEY}})
        args = {"card_last4": "1234", "reason": f"{KEY.upper()} {echoed}"}
        return Reply(text=f"{echoed} {'x' * 19_990}{KEY}", tool_calls=[call("block_card", args)])

    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(Path(__file__).parents[2])}
    printed = []
    with ScriptedServer(reply) as server:
        served = ["--model", "scripted-model", "--endpoint", server.url, "--no-preflight"]
        for args in (
            ["run", "--suite", "tools-bank", *served, "--conditions", "allowed_json", "--tasks", "3", "--out", "r"],
            ["fork", "r", *served, "--conditions", "raw", "--out", "f"],
            ["export", "r", "--parquet", "e.parquet", "--inspect", "insp"],
            ["show", "r"],
            ["report", "r"],
            ["check", "--model", "scripted-model", "--endpoint", server.url],
        ):
            cmd = [sys.executable, "-m", "harness.cli", *args]
            done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            printed.append(done.stdout + done.stderr)
    assert len((tmp_path / "r" / "records.jsonl").read_text().splitlines()) == 3
    assert (tmp_path / "e.parquet").is_file() and any((tmp_path / "insp").iterdir())
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert not leaked(path.read_bytes().decode("utf-8", "replace")), path
    assert not leaked("\n".join(printed)), printed
