"""vLLM: the presets (`presets`, `table`), `vllm serve` (`entry`), vLLM in-process (`inproc`) and
the embedded model's weights as a Hugging Face folder for it (`local_hf`)."""
