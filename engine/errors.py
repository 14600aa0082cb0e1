"""The engine's exceptions. `main()` turns each into a one-line message and an exit code."""


class AgentmdError(Exception):
    """Root of every error the engine raises on purpose. The message says how to fix the problem."""

    exit_code = 1


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
