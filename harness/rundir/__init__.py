"""The run directory as the harness writes it: the folder and its lock (`folder`), files written
whole (`files`), the one appender of records.jsonl (`append`) and `RunDir` (`store`), which plays
them together. Its layout (file names, the reader of its lines) is spelled once in `results.rundir`.
"""
