"""The published study's fixed parameters (Ray & Goyal 2026, arXiv:2607.14167), in one place.

Every module that needs one of these numbers imports it from here; none repeats it.
"""

from __future__ import annotations

PAPER = 'Ray & Goyal, "Structured Feedback Improves Repair in an LLM Agent Loop", arXiv:2607.14167 (2026)'

# the paper's 50 TextWorld games and how they were generated
GAME_SEEDS = range(20261051, 20261101)
GAME_SEEDS_SPEC = f"{GAME_SEEDS.start}..{GAME_SEEDS.stop - 1}"
ROOMS, OBJECTS, QUEST_LENGTH = 3, 4, 2
MAX_COMMANDS = 4  # commands per plan

# the protocol
BUDGET = 4  # model calls per game
MAX_TOKENS = 512
# greedy decoding: the default of every run (envs.contract.Decoding), as in the study
TEMPERATURE = 0.0
TOP_P = 1.0
K_ALLOWED = 12  # admissible commands an invalid action reports, in the game's order
CUT = 240  # characters every rendered feedback value (and the echoed answer) was cut to

# our condition name -> the paper's
CONDITION_NAMES = {"raw": "RawDiag", "loc_obs": "LocObs", "allowed_prose": "SameNL", "allowed_json": "TypedFields"}
CONDITIONS = tuple(CONDITION_NAMES)
# our condition name -> the artifact's variant name (github jaideepray1989/veriharness @ 929868ac,
# veriharness/core/types.py HarnessVariant), as its requests and analysis name them
VARIANT_NAMES = {
    "raw": "generic+diagnostics",
    "loc_obs": "location-observed",
    "allowed_prose": "same-info-natural",
    "allowed_json": "typed-fields",
}


# the two side lanes (PAPER.md): a budget sweep and a sampling lane, each on the first games
BUDGET_LANE_GAMES, BUDGET_LANE_BUDGETS = 15, (2, 4, 6, 8)
SAMPLING_LANE_GAMES, SAMPLING_LANE_SEEDS = 20, (3101, 3102, 3103)
SAMPLING_TEMPERATURE, SAMPLING_TOP_P = 0.3, 0.9
