"""The storage-rules contract: packaged default, validation, merging, halting, routing, runtime re-read."""

from __future__ import annotations

import datetime as dt
import os
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agentmd import vault_schema
from agentmd.rules.contract import (
    CLASS_WEIGHT_NAMES,
    KNOWN_KEYS,
    THRESHOLD_NAMES,
    Contract,
    ContractCache,
    ContractState,
    check_file,
    default_contract,
    default_settings,
    load_contract,
    merge,
    read_settings,
    validate,
)
from agentmd.rules.errors import ContractError, RulesError

ROOT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 3, 7)


def yaml_block(text: str) -> str:
    return f"```yaml\n{text.strip()}\n```\n"


def write_vault_contract(vault: Path, text: str) -> Path:
    path = vault / "standards" / "storage-rules.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def errors_for(fragment: dict[str, Any]) -> list[str]:
    """Validation errors of the default with `fragment` merged over it (as a vault file would be)."""
    return validate(merge(default_settings(), fragment))


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
    resource = resources.files("rules") / "storage-rules.default.md"
    assert resource.read_text(encoding="utf-8") == (ROOT / "storage-rules.default.md").read_text(encoding="utf-8")


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


# ------------------------------------------------------------------------------------------ validation

VALIDATION_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "unknown key with suggestion",
        {"thresold": {}},
        "`thresold` is not a storage-rules key; did you mean `thresholds`?",
    ),
    ("unknown key without suggestion", {"zzz": 1}, "`zzz` is not a storage-rules key; remove it"),
    ("lifecycle not a list", {"lifecycle": "active"}, "`lifecycle` is 'active', not a list"),
    ("lifecycle not kebab", {"lifecycle": ["active", "On Hold"]}, "`lifecycle[1]` is 'On Hold', which is not kebab"),
    ("lifecycle duplicate", {"lifecycle": ["active", "active"]}, "`lifecycle[1]` repeats 'active'"),
    ("lifecycle non-text item", {"lifecycle": ["active", 3]}, "`lifecycle[1]` is 3, not a name"),
    ("facets not kebab", {"facets": ["project", "Topic"]}, "`facets[1]`"),
    ("facets duplicate", {"facets": ["repo", "repo"]}, "`facets[1]` repeats"),
    ("record kinds duplicate", {"record_kinds": ["moc", "moc"]}, "`record_kinds[1]` repeats"),
    ("record kinds snake_case", {"record_kinds": ["day_index"]}, "write it as `day-index`"),
    (
        "default lifecycle outside list",
        {"default_lifecycle": "fresh"},
        "`default_lifecycle` is 'fresh', which is not in",
    ),
    ("default lifecycle not text", {"default_lifecycle": 5}, "`default_lifecycle` is 5"),
    (
        "source tier outside set",
        {"sources": {"web": "semi-trusted"}},
        "`sources.web` is 'semi-trusted', not a trust tier",
    ),
    ("source tier missing", {"sources": {"web": None}}, "`sources.web` is empty, not a trust tier"),
    ("source URL listed", {"sources": {"https://x.example": "trusted"}}, "`sources.https://x.example` is a URL"),
    ("source tag not kebab", {"sources": {"Web Clip": "untrusted"}}, "`sources.Web Clip` has the source tag"),
    ("sources not a mapping", {"sources": ["web"]}, "`sources` is a list, not a mapping"),
    ("class weight above 1", {"class_weights": {"archived": 1.5}}, "`class_weights.archived` is 1.5, not a multiplier"),
    ("class weight zero", {"class_weights": {"staged": 0}}, "`class_weights.staged` is 0, not a multiplier"),
    ("class weight negative", {"class_weights": {"fragment": -0.2}}, "`class_weights.fragment`"),
    ("class weight boolean", {"class_weights": {"unfiled": True}}, "`class_weights.unfiled` is the boolean true"),
    ("class weight text", {"class_weights": {"unfiled": "0.5"}}, "`class_weights.unfiled` is '0.5'"),
    ("class weight typo", {"class_weights": {"archvied": 0.5}}, "`class_weights.archvied` is not a class"),
    ("dampening above 1", {"dampened_spaces": {"daily": 2}}, "`dampened_spaces.daily` is 2, not a multiplier"),
    ("dampening of unknown space", {"dampened_spaces": {"dialy": 0.5}}, "did you mean `daily`?"),
    ("authority level unknown", {"authority": {"memory": "admin"}}, "`authority.memory` is 'admin', not a door level"),
    ("authority of unknown space", {"authority": {"nowhere": "shared"}}, "`authority.nowhere` names 'nowhere'"),
    ("default authority unknown", {"default_authority": "open"}, "`default_authority` is 'open', not a door level"),
    ("threshold not a mapping", {"thresholds": 5}, "`thresholds` is 5, not a mapping"),
    ("write cap negative", {"thresholds": {"daily_write_cap": -1}}, "`thresholds.daily_write_cap` is -1"),
    ("write cap text", {"thresholds": {"daily_write_cap": "200"}}, "`thresholds.daily_write_cap` is '200'"),
    ("write cap fraction", {"thresholds": {"daily_write_cap": 1.5}}, "`thresholds.daily_write_cap` is 1.5"),
    ("write cap boolean", {"thresholds": {"daily_write_cap": False}}, "`thresholds.daily_write_cap` is the boolean"),
    ("card budget negative", {"thresholds": {"daily_card_budget": -3}}, "`thresholds.daily_card_budget` is -3"),
    ("confidence above 1", {"thresholds": {"low_confidence": 1.5}}, "`thresholds.low_confidence` is 1.5"),
    ("confidence negative", {"thresholds": {"low_confidence": -0.1}}, "`thresholds.low_confidence` is -0.1"),
    ("confidence text", {"thresholds": {"low_confidence": "high"}}, "`thresholds.low_confidence` is 'high'"),
    ("threshold typo", {"thresholds": {"daily_cap": 5}}, "`thresholds.daily_cap` is not a threshold; did you mean"),
    ("types not a mapping", {"types": ["decision"]}, "`types` is a list, not a mapping"),
    ("type name not kebab", {"types": {"Project Note": "memory/p"}}, "`types.Project Note` has the type name"),
    ("type dir with ..", {"types": {"decision": "memory/../../etc"}}, "`types.decision` is 'memory/../../etc'"),
    ("type dir absolute", {"types": {"decision": "/etc/x"}}, "`types.decision` is '/etc/x', an absolute path"),
    ("type dir dot folder", {"types": {"decision": ".obsidian/x"}}, "`types.decision`"),
    ("type dir backslash", {"types": {"decision": "memory\\x"}}, "`types.decision`"),
    ("type dir empty", {"types": {"decision": ""}}, "`types.decision` is an empty folder path"),
    ("type dir not text", {"types": {"decision": 3}}, "`types.decision` is 3, not a folder path"),
    ("shard bad placeholder", {"shard": "memory/{yy}/{mm}"}, "`shard` uses the placeholder {yy}"),
    ("shard named placeholder", {"shard": "memory/{type}"}, "`shard` uses the placeholder {type}"),
    ("shard with ..", {"shard": "../{yyyy}"}, "`shard` is '../{yyyy}', which contains `..`"),
    ("shard absolute", {"shard": "/tmp/{yyyy}"}, "`shard` is '/tmp/{yyyy}', an absolute path"),
    ("shard unmatched brace", {"shard": "memory/{yyyy"}, "`shard` is 'memory/{yyyy', which has an unmatched brace"),
    ("shard not text", {"shard": 2026}, "`shard` is 2026, not a folder path"),
    ("space not kebab", {"spaces": {"Memory": "memory"}}, "`spaces.Memory` has the space name"),
    ("space folder with ..", {"spaces": {"memory": "../memory"}}, "`spaces.memory` is '../memory'"),
    ("space folder shared", {"spaces": {"memory": "memory", "notes": "memory/"}}, "`spaces.notes` uses the folder"),
    ("phone paths absolute", {"phone_paths": ["/inbox"]}, "`phone_paths[0]` is '/inbox', an absolute path"),
    ("phone paths duplicate", {"phone_paths": ["inbox/phone", "inbox/phone/"]}, "`phone_paths[1]` repeats"),
    ("phone paths not a list", {"phone_paths": "inbox/phone"}, "`phone_paths` is 'inbox/phone', not a list"),
    ("exempt areas duplicate", {"recall_exempt_areas": ["private", "private"]}, "`recall_exempt_areas[1]` repeats"),
    ("exempt areas with ..", {"recall_exempt_areas": ["a/../b"]}, "`recall_exempt_areas[0]`"),
]


@pytest.mark.parametrize(
    ("fragment", "expected"), [c[1:] for c in VALIDATION_CASES], ids=[c[0] for c in VALIDATION_CASES]
)
def test_each_validation_rule_names_the_key(fragment: dict[str, Any], expected: str) -> None:
    errors = errors_for(fragment)
    assert any(expected in e for e in errors), errors
    assert all(";" in e for e in errors)  # every message carries a fix after the problem


def test_validate_reports_every_problem_not_just_the_first() -> None:
    errors = errors_for({"thresholds": {"daily_write_cap": -1, "low_confidence": 2}, "shard": "/x"})
    assert len(errors) == 3


def test_validate_accepts_empty_vocabularies_and_a_mapping_only_subset() -> None:
    assert errors_for({"facets": [], "record_kinds": [], "types": {}, "dampened_spaces": {}}) == []
    assert validate({"thresholds": {"daily_write_cap": 0}}) == []


def test_validate_refuses_a_non_mapping() -> None:
    assert validate(["types"]) != []  # type: ignore[arg-type]


def test_space_references_are_checked_against_the_spaces_in_effect() -> None:
    errors = errors_for({"spaces": {"notes": "memory"}, "authority": {"memory": "standing"}})
    assert any("`authority.memory` names 'memory', which is not a space in `spaces`" in e for e in errors)
    errors = errors_for({"spaces": {"notes": "memory"}, "dampened_spaces": {"daily": 0.5}})
    assert any("`dampened_spaces.daily` names 'daily'" in e for e in errors)


def test_replacing_spaces_drops_default_entries_for_spaces_that_are_gone(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block("spaces:\n  notes: notes\n  daily: daily\n"))
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    contract = state.contract
    assert dict(contract.authority) == {"daily": "shared"}
    assert dict(contract.dampened_spaces) == {"daily": 0.9}
    assert contract.authority_of("notes") == "alignment"


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


# ------------------------------------------------------------------------------------------- routing


def test_route_by_type_else_shard() -> None:
    state = ContractState(default_contract(), "x", halted=False, errors=())
    assert state.route("lesson", DAY) == ("memory/lessons", "type: 'lesson' routes to memory/lessons")
    directory, reason = state.route(None, DAY)
    assert directory == "memory/2026/03"
    assert reason.startswith("untyped:")
    directory, reason = state.route("gossip", DAY)
    assert directory == "memory/2026/03"
    assert reason.startswith("unknown-type:")
    assert "'gossip'" in reason


def test_shard_placeholders(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block('shard: "captures/{yyyy}-{mm}/{dd}/"\n'))
    contract = load_contract(tmp_path).contract
    assert contract.shard_dir(dt.date(2027, 1, 2)) == "captures/2027-01/02"


# --------------------------------------------------------------------------------------------- trust


@pytest.mark.parametrize(
    "source",
    [
        "https://example.com/a",
        "http://x",
        "HTTPS://EXAMPLE.COM",
        "git+ssh://host/repo",
        "file:///etc/passwd",
        "//cdn.x",
    ],
)
def test_url_shaped_sources_are_untrusted(source: str) -> None:
    assert default_contract().trust(source) == "untrusted"


def test_url_shaped_source_is_untrusted_even_if_a_tag_matches() -> None:
    # a vault cannot list a URL as trusted (validation), and a URL never matches a listed tag
    assert default_contract().trust("operator://me") == "untrusted"


def test_trust_by_tag() -> None:
    contract = default_contract()
    assert contract.trust("operator") == "trusted"
    assert contract.trust(" Agent ") == "trusted"
    assert contract.trust("web") == "untrusted"
    assert contract.trust("phone") == "untrusted"
    assert contract.trust("never-heard-of-it") == "untrusted"


def test_no_source_is_looked_up_as_self(tmp_path: Path) -> None:
    assert default_contract().trust(None) == "trusted"
    assert default_contract().trust("  ") == "trusted"
    write_vault_contract(tmp_path, yaml_block("sources:\n  operator: trusted\n"))
    contract = load_contract(tmp_path).contract
    assert contract.trust(None) == "untrusted"
    assert contract.trust("operator") == "trusted"


# ------------------------------------------------------------------------------------ spaces, authority


@pytest.mark.parametrize(
    ("path", "space"),
    [
        ("memory/decisions/a.md", "memory"),
        ("memory", "memory"),
        ("./memory/a.md", "memory"),
        ("projects/ledgerline/charter.md", "projects"),
        ("private/diary.md", "private"),
        ("memoryx/a.md", None),
        ("README.md", None),
        ("../memory/a.md", None),
        ("/memory/a.md", None),
        ("", None),
    ],
)
def test_space_of(path: str, space: str | None) -> None:
    assert default_contract().space_of(path) == space


def test_space_of_prefers_the_longest_folder(tmp_path: Path) -> None:
    text = yaml_block(
        "spaces:\n  memory: memory\n  desk: memory/desk\n  private: private\n"
        "authority:\n  memory: standing\n  desk: shared\n"
        "dampened_spaces:\n  desk: 0.5\n"
    )
    write_vault_contract(tmp_path, text)
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    contract = state.contract
    assert contract.space_of("memory/desk/todo.md") == "desk"
    assert contract.space_of("memory/desktop/x.md") == "memory"
    assert contract.authority_of("desk") == "shared"
    assert contract.authority_of("private") == "alignment"  # no entry: default_authority
    assert contract.dampening("desk") == 0.5


def test_authority_of() -> None:
    contract = default_contract()
    assert contract.authority_of("memory") == "standing"
    assert contract.authority_of("projects") == "shared"
    assert contract.authority_of("standards") == "alignment"
    assert contract.authority_of("private") == "private"
    assert contract.authority_of("unheard-of") == "alignment"
    assert contract.authority_of(None) == "alignment"
    assert contract.authority_of(contract.space_of("standards/storage-rules.md")) == "alignment"


def test_multipliers_and_areas() -> None:
    contract = default_contract()
    assert contract.multiplier("archived") == 0.5
    assert contract.multiplier("project_mismatch") == 0.8
    assert contract.multiplier("not-a-class") == 1.0
    assert contract.dampening("daily") == 0.9
    assert contract.dampening("memory") == 1.0
    assert contract.dampening(None) == 1.0
    assert contract.recall_exempt("private/x.md")
    assert not contract.recall_exempt("privateer/x.md")
    assert contract.is_phone_path("inbox/phone/clip.md")
    assert not contract.is_phone_path("inbox/other.md")
    assert contract.is_record_kind("moc")
    assert not contract.is_record_kind(None)
    assert contract.is_lifecycle("pinned")


# --------------------------------------------------------------------------------------------- prose


def test_section_lookup(tmp_path: Path) -> None:
    contract = default_contract()
    importance = contract.section("Importance")
    assert importance is not None
    assert "importance" in importance
    assert contract.section("importance") == importance  # case-insensitive
    assert contract.section("No such heading") is None

    write_vault_contract(tmp_path, "# Mine\n\n## Ranking\n\nMy own ranking notes.\n")
    own = load_contract(tmp_path).contract
    assert own.section("Ranking") == "My own ranking notes."
    assert own.section("Importance") == importance  # falls back to the packaged prose
    assert isinstance(own, Contract)


# --------------------------------------------------------------------------------------------- cache


def test_cache_rereads_after_changes_and_deletion(tmp_path: Path) -> None:
    cache = ContractCache(tmp_path)
    first = cache.get()
    assert not first.halted
    assert first.source.endswith("storage-rules.default.md")
    assert cache.get() is first  # nothing changed: no re-read

    path = write_vault_contract(tmp_path, yaml_block("thresholds:\n  daily_write_cap: 50\n"))
    second = cache.get()
    assert second.source == str(path)
    assert second.contract.thresholds.daily_write_cap == 50
    assert cache.get() is second

    path.write_text(yaml_block("thresholds:\n  daily_write_cap: 1234\n"), encoding="utf-8")  # size changes
    assert cache.get().contract.thresholds.daily_write_cap == 1234

    # same size, same inode: only the mtime tells; set it explicitly instead of sleeping
    before = path.stat()
    path.write_text(yaml_block("thresholds:\n  daily_write_cap: 4321\n"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    assert cache.get().contract.thresholds.daily_write_cap == 4321

    path.write_text(yaml_block("thresholds:\n  daily_write_cap: -1\n"), encoding="utf-8")
    halted = cache.get()
    assert halted.halted
    assert "thresholds.daily_write_cap" in halted.errors[0]

    path.unlink()
    gone = cache.get()
    assert not gone.halted
    assert gone.source.endswith("storage-rules.default.md")


def test_cache_with_explicit_path_and_refresh(tmp_path: Path) -> None:
    path = tmp_path / "rules.md"
    cache = ContractCache(None, path)
    assert cache.target == path
    assert cache.get().halted  # explicit file missing
    path.write_text(yaml_block("thresholds:\n  daily_card_budget: 3\n"), encoding="utf-8")
    assert cache.get().contract.thresholds.daily_card_budget == 3
    state = cache.get()
    assert cache.refresh() is not state


def test_cache_is_safe_across_threads(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, yaml_block("thresholds:\n  daily_write_cap: 77\n"))
    cache = ContractCache(tmp_path)
    seen: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            cap = cache.get().contract.thresholds.daily_write_cap
            with lock:
                seen.append(cap)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [77] * 400
