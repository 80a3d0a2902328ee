"""Serving: everything that turns a model name into a live `Backend`.

What a name means (`models`: the model kinds, a registry), the backends that talk to a model
(`backends/`: the OpenAI-compatible client and its transport, the answer parser), the servers
the harness starts (`llama/`: the embedded llama.cpp server, its build check and GGUF files;
`vllm/`: presets, `vllm serve`, vLLM in-process), where they run (`gpus`, `placement`), how
many episodes each takes at once (`batch`) and the check of a served model before a run
(`preflight`). The runner knows none of it but what this front door gives.
"""
