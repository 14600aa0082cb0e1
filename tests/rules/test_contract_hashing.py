"""The contract's two hashes: `rules_hash` over its parsed settings (prose does not count), `judgment_hash` over
what an enrichment judgment reads. Every key of the contract is placed inside or outside the judgment hash, and
a change to each key is checked against its side, so a new key cannot be added without deciding."""

from __future__ import annotations

import hashlib
from pathlib import Path

from conftest import REPO
from contract_helpers import write_vault_contract, yaml_block

from agentmd.rules.contract import (
    JUDGMENT_KEYS,
    KNOWN_KEYS,
    OUTSIDE_JUDGMENT,
    default_contract,
    load_contract,
)

ROOT = REPO

# One valid change of every key: the value it takes instead of the packaged default's.
CHANGES = {
    "types": "types:\n  decision: memory/decisions\n  fact: memory/semantic\n  howto: memory/howtos",
    "deprecations": "deprecations:\n  note: fact",  # `note` was never listed: only the deprecations change
    "lifecycle": "lifecycle: [active, dormant, archived, superseded, pinned, staged, frozen]",
    "default_lifecycle": "default_lifecycle: staged",
    "sources": "sources:\n  self: trusted\n  phone: trusted",
    "facets": "facets: [project]",
    "record_kinds": "record_kinds: [session-log]",
    "thresholds": "thresholds:\n  low_confidence: 0.7",
    "spaces": "spaces:\n  memory: memory\n  standards: standards\n  notes: notes",
    "shard": 'shard: "memory/{yyyy}"',
    "phone_paths": "phone_paths: [inbox/mobile]",
    "authority": "authority:\n  memory: shared",
    "default_authority": "default_authority: shared",
    "dampened_spaces": "dampened_spaces:\n  daily: 0.5",
    "recall_exempt_areas": "recall_exempt_areas: [private, daily]",
    "class_weights": "class_weights:\n  archived: 0.3",
    "link_convention": "link_convention: dendron",
    "sync_tool_patterns": 'sync_tool_patterns:\n  temp: ["*.partial-sync"]',
    "capture_names": "capture_names: machine",
}


def test_every_key_is_inside_or_outside_the_judgment_hash() -> None:
    inside, outside = set(JUDGMENT_KEYS), set(OUTSIDE_JUDGMENT)
    assert not inside & outside, f"on both sides: {sorted(inside & outside)}"
    undecided = set(KNOWN_KEYS) - inside - outside
    assert not undecided, f"decide whether an enrichment judgment reads {sorted(undecided)} (rules/contract/hashing.py)"
    assert inside | outside == set(KNOWN_KEYS)
    assert set(CHANGES) == set(KNOWN_KEYS), "give every key a change to check in CHANGES"


def test_a_change_to_each_key_moves_the_hashes_its_side_says(tmp_path: Path) -> None:
    default = default_contract()
    for key, block in CHANGES.items():
        vault = tmp_path / key
        write_vault_contract(vault, "# Rules\n\n" + yaml_block(block))
        state = load_contract(vault)
        assert not state.halted, (key, state.errors)
        changed = state.contract
        assert changed.rules_hash != default.rules_hash, key
        if key in JUDGMENT_KEYS:
            assert changed.judgment_hash != default.judgment_hash, f"{key} changed but the judgment hash did not"
        else:
            assert changed.judgment_hash == default.judgment_hash, f"{key} is outside, yet moved the judgment hash"


def test_a_type_moved_to_another_folder_leaves_the_judgment_hash(tmp_path: Path) -> None:
    """The folders of `types` are routing: a judgment reads only the names."""
    default = default_contract()
    moved = {name: "memory/elsewhere" for name in default.types}
    write_vault_contract(tmp_path, yaml_block("types:\n" + "".join(f"  {k}: {v}\n" for k, v in moved.items())))
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.contract.class_dir("decision") == "memory/elsewhere"
    assert state.contract.judgment_hash == default.judgment_hash
    assert state.contract.rules_hash != default.rules_hash


def test_rewording_the_prose_and_reordering_keys_leave_both_hashes(tmp_path: Path) -> None:
    text = (ROOT / "storage-rules.default.md").read_text(encoding="utf-8")
    reworded = text.replace("# Storage rules", "# Where my notes go").replace(
        "`types` maps a memory type to its class directory", "Every memory type has a folder, set by `types`"
    )
    reworded = reworded.replace("  daily: 0.9\n  inbox: 0.8\n", "  inbox: 0.8\n  daily: 0.9\n")  # keys reordered
    assert reworded != text
    write_vault_contract(tmp_path, reworded)
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.contract.rules_hash == default_contract().rules_hash
    assert state.contract.judgment_hash == default_contract().judgment_hash


def test_a_partial_file_hashes_as_the_settings_in_effect(tmp_path: Path) -> None:
    """A vault file setting one key to the default's own value means the same contract: the same hashes."""
    write_vault_contract(tmp_path, yaml_block("link_convention: obsidian"))
    state = load_contract(tmp_path)
    assert not state.halted
    assert state.contract.rules_hash == default_contract().rules_hash


def test_without_deprecations_the_judgment_hash_is_the_ledgers_earlier_key() -> None:
    """Ledgers written before deprecations existed keyed judgments by the sorted type names' hash: they stay valid."""
    contract = default_contract()
    before = hashlib.sha256("\n".join(sorted(contract.types)).encode()).hexdigest()[:12]
    assert contract.judgment_hash == before
    assert len(contract.rules_hash) == 12 and contract.rules_hash != contract.judgment_hash


def test_a_halted_contract_carries_the_packaged_defaults_hashes(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block("thresholds: 3"))
    state = load_contract(tmp_path)
    assert state.halted
    assert state.contract.rules_hash == default_contract().rules_hash
