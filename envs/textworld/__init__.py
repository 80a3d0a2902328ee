"""TextWorld games for the harness: generation and cache, the plan and step protocols.

Suites (registered in `envs.SUITES`): `paper-textworld` (`envs.textworld.suite:PaperTextWorld`)
and `textworld` (`envs.textworld.suite:TextWorld`). Modules: `options` (run options), `manifest`
(what a built game records), `generate` (the generating child process), `cache` (the game cache),
`engine` (replay on TextWorld's rule engine), `zmachine` (a running game), `plan` and `step` (the
two protocols of ours), `veriharness` (the study's artifact, request for request), `tools` (typed
tools from command templates), `prompts`, `suite`.
"""
