"""Errors raised by the note model. Every message says what was wrong and how to fix it."""

from agentmd.errors import AgentmdError


class VaultSchemaError(AgentmdError):
    """Root of every error the note model raises."""


class YamlRefused(VaultSchemaError):
    """A YAML block could not be read safely: malformed, hostile or oversized."""
