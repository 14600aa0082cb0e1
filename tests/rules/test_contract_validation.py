"""Validation of storage-rules settings: every rule names the key, what is wrong and how to fix it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from contract_helpers import write_vault_contract, yaml_block

from agentmd.rules.contract import default_settings, load_contract, merge, validate


def errors_for(fragment: dict[str, Any]) -> list[str]:
    """Validation errors of the default with `fragment` merged over it (as a vault file would be)."""
    return validate(merge(default_settings(), fragment))


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
    ("sync patterns not a mapping", {"sync_tool_patterns": ["*.tmp"]}, "`sync_tool_patterns` is a list, not a"),
    ("sync pattern kind unknown", {"sync_tool_patterns": {"temps": []}}, "`sync_tool_patterns.temps` is not a kind"),
    ("sync patterns not a list", {"sync_tool_patterns": {"temp": "*.x"}}, "`sync_tool_patterns.temp` is '*.x', not"),
    ("sync pattern not text", {"sync_tool_patterns": {"temp": [3]}}, "`sync_tool_patterns.temp[0]` is 3, not a"),
    ("sync pattern empty", {"sync_tool_patterns": {"temp": [" "]}}, "`sync_tool_patterns.temp[0]` (' ') is empty"),
    (
        "sync pattern bad regex",
        {"sync_tool_patterns": {"temp": ["re:(unclosed"]}},
        "`sync_tool_patterns.temp[0]` ('re:(unclosed') is not a regular expression",
    ),
    (
        "sync pattern with a folder",
        {"sync_tool_patterns": {"temp": ["cache/*.x"]}},
        "holds a `/`; a pattern matches a file's name",
    ),
    (
        "conflict glob without stem",
        {"sync_tool_patterns": {"conflict": ["* (conflict).md"]}},
        "`sync_tool_patterns.conflict[0]` ('* (conflict).md') has no `{stem}`",
    ),
    (
        "conflict regex without stem",
        {"sync_tool_patterns": {"conflict": ["re:.+ \\(conflict\\)\\.md"]}},
        "has no group `(?P<stem>...)`",
    ),
    (
        "placeholder with an unknown brace",
        {"sync_tool_patterns": {"placeholder": [".{name}.cloud"]}},
        "has a `{` that is not `{stem}` or `{ext}`",
    ),
    ("temp with stem", {"sync_tool_patterns": {"temp": ["{stem}.part"]}}, "uses {stem}, which only `conflict`"),
    ("glob unclosed class", {"sync_tool_patterns": {"temp": ["[abc"]}}, "has a `[` without its `]`"),
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


def test_sync_tool_patterns_that_validate_are_used_by_the_loaded_contract(tmp_path: Path) -> None:
    fragment = {
        "sync_tool_patterns": {
            "temp": ["*.partial-sync", ".cloudsync/"],
            "conflict": ["{stem} (conflict *){ext}", "re:(?P<stem>.+)\\.clash-\\d+(?P<ext>\\.md)"],
            "placeholder": [".{stem}{ext}.cloudf"],
        }
    }
    assert errors_for(fragment) == []
    vault = tmp_path / "vault"
    write_vault_contract(
        vault, "# Storage rules\n\n" + yaml_block(f"sync_tool_patterns: {json.dumps(fragment['sync_tool_patterns'])}")
    )
    state = load_contract(vault)
    assert not state.halted, state.errors
    patterns = state.contract.sync_tool_patterns
    assert patterns.is_temp("notes/Plan.md.PARTIAL-SYNC") and patterns.is_temp("a/.cloudsync/x.md")
    assert not patterns.is_temp("notes/Plan.md")
    assert patterns.conflict_original("Plan (conflict 2026-12-04).md") == "Plan.md"
    assert patterns.conflict_original("Plan.clash-7.md") == "Plan.md"
    assert patterns.placeholder_original(".Plan.md.cloudf") == "Plan.md"
    assert patterns.conflict_original("Plan.md") is None


def test_a_wrong_sync_tool_pattern_halts_the_contract_with_the_key(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault_contract(vault, "# Storage rules\n\n" + yaml_block('sync_tool_patterns: {conflict: ["*.conflict.md"]}'))
    state = load_contract(vault)
    assert state.halted and any("sync_tool_patterns.conflict[0]" in e and "{stem}" in e for e in state.errors)
