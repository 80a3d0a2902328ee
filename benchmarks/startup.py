"""Start-up time of the command line: `--help`, `suites`, `conditions`, vs the 0.3 s target.

    .venv/bin/python benchmarks/startup.py [--runs 7] [--imports] [--peer-runs 3]

Each command runs as a user would run it, in a fresh subprocess: `python -m harness.cli ARGS`
with this checkout first on the path (the `repair-harness` script does the same import). The
figure is the median wall time of --runs runs, after one unmeasured warm-up run per command (a
cold file cache measures the disk, not our imports). Bare `python -c pass` is timed alongside:
it is the floor no command can go under. The peers' command lines follow, timed the same way
(--peer-runs runs): BFCL's `bfcl --help` and inspect_ai's `inspect --help`.

--imports adds, per command, the slowest top-level imports from `python -X importtime`
(cumulative microseconds), to show where the rest of the time goes.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.3  # issue 15: `--help` and `suites` under 0.3 s
COMMANDS = {"--help": ["--help"], "suites": ["suites"], "conditions": ["conditions"]}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def wall(argv: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env or _env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}): {done.stderr.decode()[-1000:]}")
    return elapsed


def median_wall(argv: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float, float]:
    wall(argv, env)  # warm-up
    times = [wall(argv, env) for _ in range(runs)]
    return statistics.median(times), min(times), max(times)


def peers() -> dict[str, tuple[list[str], dict[str, str]]]:
    """The peers' command lines, as installed beside this harness: BFCL's `bfcl` (bfcl-eval, through
    tests/bfcl_runner.py: the other vendors' SDKs it imports at start-up are stand-ins here, which
    import faster than the SDKs would) and inspect_ai's `inspect`."""
    from tests.bfcl_runner import command, deps

    bfcl_env = {**_env(), "PYTHONPATH": os.pathsep.join([str(ROOT), str(deps())])}
    inspect = str(Path(sys.executable).with_name("inspect"))
    return {
        "bfcl --help (BFCL's runner)": ([*command(), "--help"], bfcl_env),
        "inspect --help (inspect_ai)": ([inspect, "--help"], _env()),
    }


def slowest_imports(args: list[str], top: int = 8) -> list[tuple[int, str]]:
    """Top-level imports (those imported by the command module itself) by cumulative time."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness.cli", *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(2)) <= 3:  # first two levels below the entry module
            rows.append((int(m.group(1)), m.group(2).replace(" ", ".") + m.group(3)))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured runs per command (median shown)")
    parser.add_argument("--imports", action="store_true", help="also list the slowest imports per command")
    parser.add_argument("--peer-runs", type=int, default=3, help="measured runs per peer's command (0: none)")
    args = parser.parse_args()
    base = [sys.executable, "-m", "harness.cli"]
    floor = median_wall([sys.executable, "-c", "pass"], args.runs)
    sys.path.insert(0, str(ROOT))
    print(
        f"median of {args.runs} runs after a warm-up; target {TARGET_S:.2f} s; machine load "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n"
    )
    print(f"{'command':<34} {'median s':>9} {'min s':>7} {'max s':>7} {'x target':>9}")
    print(
        f"{'python -c pass (floor)':<34} {floor[0]:>9.3f} {floor[1]:>7.3f} {floor[2]:>7.3f} {floor[0] / TARGET_S:>9.2f}"
    )
    for name, argv in COMMANDS.items():
        med, lo, hi = median_wall(base + argv, args.runs)
        print(f"{'repair-harness ' + name:<34} {med:>9.3f} {lo:>7.3f} {hi:>7.3f} {med / TARGET_S:>9.2f}", flush=True)
    if args.peer_runs:
        for name, (argv, env) in peers().items():
            med, lo, hi = median_wall(argv, args.peer_runs, env)
            print(f"{name:<34} {med:>9.3f} {lo:>7.3f} {hi:>7.3f} {med / TARGET_S:>9.2f}  (peer)", flush=True)
    if args.imports:
        for name, argv in COMMANDS.items():
            print(f"\nslowest imports of `{name}` (cumulative ms; dots = nesting level):")
            for us, module in slowest_imports(argv):
                print(f"  {us / 1000:>7.1f}  {module}")
    print("\nx target = median / target (<= 1.00 meets it)")


if __name__ == "__main__":
    main()
