"""Plugins: a user's own suites, conditions and agents, registered into the harness's registries.

A plugin is a Python file (`--plugin FILE.py`, or `plugins = [...]` in a TOML grid) or an installed
package that declares the entry-point group `repair_harness.plugins`. Its code runs in the harness
process, as the user's own code does (it can do anything the user can); what it registers goes
into the same registries as the built-ins, recorded as registered by it. Model output still never
reaches `eval` or the filesystem: a plugin receives Violations and ToolCalls, as the built-ins do.

Each loaded plugin is known by where it came from and the sha256 of its source, which `run.json`
keeps: a resume whose plugin source changed is refused (`check_unchanged`), so records are never
mixed from two versions of a plugin. A plugin that fails to import, or registers a name that is
taken, is one line naming the file and the cause (`PluginError`, exit 2).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from envs.errors import UserError
from envs.registry import DuplicateName, plugin_source

GROUP = "repair_harness.plugins"


class PluginError(UserError):
    """A plugin that cannot be loaded, or a resume whose plugins are not the run's."""


@dataclass(frozen=True)
class Plugin:
    """A loaded plugin: its name (the file as given, or the entry point), where its source is, the
    distribution and version of a package plugin, and the sha256 of its source."""

    name: str
    path: str
    sha256: str
    distribution: str | None = None
    version: str | None = None

    def record(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# loaded plugins by their source file: loading one twice in a process (a grid's TOML and a flag
# naming the same file) runs its code once, as Python imports a module once
_LOADED: dict[str, Plugin] = {}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _failed(name: str, exc: BaseException) -> PluginError:
    if isinstance(exc, DuplicateName):
        return PluginError(f"plugin {name}: {exc}")
    where = ""
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        where = f" (line {exc.lineno})"
    text = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, KeyboardInterrupt):  # its code raised it, or Ctrl-C came while it imported
        text = text or "its code raised it, or Ctrl-C came while it imported"
    return PluginError(f"plugin {name} failed to import{where}: {type(exc).__name__}" + (f": {text}" if text else ""))


@contextlib.contextmanager
def _running(source: str) -> Iterator[None]:
    """A plugin's code running: what it registers is its own, and what it prints goes to stderr,
    never into a command's stdout (`report --format json` is read by programs). A `sys.exit()`
    there is caught with its exceptions: exit 0 would end `run` with no word, exit 3 pass for a
    server failure."""
    with plugin_source(source), contextlib.redirect_stdout(sys.stderr):
        yield


def load_file(given: str | Path) -> Plugin:
    """Import a plugin file, its registrations recorded as its own."""
    path = Path(given).expanduser()
    if not path.is_file():
        raise PluginError(f"plugin {given}: no such file")
    key = str(path.resolve())
    sha = _sha256(path)
    known = _LOADED.get(key)
    if known is not None:
        if known.sha256 != sha:
            raise PluginError(f"plugin {given} changed while this process had it loaded; run the command again")
        return known
    module_name = f"repair_harness_plugin_{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {given}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    _built_ins()
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up by name
    try:
        with _running(f"plugin {given}"):
            spec.loader.exec_module(module)
    except BaseException as exc:  # the user's code: whatever it raises is one line, never a traceback
        sys.modules.pop(module_name, None)
        raise _failed(str(given), exc) from None
    plugin = Plugin(name=str(given), path=key, sha256=sha)
    _LOADED[key] = plugin
    return plugin


def _built_ins() -> None:
    """Every registry's built-in entries, registered before a plugin's code runs: a module the
    plugin is the first to import would otherwise register its built-ins under the plugin's name
    (and a clash would blame the plugin for a name it never registered)."""
    for module in ("envs", "conditions", "harness.agents", "harness.imports", "harness.serving.vllm.presets"):
        importlib.import_module(module)


def _may_declare() -> bool:
    """False only when no distribution on sys.path can declare the group: no `entry_points.txt`
    of a `.dist-info` or `.egg-info` folder names it. importlib.metadata costs a fifth of a
    listing's start-up (its import, then a scan of every distribution), for the common case of no
    package plugin at all; where this cannot tell (a zip on the path, a finder of distributions
    other than the standard one), it says True and importlib.metadata decides."""
    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return True  # a zip or an egg file: importlib.metadata reads those
            continue
        try:
            with os.scandir(folder) as found:
                infos = [e.path for e in found if e.name.lower().endswith((".dist-info", ".egg-info")) and e.is_dir()]
        except OSError:
            continue
        for info in infos:
            try:
                with open(os.path.join(info, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
                    if GROUP in f.read():
                        return True
            except OSError:
                continue
    return False


def _installed() -> list[Plugin]:
    if not _may_declare():
        return []
    # the entry-point scan: listing imports no importlib.metadata (test_startup_imports)
    from importlib import metadata

    plugins = []
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        found = importlib.util.find_spec(ep.module)
        origin = found.origin if found is not None else None
        key = origin or f"entry point {ep.name}"
        if key in _LOADED:
            plugins.append(_LOADED[key])
            continue
        dist = ep.dist.name if ep.dist is not None else None
        version = ep.dist.version if ep.dist is not None else None
        label = f"{dist or ep.module} {version or ''}".strip()
        try:
            with _running(f"plugin {label}"):
                target = ep.load()
                if callable(target):  # an entry point may name a function that registers
                    target()
        except BaseException as exc:  # KeyboardInterrupt, GeneratorExit, a BaseException of its own
            raise _failed(f"{label} (entry point {ep.name})", exc) from None
        sha = _sha256(Path(origin)) if origin else ""
        plugin = Plugin(name=ep.name, path=origin or ep.value, sha256=sha, distribution=dist, version=version)
        _LOADED[key] = plugin
        plugins.append(plugin)
    return plugins


def load(files: Iterable[str | Path] = ()) -> list[Plugin]:
    """The installed plugins, then the given files, each loaded once; what they registered is in
    the registries when this returns."""
    return [*_installed(), *(load_file(f) for f in files)]


def check_unchanged(recorded: list[dict[str, Any]], loaded: Sequence[Plugin], where: str) -> None:
    """A run directory's plugins (run.json) against those loaded now: a plugin whose source
    changed, or that is not loaded, is refused, naming it and what changed."""
    now = {p.path: p for p in loaded}  # a file's resolved path, or a package plugin's module file
    for old in recorded:
        name = str(old.get("name"))
        new = now.get(str(old.get("path")))
        if new is None:
            raise PluginError(
                f"{where} was run with plugin {name} (sha256 {str(old.get('sha256'))[:12]}), which is not loaded now; "
                f"give it again (--plugin {name}) to resume"
            )
        if new.sha256 != old.get("sha256"):
            raise PluginError(
                f"{where} was run with plugin {name} at sha256 {str(old.get('sha256'))[:12]}, and its source is now "
                f"{new.sha256[:12]}: its records would mix two versions. Restore the plugin, use another --out, "
                "or, to play its harness errors again under the mended code, add --retry-errors --plugin-changed"
            )


def mended(recorded: list[dict[str, Any]], loaded: Sequence[Plugin], where: str) -> list[dict[str, Any]]:
    """`run --retry-errors --plugin-changed`: the run's plugins whose source changed since it
    recorded them (each: name, the sha256 then and now); one not loaded now is refused as ever."""
    now = {p.path: p for p in loaded}
    out = []
    for old in recorded:
        new = now.get(str(old.get("path")))
        if new is None:
            check_unchanged([old], loaded, where)  # raises: not loaded
        elif new.sha256 != old.get("sha256"):
            out.append({"name": old.get("name"), "sha256_then": old.get("sha256"), "sha256_now": new.sha256})
    if not out:
        raise PluginError(f"--plugin-changed: no plugin of {where} changed since it was recorded")
    return out
