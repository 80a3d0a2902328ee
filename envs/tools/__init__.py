"""Synthetic tool tasks: three domains of typed tools over simulated backends.

Each domain (`bank`, `travel`, `calendar`) builds seeded tasks with a gold final state; one
environment (`env.ToolsEnv`) plays them: the input contract (`tooling`, `notation`, `fields`), the output
contract with seeded backend faults in simulated time (`output`, `faults`), and the scripted
customer of multi-turn slot filling (`slots`). Suite options: `options.ToolsOptions`. The bank
domain also configures the seed's `bank-disputes` (`bank.disputes`), played by its own env.
"""
