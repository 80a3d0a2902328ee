"""Bank support domain of the tool suites (extends the bank family of `envs.bank`)."""

from envs.tools.bank.domain import BankTools, build

__all__ = ["BankTools", "build"]
