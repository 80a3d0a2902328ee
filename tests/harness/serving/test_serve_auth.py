"""A served model is never an open door: a key beyond loopback, and the key never shown."""

from __future__ import annotations

import httpx2
import pytest
from typer.testing import CliRunner

from envs.errors import UserError
from harness.cli import app
from harness.serving.llama.local import LocalServer
from harness.serving.serve_auth import is_loopback, serve_key

KEY = "serve-key-5f0c2b9e8d7a6b5c"


@pytest.mark.parametrize(
    "host,loop",
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("example.org", False),
    ],
)
def test_loopback(host, loop):
    assert is_loopback(host) is loop


def test_a_key_is_required_beyond_loopback_unless_waived(monkeypatch):
    monkeypatch.delenv("REPAIR_HARNESS_SERVE_KEY", raising=False)
    assert serve_key("127.0.0.1") is None
    with pytest.raises(UserError, match="export REPAIR_HARNESS_SERVE_KEY="):
        serve_key("0.0.0.0")
    assert serve_key("0.0.0.0", insecure_no_key=True) is None
    monkeypatch.setenv("REPAIR_HARNESS_SERVE_KEY", KEY)
    assert serve_key("0.0.0.0") == KEY


def test_vllm_dry_run_beyond_loopback_needs_the_variable_and_never_shows_its_value(monkeypatch):
    monkeypatch.delenv("REPAIR_HARNESS_SERVE_KEY", raising=False)
    args = ["serve", "vllm", "--preset", "qwen2.5-7b", "--host", "0.0.0.0", "--dry-run"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "REPAIR_HARNESS_SERVE_KEY" in refused.output
    monkeypatch.setenv("REPAIR_HARNESS_SERVE_KEY", KEY)
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert 'VLLM_API_KEY="$REPAIR_HARNESS_SERVE_KEY" vllm serve' in shown.output
    assert KEY not in shown.output and "--api-key" not in shown.output


@pytest.mark.slow
@pytest.mark.extra("local")
def test_a_keyed_server_on_all_interfaces_refuses_requests_without_the_key():
    """Bound to 0.0.0.0, talked to only through 127.0.0.1."""
    with LocalServer(host="0.0.0.0", api_key=KEY) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert KEY not in " ".join(server.command)
        body = {"model": "smollm2-135m", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
        with httpx2.Client(timeout=60) as client:
            assert client.get(f"{server.base_url}/models").status_code == 401
            assert client.post(f"{server.base_url}/chat/completions", json=body).status_code == 401
            wrong = client.get(f"{server.base_url}/models", headers={"Authorization": "Bearer not-the-key"})
            assert wrong.status_code == 401
            keyed = {"Authorization": f"Bearer {KEY}"}
            assert client.get(f"{server.base_url}/models", headers=keyed).status_code == 200
            answer = client.post(f"{server.base_url}/chat/completions", json=body, headers=keyed)
            assert answer.status_code == 200 and answer.json()["choices"]
        assert KEY not in server.log_path.read_text(errors="replace")
