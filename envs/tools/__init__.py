"""Synthetic tool tasks: three domains of typed tools over simulated backends.

Each domain (`bank`, `travel`, `calendar`) builds seeded tasks with a gold final state; one
environment (`env.ToolsEnv`) plays them: the input contract (`tooling`, `notation`, `fields`), the output
contract with seeded backend faults in simulated time (`output`, `faults`), and the scripted
customer of multi-turn slot filling (`slots`). Suite options: `options.ToolsOptions`. The bank
domain also configures the seed's `bank-disputes` (`bank.disputes`), played by its own env.
"""

from envs.tools.options import ToolsOptions
from envs.tools.output import ProblemDetails, ToolOutput

# the lines of the suite table (envs.SUITES) that bind the three suites
SUITE_ENTRIES: dict[str, str] = {
    "tools-bank": "envs.tools.bank.domain:BankTools",
    "tools-travel": "envs.tools.travel.domain:TravelTools",
    "tools-calendar": "envs.tools.calendar.domain:CalendarTools",
}

__all__ = ["SUITE_ENTRIES", "ProblemDetails", "ToolOutput", "ToolsOptions"]
