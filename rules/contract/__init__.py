"""The runtime-read storage-rules contract: load, merge, validate, and answer routing questions.

The packaged default (`storage-rules.default.md`, shipped inside `agentmd.rules`) always exists. A vault may
carry its own copy at `standards/storage-rules.md`; its settings are merged over the default's and the
result is validated as a whole. A contract that cannot be read or does not validate never raises: it is
reported as *halted* (`ContractState.halted`), the packaged default supplies the values, and routing falls
through to the date shard until the file is fixed. `ContractCache` re-reads the file when it changes.

`model` holds the keys and the validated values, `validation` the checks, `loading` the reading of files and
of the packaged default, `cache` the re-reading cache, `hashing` the contract's two hashes (`rules_hash`,
`judgment_hash`) and which keys an enrichment judgment reads.
"""

from agentmd.rules.contract.cache import ContractCache
from agentmd.rules.contract.hashing import JUDGMENT_KEYS, OUTSIDE_JUDGMENT
from agentmd.rules.contract.loading import (
    DEFAULT_RESOURCE,
    MAX_CONTRACT_BYTES,
    check_file,
    contract_from_text,
    contract_path,
    default_contract,
    default_settings,
    default_state,
    load_contract,
    merge,
    read_settings,
)
from agentmd.rules.contract.model import (
    AUTHORITY_LEVELS,
    CLASS_WEIGHT_NAMES,
    KNOWN_KEYS,
    LINK_CONVENTIONS,
    NOTE_PROPERTIES,
    PER_ENTRY_KEYS,
    SELF_SOURCE,
    SHARD_PLACEHOLDERS,
    SPACE_KEYED,
    THRESHOLD_NAMES,
    TRUST_TIERS,
    Contract,
    ContractState,
    Thresholds,
    is_url_shaped,
)
from agentmd.rules.contract.validation import validate
from agentmd.vocabulary import VAULT_CONTRACT

__all__ = [
    "AUTHORITY_LEVELS",
    "CLASS_WEIGHT_NAMES",
    "DEFAULT_RESOURCE",
    "JUDGMENT_KEYS",
    "KNOWN_KEYS",
    "LINK_CONVENTIONS",
    "MAX_CONTRACT_BYTES",
    "NOTE_PROPERTIES",
    "OUTSIDE_JUDGMENT",
    "PER_ENTRY_KEYS",
    "SELF_SOURCE",
    "SHARD_PLACEHOLDERS",
    "SPACE_KEYED",
    "THRESHOLD_NAMES",
    "TRUST_TIERS",
    "VAULT_CONTRACT",
    "Contract",
    "ContractCache",
    "ContractState",
    "Thresholds",
    "check_file",
    "contract_from_text",
    "contract_path",
    "default_contract",
    "default_settings",
    "default_state",
    "is_url_shaped",
    "load_contract",
    "merge",
    "read_settings",
    "validate",
]
