"""`python -m harness.serving.llama.probe GGUF`: load a GGUF with the installed llama.cpp and
decode a few tokens, in a process of its own (`llama.build.run_probe` starts it).

It prints one JSON line as soon as it knows the build's instruction sets, before it touches the
model: a build that dies of SIGILL while decoding has still said what it was compiled for.
"""

from __future__ import annotations

import json
import sys
import time


def main(gguf: str) -> None:
    # the [local] extra
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    print(
        json.dumps({"system_info": info.decode(errors="replace") if isinstance(info, bytes) else str(info)}), flush=True
    )
    t0 = time.perf_counter()
    model = llama_cpp.Llama(model_path=gguf, n_ctx=256, n_threads=1, n_batch=64, verbose=False, seed=1)
    # a prompt long enough for the batched matrix kernels (where AMX or AVX-512 code would run)
    model.create_completion("The list of the planets, in order from the Sun: " * 4, max_tokens=4, temperature=0.0)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 3)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
