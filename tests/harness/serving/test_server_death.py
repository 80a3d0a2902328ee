"""A server the harness started that dies is reported as what killed it, where its log is, the fix.

The children here are real processes that die for real (a signal sent to themselves, an exit);
the embedded llama.cpp server killed mid-run is in tests/harness/cli/test_server_death.py.
"""

import asyncio
import os
import signal
import sys
import textwrap
import time

import pytest

from envs.contract import Decoding
from harness.errors import HarnessError, ServerDied, ServerStartError
from harness.serving.backends.openai_compat import OpenAIBackend
from harness.serving.llama.local import LlamaServer
from harness.serving.server_death import exit_words, signal_words
from harness.serving.server_proc import ManagedServer, free_port


def test_signals_are_named_in_words_for_the_kind_of_server():
    assert signal_words(signal.SIGILL, "llama.cpp") == (
        "SIGILL (illegal instruction: this llama.cpp build uses CPU instructions this machine cannot run)"
    )
    assert signal_words(signal.SIGILL).startswith("SIGILL (illegal instruction: the server runs CPU instructions")
    assert signal_words(signal.SIGKILL, "llama.cpp").startswith("SIGKILL (killed, often out of memory")
    assert exit_words(-signal.SIGSEGV) == "killed by SIGSEGV (segmentation fault: a crash in the server's native code)"
    assert exit_words(1) == "exited with code 1"
    assert signal_words(63) in ("signal 63", "SIGRTMAX-1")


def test_a_server_killed_by_sigill_while_starting_says_so_with_its_log_and_the_fix(tmp_path):
    server = ManagedServer(
        [
            sys.executable,
            "-c",
            "import os, signal; print('loading the model', flush=True); os.kill(os.getpid(), signal.SIGILL)",
        ],
        host="127.0.0.1",
        port=free_port(),
        startup_timeout_s=30,
        log_path=tmp_path / "server.log",
    )
    with pytest.raises(ServerDied) as died:
        server.start()
    message = str(died.value)
    assert isinstance(died.value, ServerStartError)
    assert "died while starting" in message and "killed by SIGILL (illegal instruction" in message
    assert f"its log: {tmp_path / 'server.log'}; last lines:\n  | loading the model" in message
    assert "\nfix: " in message


def test_the_llama_server_names_its_build_and_the_portable_reinstall(tmp_path):
    server = LlamaServer.__new__(LlamaServer)  # its fix, without loading a model
    fix = server.fix(-signal.SIGILL)
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in fix and "--no-cache-dir" in fix and "--force-reinstall" in fix
    assert "repair-harness doctor" in fix
    assert "memory" in server.fix(-signal.SIGKILL)


CHILD = textwrap.dedent(
    """
    import http.server, json, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "m"}]}).encode()
            self.send_response(200); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    print("serving", flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def _http_server(tmp_path) -> ManagedServer:
    (tmp_path / "child.py").write_text(CHILD)
    port = free_port()
    return ManagedServer(
        [sys.executable, str(tmp_path / "child.py"), str(port)],
        host="127.0.0.1",
        port=port,
        startup_timeout_s=30,
        log_path=tmp_path / "server.log",
    )


def _wait_dead(server: ManagedServer) -> str:
    deadline = time.monotonic() + 10
    while (report := server.died()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert report is not None
    return report


def test_died_is_none_while_it_runs_and_after_we_stop_it(tmp_path):
    server = _http_server(tmp_path)
    with server:
        assert server.died() is None
    assert server.died() is None  # we stopped it: no death to report


def test_a_server_killed_during_the_run_reports_the_signal_in_words(tmp_path):
    server = _http_server(tmp_path)
    with server:
        os.kill(server.pid, signal.SIGKILL)
        report = _wait_dead(server)
    assert "died during the run" in report and "killed by SIGKILL (killed, often out of memory" in report
    assert str(tmp_path / "server.log") in report and "| serving" in report and "memory" in report.split("fix:")[1]


def test_a_call_to_a_dead_server_stops_at_once_with_its_report_not_connection_error(tmp_path):
    server = _http_server(tmp_path)
    asked = []

    def died():
        asked.append(1)
        return server.died()

    async def call():
        backend = OpenAIBackend(server.base_url, "m", max_retries=4, backoff_s=30.0, server_died=died)
        try:
            return await backend.generate([{"role": "user", "content": "hi"}], [], Decoding(max_tokens=4), "prompt")
        finally:
            await backend.aclose()

    with server:
        os.kill(server.pid, signal.SIGKILL)
        _wait_dead(server)
        t0 = time.monotonic()
        with pytest.raises(HarnessError) as failed:
            asyncio.run(call())
        # no backoff was slept: 30 s would have been the first
        assert time.monotonic() - t0 < 20 and len(asked) == 1
    assert (
        failed.value.fatal and "killed by SIGKILL" in str(failed.value) and "Connection error" not in str(failed.value)
    )
