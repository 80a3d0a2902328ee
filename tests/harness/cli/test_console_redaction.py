"""Every line the CLI prints passes one redactor: a key a server echoes never reaches the console."""

import subprocess
import sys
from pathlib import Path

from tests.scripted_server import Reply, ScriptedServer

ROOT = Path(__file__).parents[3]
KEY = "sk-Live-Ab12Cd34Ef56"


def test_a_401_that_echoes_the_key_prints_no_key_in_any_case(tmp_path):
    echoed = {"error": {"message": f"Incorrect API key provided: Bearer {KEY}; yours was {KEY.lower()}"}}
    with ScriptedServer(lambda body: Reply(status=401, body=echoed)) as server:
        for args in (
            ["run", "--suite", "bank-disputes", "--conditions", "raw", "--tasks", "1", "--out", str(tmp_path / "r")],
            [
                "run",
                "--suite",
                "bank-disputes",
                "--conditions",
                "raw",
                "--tasks",
                "1",
                "--no-preflight",
                "--out",
                str(tmp_path / "r2"),
            ],
            ["check"],
        ):
            cmd = [sys.executable, "-m", "harness.cli", *args, "--model", "scripted-model", "--endpoint", server.url]
            env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
            done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
            printed = done.stdout + done.stderr
            assert done.returncode != 0 and "HTTP 401" in printed, printed
            assert KEY.lower() not in printed.lower(), printed
            assert "[REDACTED]" in printed, printed
            # the key was set: the hint says it was refused, not that one should be set
            assert "does not accept the key in $OPENAI_API_KEY" in " ".join(printed.split()), printed
    files = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert not any(KEY.lower() in f.lower() for f in files)


def test_a_key_in_a_url_query_or_fragment_is_masked():
    from harness.redact import Redactor

    r = Redactor([KEY])
    text = r.text(f"http://h:8000/v1?api_key=abcd1234&x=1#token=zz99zz99 and {KEY.upper()}")
    assert "abcd1234" not in text and "zz99zz99" not in text and KEY.upper() not in text and "x=1" in text
