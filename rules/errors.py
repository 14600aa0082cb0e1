"""Errors raised by the rules package. Every message says what was wrong and how to fix it."""

from agentmd.errors import AgentmdError


class RulesError(AgentmdError):
    """Root of every error the rules package raises."""


class ContractError(RulesError):
    """The packaged storage-rules contract is missing or invalid: an installation or packaging bug.

    A vault's own contract never raises: a bad one is reported as a halted `ContractState` instead.
    """
