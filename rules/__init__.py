"""Write governance: the storage-rules contract, door/authority and content prefilters."""

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
from .errors import ContractError, RulesError

__all__ = [
    "AUTHORITY_LEVELS",
    "KNOWN_KEYS",
    "TRUST_TIERS",
    "VAULT_CONTRACT",
    "Contract",
    "ContractCache",
    "ContractError",
    "ContractState",
    "RulesError",
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
]
