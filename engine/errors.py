"""The engine's exceptions. `main()` turns each into a one-line message and an exit code.

`AgentmdError`, the root of every exception agentmd defines, lives on the floor of the import graph
(agentmd/errors.py, where the whole tree is drawn) and is re-exported here.
"""

from agentmd.errors import AgentmdError

__all__ = ["AgentmdError", "ConfigError", "IndexBusy", "IndexDamaged", "UsageError"]


class UsageError(AgentmdError):
    """The command line or a request was malformed."""

    exit_code = 2


class ConfigError(AgentmdError):
    """Settings could not be resolved (no vault, unreadable config file)."""

    exit_code = 2


class IndexBusy(AgentmdError):
    """Another process holds the index writer."""


class IndexDamaged(AgentmdError):
    """The index could not be read; a reindex rebuilds it."""
