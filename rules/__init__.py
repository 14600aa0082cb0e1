"""Write governance: the storage-rules contract, door/authority and content prefilters.

The names below are loaded on first use: a command that only reads the contract (`agentmd reindex` wants its
link convention) does not compile the prefilters' patterns, which cost more than the rest of the package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .contract import (
        AUTHORITY_LEVELS,
        KNOWN_KEYS,
        TRUST_TIERS,
        VAULT_CONTRACT,
        Contract,
        ContractCache,
        ContractState,
        Thresholds,
        check_file,
        default_contract,
        default_settings,
        default_state,
        is_url_shaped,
        load_contract,
        merge,
        read_settings,
        validate,
    )
    from .door import Decision, DoorRefused, decide, explain, normalize_path, reserved_name
    from .errors import ContractError, RulesError
    from .prefilter import CODES, Finding, PrefilterRefused, Verdict, check_fields, check_text, require_clean

_WHERE = {
    ".contract": (
        "AUTHORITY_LEVELS",
        "KNOWN_KEYS",
        "TRUST_TIERS",
        "VAULT_CONTRACT",
        "Contract",
        "ContractCache",
        "ContractState",
        "Thresholds",
        "check_file",
        "default_contract",
        "default_settings",
        "default_state",
        "is_url_shaped",
        "load_contract",
        "merge",
        "read_settings",
        "validate",
    ),
    ".door": ("Decision", "DoorRefused", "decide", "explain", "normalize_path", "reserved_name"),
    ".errors": ("ContractError", "RulesError"),
    ".prefilter": ("CODES", "Finding", "PrefilterRefused", "Verdict", "check_fields", "check_text", "require_clean"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "AUTHORITY_LEVELS",
    "CODES",
    "KNOWN_KEYS",
    "TRUST_TIERS",
    "VAULT_CONTRACT",
    "Contract",
    "ContractCache",
    "ContractError",
    "ContractState",
    "Decision",
    "DoorRefused",
    "Finding",
    "PrefilterRefused",
    "RulesError",
    "Thresholds",
    "Verdict",
    "check_fields",
    "check_file",
    "check_text",
    "decide",
    "default_contract",
    "default_settings",
    "default_state",
    "explain",
    "is_url_shaped",
    "load_contract",
    "merge",
    "normalize_path",
    "read_settings",
    "require_clean",
    "reserved_name",
    "validate",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
