"""What the portable llama.cpp build costs: prompt and output tokens/s of SmolLM2-135M, per build.

    python benchmarks/llama_portability.py                          # the build this Python imports
    python benchmarks/llama_portability.py --python /tmp/native/bin/python --python .venv/bin/python

Each `--python` is an interpreter whose `llama_cpp` is one build (e.g. a venv where
llama-cpp-python was built with `CMAKE_ARGS="-DGGML_NATIVE=ON"`, beside the README's portable
one). Per build and round, a child process loads the embedded GGUF (as the server does: 2
threads, n_ctx 2048), evaluates a 512-token prompt (prompt tokens/s) and then writes 128 tokens
greedily, end-of-text banned so that every round writes all 128 (output tokens/s); the figures
are llama.cpp's own timings (`llama_perf_context`). Rounds alternate between the builds, so a
change in the machine's load falls on all of them; the medians are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHILD = r"""
import json, sys
import llama_cpp
gguf, threads, n_prompt, n_out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = llama_cpp.Llama(model_path=gguf, n_ctx=2048, n_batch=512, n_threads=threads, n_threads_batch=threads,
                      verbose=False, seed=1)
words = "the quick brown fox jumps over the lazy dog while a tool call fails and is repaired ".split()
text = ""
while len(llm.tokenize(text.encode())) < n_prompt:
    text += words[len(text) % len(words)] + " "
tokens = llm.tokenize(text.encode())[:n_prompt]
prompt = llm.detokenize(tokens).decode(errors="ignore")
llm.create_completion(prompt, max_tokens=n_out, temperature=0.0, logit_bias={llm.token_eos(): -1e9})
perf = llama_cpp.llama_perf_context(llm.ctx)
info = llama_cpp.llama_print_system_info()
print(json.dumps({
    "version": llama_cpp.__version__,
    "system_info": info.decode() if isinstance(info, bytes) else str(info),
    "n_p_eval": perf.n_p_eval, "t_p_eval_ms": perf.t_p_eval_ms, "n_eval": perf.n_eval, "t_eval_ms": perf.t_eval_ms,
}))
"""


def one_round(python: str, gguf: str, threads: int, n_prompt: int, n_out: int) -> dict:
    done = subprocess.run(
        [python, "-c", CHILD, gguf, str(threads), str(n_prompt), str(n_out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise SystemExit(f"{python}: the child exited with {done.returncode}:\n{done.stderr[-2000:]}")
    fact = json.loads(done.stdout.strip().splitlines()[-1])
    fact["pp"] = fact["n_p_eval"] / (fact["t_p_eval_ms"] / 1000)
    fact["tg"] = fact["n_eval"] / (fact["t_eval_ms"] / 1000)
    return fact


def main() -> None:
    from harness.serving.llama.build import parse_system_info
    from harness.serving.llama.local import gguf_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", action="append", help="an interpreter whose llama_cpp is a build to time (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--output-tokens", type=int, default=128)
    args = ap.parse_args()
    pythons = args.python or [sys.executable]
    gguf = str(gguf_path())
    rounds: dict[str, list[dict]] = {p: [] for p in pythons}
    for _ in range(args.rounds):
        for p in pythons:
            rounds[p].append(one_round(p, gguf, args.threads, args.prompt_tokens, args.output_tokens))
    print(
        f"SmolLM2-135M-Instruct Q4_1, {args.threads} threads, {args.prompt_tokens} prompt tokens, "
        f"{args.output_tokens} output tokens, medians of {args.rounds} interleaved rounds"
    )
    print(f"{'build':<46} {'prompt tok/s':>12} {'output tok/s':>12}  instruction sets")
    first = None
    for p in pythons:
        facts = rounds[p]
        pp, tg = statistics.median(f["pp"] for f in facts), statistics.median(f["tg"] for f in facts)
        first = first or (pp, tg)
        isa = " ".join(parse_system_info(facts[0]["system_info"]))
        print(f"{p[-46:]:<46} {pp:>12.1f} {tg:>12.1f}  {isa}")
        if (pp, tg) != first:
            print(f"{'  vs the first':<46} {pp / first[0]:>12.3f} {tg / first[1]:>12.3f}")
    print("peers: none (the builds given with --python are the comparison: llama.cpp's native build beside ours)")


if __name__ == "__main__":
    main()
