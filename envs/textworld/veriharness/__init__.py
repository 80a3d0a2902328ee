"""The `veriharness` protocol: the study's artifact (github jaideepray1989/veriharness @ 929868ac)
reproduced request for request on our TextWorld games.

Modules: `stimuli` (the artifact's fixed strings, quoted with their source), `envelope` (the
LeafOutput answer and its parsing), `gates` (its gate stack on our replay engine), `feedback`
(its repair lines per condition), `prompt` (its messages), `env` (the Env the suites open for
`protocol=veriharness`). Our `plan` protocol (envs.textworld.plan) stays the cleaner design.
"""
