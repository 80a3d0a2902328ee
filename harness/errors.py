"""Infrastructure failures: never an agent's failure. Dependency-light, so the CLI's guard can
name them without importing pydantic or a model SDK."""

from __future__ import annotations


class HarnessError(RuntimeError):
    """An infrastructure failure (server down, retries exhausted). Never an agent failure.

    fatal: the server is gone (connection refused after retries); the run should stop.
    """

    def __init__(self, message: str, *, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


class StartFailed(HarnessError):
    """No model server could be reached or asked which models it serves: nothing ran, nothing
    was written, and the same command can simply be run again."""


class PreflightFailed(RuntimeError):
    """A served model failed a preflight check (harness.serving.preflight): no episode of it was played.
    The message names the model, the check, what was seen and the likely fix."""


class ServerStartError(RuntimeError):
    """A model server exited or did not answer in time; the message carries the tail of its log.
    Raised by `harness.serving.server_proc` (which re-exports it), defined here so the CLI's
    guard names it without importing the process machinery."""


class ServerDied(ServerStartError):
    """A model server the harness started died (a signal or a non-zero exit), while starting or
    during the run. The message says how (the signal in words), where its log is, its last
    lines and the command that fixes it (`harness.serving.server_death`)."""


class StorageError(RuntimeError):
    """The run directory cannot be written (disk full, quota, I/O error): the run stops, every
    record written before is whole, and the same command resumes it (`harness.rundir.store`)."""


class WorkerDied(RuntimeError):
    """The process an import played in on another bfcl-eval release was killed (a signal: the OOM
    killer, a kill -9): the message names the signal and what it wrote that is kept
    (`harness.imports.worker`); the same command resumes the import."""


class SuiteCheckFailed(HarnessError):
    """A task its own gold solution cannot win (harness.suite_check): nothing was played or written."""
