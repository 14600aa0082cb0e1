"""The storage-rules contract, read from files: the packaged default, merging a vault file over it, halting."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from conftest import REPO
from contract_helpers import DAY, write_vault_contract, yaml_block

from agentmd import vault_schema
from agentmd.rules.contract import (
    CLASS_WEIGHT_NAMES,
    KNOWN_KEYS,
    THRESHOLD_NAMES,
    ContractState,
    check_file,
    default_contract,
    load_contract,
    read_settings,
    validate,
)
from agentmd.rules.errors import ContractError, RulesError

ROOT = REPO


# ------------------------------------------------------------------------------------ packaged default


def test_packaged_default_validates_and_sets_every_key() -> None:
    text = (ROOT / "storage-rules.default.md").read_text(encoding="utf-8")
    settings, errors = read_settings(text, "storage-rules.default.md")
    assert errors == []
    assert validate(settings) == []
    assert set(settings) == set(KNOWN_KEYS)
    assert set(settings["thresholds"]) == set(THRESHOLD_NAMES)
    assert set(settings["class_weights"]) == set(CLASS_WEIGHT_NAMES)
    assert check_file(ROOT / "storage-rules.default.md") == []


def test_packaged_default_is_shipped_inside_the_package() -> None:
    link = ROOT / "rules" / "storage-rules.default.md"
    assert link.is_symlink()
    assert os.readlink(link) == "../storage-rules.default.md"
    resource = resources.files("agentmd.rules") / "storage-rules.default.md"
    assert resource.read_text(encoding="utf-8") == (ROOT / "storage-rules.default.md").read_text(encoding="utf-8")


def test_packaged_default_is_found_from_outside_the_repository(tmp_path: Path) -> None:
    """The default is read through the installed package, not through the current folder."""
    script = "from agentmd.rules import default_state; print(default_state().source)"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).read_text(encoding="utf-8") == (ROOT / "storage-rules.default.md").read_text(
        encoding="utf-8"
    )


def test_packaged_default_prose_explains_every_key() -> None:
    text = default_contract().text
    prose = text
    for block in vault_schema.fenced_blocks(text):
        prose = prose.replace(block.content, "")
    names = [*KNOWN_KEYS, *THRESHOLD_NAMES, *CLASS_WEIGHT_NAMES]
    missing = [name for name in names if f"`{name}`" not in prose]
    assert missing == []
    for heading in ("Types", "Lifecycle", "Sources and trust", "Thresholds", "Spaces and authority", "Ranking"):
        assert default_contract().section(heading), heading


def test_default_values() -> None:
    contract = default_contract()
    assert contract.thresholds.daily_write_cap == 200
    assert contract.thresholds.daily_card_budget == 30
    assert 0 <= contract.thresholds.low_confidence <= 1
    assert contract.default_lifecycle == "active"
    assert contract.default_authority == "alignment"
    assert all(0 < w <= 1 for w in contract.class_weights.values())
    assert all(0 < w <= 1 for w in contract.dampened_spaces.values())
    assert set(contract.sources.values()) <= {"trusted", "untrusted"}
    assert contract.class_dir("decision") == "memory/decisions"
    with pytest.raises(TypeError):
        contract.types["decision"] = "elsewhere"  # type: ignore[index]


def test_no_vault_and_missing_vault_file_mean_the_packaged_default(tmp_path: Path) -> None:
    for state in (load_contract(None), load_contract(tmp_path)):
        assert not state.halted
        assert state.errors == ()
        assert state.source.endswith("storage-rules.default.md")
        assert state.contract == default_contract()
        assert state.to_status()["color"] == "green"


def test_contract_error_is_a_rules_error() -> None:
    assert issubclass(ContractError, RulesError)


# ------------------------------------------------------------------------------------------- merging


def test_partial_vault_contract_merges_over_the_default(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, "# My rules\n\n" + yaml_block("thresholds:\n  daily_write_cap: 50\n"))
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.source == str(path)
    contract = state.contract
    assert contract.thresholds.daily_write_cap == 50
    assert contract.thresholds.low_confidence == default_contract().thresholds.low_confidence
    assert contract.thresholds.daily_card_budget == 30
    assert contract.types == default_contract().types
    assert contract.text.startswith("# My rules")


def test_class_weights_merge_per_entry_other_keys_replace_whole(tmp_path: Path) -> None:
    write_vault_contract(
        tmp_path,
        yaml_block("class_weights:\n  archived: 0.3\ntypes:\n  note: memory/notes\n"),
    )
    contract = load_contract(tmp_path).contract
    assert contract.multiplier("archived") == 0.3
    assert contract.multiplier("superseded") == default_contract().multiplier("superseded")
    assert contract.class_dir("note") == "memory/notes"
    assert contract.class_dir("decision") is None


def test_several_yaml_blocks_are_merged_in_order(tmp_path: Path) -> None:
    text = "# Rules\n\n## Types\n\n" + yaml_block("types:\n  note: notes\n") + "\n## Caps\n\n"
    text += yaml_block("thresholds:\n  daily_write_cap: 9\n") + "\n```text\nshard: not read\n```\n"
    write_vault_contract(tmp_path, text)
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.contract.class_dir("note") == "notes"
    assert state.contract.thresholds.daily_write_cap == 9
    assert state.contract.shard == default_contract().shard


def test_key_repeated_across_blocks_is_an_error(tmp_path: Path) -> None:
    text = "# Rules\n\n" + yaml_block("shard: a/{yyyy}\n") + "\ntext\n\n" + yaml_block("shard: b/{yyyy}\n")
    path = write_vault_contract(tmp_path, text)
    state = load_contract(tmp_path)
    assert state.halted
    (error,) = state.errors
    assert "`shard` is set in the yaml block at line 3 and again in the one at line 9" in error
    assert str(path) in error


def test_error_caused_by_a_default_value_says_so(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, yaml_block("lifecycle: [live, gone]\n"))
    state = load_contract(tmp_path)
    assert state.halted
    (error,) = state.errors
    assert error.startswith(f"{path}: `default_lifecycle` is 'active', which is not in `lifecycle` (live, gone)")
    assert "comes from the packaged default" in error


def test_frontmatter_settings_are_read_when_there_are_no_yaml_blocks(tmp_path: Path) -> None:
    text = "---\ntitle: Storage rules\ntags: [standards]\nthresholds:\n  daily_card_budget: 12\n---\n\n# Rules\n"
    write_vault_contract(tmp_path, text)
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.contract.thresholds.daily_card_budget == 12


def test_frontmatter_note_properties_beside_yaml_blocks_are_ignored(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, "---\ntags: [standards]\n---\n" + yaml_block("shard: inbox/{yyyy}\n"))
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    assert state.contract.shard_dir(DAY) == "inbox/2026"


def test_settings_in_frontmatter_and_blocks_at_once_is_an_error(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, "---\nshard: a/{yyyy}\n---\n" + yaml_block("types: {}\n"))
    state = load_contract(tmp_path)
    assert state.halted
    assert "both in its frontmatter (`shard`) and in yaml blocks" in state.errors[0]


def test_errors_in_a_vault_file_name_that_file(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, yaml_block("class_weights:\n  archived: 7\n"))
    state = load_contract(tmp_path)
    assert state.halted
    (error,) = state.errors
    assert error.startswith(f"{path}: `class_weights.archived` is 7, not a multiplier in (0, 1]; ")
    assert check_file(path) == list(state.errors)


# ------------------------------------------------------------------------------------------- halting


def assert_halted(state: ContractState, path: Path) -> None:
    assert state.halted
    assert state.errors
    assert state.source == str(path)
    assert state.contract == default_contract()
    assert state.contract.thresholds.daily_write_cap == 200
    directory, reason = state.route("decision", DAY)
    assert directory == "memory/2026/03"
    assert reason.startswith("halted:")
    status = state.to_status()
    assert status["color"] == "red"
    assert status["halted"] is True
    assert status["errors"] == list(state.errors)
    assert status["source"] == str(path)
    assert str(path) in status["remedy"]


def test_broken_yaml_halts_with_the_file_line(tmp_path: Path) -> None:
    text = "# Rules\n\nsome prose\n\n" + yaml_block("thresholds:\n  daily_write_cap: [1,\n")
    path = write_vault_contract(tmp_path, text)
    state = load_contract(tmp_path)
    assert_halted(state, path)
    (error,) = state.errors
    assert f"the yaml block at line 5 of {path} is not valid YAML at line" in error
    assert "of the file" in error


def test_yaml_block_that_is_not_a_mapping_halts(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, yaml_block("- types\n- shard\n"))
    state = load_contract(tmp_path)
    assert_halted(state, path)
    assert "not a mapping" in state.errors[0]


def test_hostile_yaml_halts(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, yaml_block("shard: !!python/object/apply:os.system ['true']\n"))
    assert_halted(load_contract(tmp_path), path)


def test_invalid_values_halt_with_the_exact_errors(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, yaml_block("sources:\n  web: maybe\nshard: /abs\n"))
    state = load_contract(tmp_path)
    assert_halted(state, path)
    assert len(state.errors) == 2
    assert state.errors == tuple(check_file(path))


def test_non_utf8_file_halts(tmp_path: Path) -> None:
    path = write_vault_contract(tmp_path, "")
    path.write_bytes(b"# Rules\n\xff\xfe bad\n")
    state = load_contract(tmp_path)
    assert_halted(state, path)
    assert "is not UTF-8" in state.errors[0]


def test_directory_in_place_of_the_file_halts(tmp_path: Path) -> None:
    path = tmp_path / "standards" / "storage-rules.md"
    path.mkdir(parents=True)
    state = load_contract(tmp_path)
    assert_halted(state, path)
    assert "is a directory" in state.errors[0]


def test_explicit_path_that_does_not_exist_halts(tmp_path: Path) -> None:
    path = tmp_path / "nope.md"
    state = load_contract(tmp_path, path)
    assert_halted(state, path)
    assert "does not exist" in state.errors[0]
    assert check_file(path) == list(state.errors)


def test_explicit_path_overrides_the_vault_file(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block("thresholds:\n  daily_write_cap: 1\n"))
    other = tmp_path / "other.md"
    other.write_text(yaml_block("thresholds:\n  daily_write_cap: 2\n"), encoding="utf-8")
    state = load_contract(tmp_path, other)
    assert state.source == str(other)
    assert state.contract.thresholds.daily_write_cap == 2


def test_the_packaged_default_reads_as_prose_with_whole_headings() -> None:
    """Every `## ` line of the packaged default is a section heading a person would write (a heading cut out
    of a sentence once split the text on how the file is read), and the sections the prose names exist."""
    text = (REPO / "storage-rules.default.md").read_text(encoding="utf-8")
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert all(h and h[0].isupper() and "`" not in h and not h.endswith(",") for h in headings), headings
    assert {"How this file is read", "Links", "Importance"} <= set(headings)
    how = text.split("## How this file is read", 1)[1].split("\n## ", 1)[0]
    assert "`## Importance`" in how and "link_convention" not in how
