"""Running a model server as a child process: start, wait until it answers, stop with nothing left.

Shared by the embedded llama.cpp server (`llama/local.py`) and `vllm serve` (`vllm/presets.py`).
The child gets its own process group, so stopping it also stops the workers it spawned (vLLM
starts engine and worker processes), and a Ctrl-C in the terminal reaches only the harness,
which then stops the server itself.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

from envs.errors import UserError
from harness.errors import ServerDied, ServerStartError
from harness.serving import server_death
from harness.serving.serve_auth import connect_host


class MissingExtra(UserError):
    """An optional dependency is not installed; the message says what to install (the user can fix it)."""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _die_with_parent() -> None:
    """In the child before exec: get SIGKILL when the harness dies, even by SIGKILL (Linux).

    The signal follows the *thread* that started the child (hence `__aenter__` spawns from the
    event loop's thread).
    """
    try:
        # SIGKILL, not SIGTERM: on SIGTERM uvicorn waits for the in-flight generation of a client
        # that is already gone (seen here: minutes under load); nobody is left to wait for it
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


async def _to_thread(fn: Any) -> Any:
    return await asyncio.to_thread(fn)


class ManagedServer:
    """A server child process as a (sync or async) context manager.

    ready_paths are polled in order, each until it answers 200, before the server counts as up.
    """

    label = "server"
    kind = "any"  # what a signal most often means for this server (server_death.WORDS)
    ready_paths: tuple[str, ...] = ("/v1/models",)
    # a server that answers one request at a time: a run plays one episode at a time on it
    serial = False

    def __init__(
        self,
        command: list[str],
        *,
        host: str,
        port: int,
        startup_timeout_s: float = 120.0,
        stop_timeout_s: float = 15.0,
        env: dict[str, str] | None = None,
        log_path: str | Path | None = None,
        api_key: str | None = None,
    ):
        self.command = command
        # the key the server demands: the readiness checks send it (and it is never logged)
        self.api_key = api_key
        self.host = host
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.env = env
        self.log_path = Path(log_path) if log_path else None
        self._temp_log = False  # the log is a temporary file of ours: removed after a clean stop
        self.model_names: list[str] = []
        self.startup_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._stopping = threading.Event()
        self._t0 = 0.0

    @property
    def root_url(self) -> str:
        return f"http://{connect_host(self.host)}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (what `openai.OpenAI(base_url=...)` takes)."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> ManagedServer:
        self._spawn()
        self._ready_or_stop()
        return self

    def _spawn(self) -> None:
        if self._proc is not None:
            raise RuntimeError(f"{self.label} already started (a server object is started once)")
        if self._stopping.is_set():  # stopped (cancelled) before it even started
            raise ServerStartError(f"{self.label} was stopped before it started")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix=f"{self.label.replace(' ', '-')}-", suffix=".log")
            os.close(fd)
            self.log_path, self._temp_log = Path(name), True
        self._log = open(self.log_path, "wb")
        self._t0 = time.monotonic()
        env = {**os.environ, **(self.env or {})}
        self._proc = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        atexit.register(self.stop)

    def _ready_or_stop(self) -> None:
        try:
            self._wait_ready(self._t0)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - self._t0

    def _wait_ready(self, t0: float) -> None:
        # aiohttp: only when a server starts (`run --dry-run` and the runner load this module)
        from harness.serving.backends.transport import Transport, TransportError

        deadline = t0 + self.startup_timeout_s

        async def answers(client: Transport, path: str) -> bytes | None:
            try:
                return await client.get(path)
            except TransportError:  # not up yet, or not answering 200 yet
                return None

        async def poll() -> None:
            client = Transport(self.root_url, api_key=self.api_key or "", timeout_s=5.0, max_response_bytes=64 << 20)
            try:
                for path in self.ready_paths:
                    while True:
                        if self._stopping.is_set():
                            raise ServerStartError(f"{self.label} was stopped while starting")
                        if self._proc is None:
                            raise ServerStartError(f"{self.label} was never started")
                        if self._proc.poll() is not None:
                            raise ServerDied(self.death_report("while starting"))
                        if time.monotonic() > deadline:
                            raise ServerStartError(
                                f"{self.label} did not answer {path} within {self.startup_timeout_s:.0f} s."
                                f"\n{self.log_tail()}"
                            )
                        body = await answers(client, path)
                        if body is not None:
                            if path.endswith("/models"):
                                self.model_names = [m["id"] for m in json.loads(body).get("data", [])]
                            break
                        await asyncio.sleep(0.25)
            finally:
                await client.aclose()

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: `start` runs in a thread of its own, or the CLI's
            asyncio.run(poll())
            return
        # a loop runs in this thread (a notebook's `with LocalServer()`): wait in another thread
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, poll()).result()

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def wait(self) -> NoReturn:
        """Block while the server runs (`serve`); when it ends on its own, a ServerDied says how."""
        while self.alive():
            time.sleep(0.5)
        raise ServerDied(self.died() or f"the {self.label} exited on its own.\n{self.log_tail()}")

    def died(self) -> str | None:
        """The death report when the server ended on its own during the run; None while it runs,
        before it started and once we stopped it."""
        if self._proc is None or self._stopping.is_set() or self._proc.poll() is None:
            return None
        return self.death_report("during the run")

    def death_report(self, phase: str) -> str:
        assert self._proc is not None and self._proc.returncode is not None
        code = self._proc.returncode
        return server_death.report(
            self.label,
            returncode=code,
            kind=self.kind,
            phase=phase,
            log_path=self.log_path,
            tail=self.tail_lines(12),
            fix=self.fix(code),
            pid=self._proc.pid,
            after_s=time.monotonic() - self._t0,
        )

    def fix(self, returncode: int) -> str:
        """The command or step that fixes a death with this return code."""
        if returncode == -signal.SIGKILL:
            return "give the server more memory (stop other jobs; a smaller model or context), then rerun"
        return "read its log (above); rerun once the cause is fixed"

    def _log_lines(self) -> list[str]:
        if self.log_path is None or not self.log_path.exists():
            return []
        return self.log_path.read_text(errors="replace").splitlines()

    def tail_lines(self, lines: int) -> list[str]:
        """The log's last `lines` lines that are not blank."""
        return [line for line in self._log_lines() if line.strip()][-lines:]

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return f"last lines of {self.log_path}:\n" + "\n".join(self._log_lines()[-lines:])

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after stop_timeout_s. Idempotent."""
        self._stopping.set()
        proc = self._proc
        # a server that started and ran until we stopped it left nothing to read; a log that a
        # failure named (a death, a failed start) stays
        clean = proc is not None and proc.poll() is None and self.startup_s is not None
        if proc is not None:
            if proc.poll() is None:
                self._signal(proc, signal.SIGTERM)
                try:
                    proc.wait(self.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    self._signal(proc, signal.SIGKILL)
                    proc.wait(self.stop_timeout_s)
            # workers that outlived their parent still belong to the group
            self._signal(proc, signal.SIGKILL)
            self._wait_group_gone(proc.pid, 3.0)
        if self._log is not None:
            self._log.close()
            self._log = None
        if clean and self._temp_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
        atexit.unregister(self.stop)

    @staticmethod
    def _wait_group_gone(pgid: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.02)

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self) -> ManagedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> ManagedServer:
        # spawned from the loop's thread, so the parent-death signal follows that thread, not a
        # worker thread; only the wait for readiness runs in a thread
        self._spawn()
        try:
            await _to_thread(self._ready_or_stop)
        except BaseException:  # cancelled while waiting: the thread sees _stopping and gives up
            self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await _to_thread(self.stop)
