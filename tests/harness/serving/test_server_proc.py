"""Managed server processes: started, waited for, stopped with nothing left, on every way out.

The child here is Python's own http.server serving a static /v1/models file: a real process and
a real HTTP server, so start-up, readiness and shutdown are exercised without a model.
"""

import asyncio
import json
import sys
import textwrap
import time

import pytest

from harness.errors import ServerStartError
from harness.serving.server_proc import ManagedServer, free_port, pid_alive

# an http.server that also answers /health, optionally ignores SIGTERM and spawns a grandchild
CHILD = textwrap.dedent(
    """
    import http.server, json, os, signal, subprocess, sys
    port, ignore_term = int(sys.argv[1]), sys.argv[2] == "1"
    if ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(os.environ["GRANDCHILD_FILE"], "w").write(str(grandchild.pid))
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "m1"}, {"id": "m2"}]}).encode()
            self.send_response(200); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
    """
)


def _server(tmp_path, ignore_term=False, **kw):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    port = free_port()
    server = ManagedServer(
        [sys.executable, str(script), str(port), "1" if ignore_term else "0"],
        host="127.0.0.1",
        port=port,
        startup_timeout_s=30,
        **kw,
    )
    server.env = {"GRANDCHILD_FILE": str(tmp_path / "grandchild.pid")}
    return server


def _grandchild(tmp_path):
    return int((tmp_path / "grandchild.pid").read_text())


def test_start_wait_and_stop_leave_no_process(tmp_path):
    server = _server(tmp_path)
    with server:
        assert server.alive() and server.model_names == ["m1", "m2"]
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        pid, grandchild = server.pid, _grandchild(tmp_path)
        assert pid_alive(pid) and pid_alive(grandchild)
    assert not pid_alive(pid) and not pid_alive(grandchild)


def test_a_server_ignoring_sigterm_is_killed_after_the_timeout(tmp_path):
    server = _server(tmp_path, ignore_term=True, stop_timeout_s=1.0)
    server.start()
    pid = server.pid
    t0 = time.monotonic()
    server.stop()
    assert not pid_alive(pid) and 0.9 < time.monotonic() - t0 < 10


def test_keyboard_interrupt_inside_the_block_stops_the_server(tmp_path):
    server = _server(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        with server:
            pid = server.pid
            raise KeyboardInterrupt
    assert not pid_alive(pid) and not pid_alive(_grandchild(tmp_path))


def test_async_context_manager(tmp_path):
    server = _server(tmp_path)

    async def main():
        async with server:
            return server.pid, server.model_names

    pid, names = asyncio.run(main())
    assert names == ["m1", "m2"] and not pid_alive(pid)


def test_a_child_that_exits_at_once_is_a_start_error_with_its_log(tmp_path):
    server = ManagedServer(
        [sys.executable, "-c", "import sys; print('bad flag --frob'); sys.exit(3)"],
        host="127.0.0.1",
        port=free_port(),
        startup_timeout_s=30,
    )
    with pytest.raises(ServerStartError, match=r"(?s)exited with code 3.*bad flag --frob"):
        server.start()


def test_a_child_that_never_answers_times_out_and_is_stopped(tmp_path):
    server = ManagedServer(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        host="127.0.0.1",
        port=free_port(),
        startup_timeout_s=1.5,
    )
    with pytest.raises(ServerStartError, match="did not answer /v1/models within 2 s"):
        server.start()
    assert not pid_alive(server.pid)


def test_a_server_object_starts_once(tmp_path):
    server = _server(tmp_path)
    with server:
        with pytest.raises(RuntimeError, match="already started"):
            server.start()
    json.dumps(server.model_names)


def test_cancelling_an_async_start_stops_the_child():
    server = ManagedServer(
        [sys.executable, "-c", "import time; time.sleep(600)"], host="127.0.0.1", port=free_port(), startup_timeout_s=60
    )

    async def enter():
        async with server:
            pass

    async def main():
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(enter(), 1.0)

    asyncio.run(main())
    assert server.pid is not None and not pid_alive(server.pid)


def test_a_clean_stop_removes_its_temporary_log_and_a_failure_keeps_it(tmp_path):
    """Every run starts servers: their temporary logs must not pile up in /tmp, but a log that a
    failure names is what the user reads next."""
    server = _server(tmp_path)
    with server:
        log = server.log_path
        assert log is not None and log.exists()
    assert not log.exists()
    given = _server(tmp_path, log_path=tmp_path / "kept.log")  # a log the caller named is theirs
    with given:
        pass
    assert (tmp_path / "kept.log").exists()
    failed = ManagedServer(
        [sys.executable, "-c", "import sys; print('bad flag --frob'); sys.exit(3)"],
        host="127.0.0.1",
        port=free_port(),
        startup_timeout_s=30,
    )
    with pytest.raises(ServerStartError) as info:
        failed.start()
    assert failed.log_path is not None and failed.log_path.exists() and str(failed.log_path) in str(info.value)
    failed.log_path.unlink()
