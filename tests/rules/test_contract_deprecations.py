"""`deprecations`: a retired type and the type that replaces it. A malformed map halts the contract by name; a
capture naming a retired type is filed as its replacement with a warning; enrichment reads a retired type as its
replacement, in the model's answer and in a note's own frontmatter."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract_helpers import DAY, write_vault_contract, yaml_block
from daemon_helpers import make_repo

from agentmd.engine.enrich.compose import updates_for
from agentmd.engine.enrich.prompt import AnswerRefused, read_answer
from agentmd.engine.index.store import Store
from agentmd.engine.write.capture import Capturer, CaptureRefused, CaptureRequest
from agentmd.rules import ContractCache
from agentmd.rules.contract import check_file, load_contract
from agentmd.vault_schema import parse_note

NOW = dt.datetime(2024, 3, 5, 10, 20, 30, tzinfo=dt.UTC)
# `idea` retired for `fact`: `types` must drop it, so the vault file sets its own types
RETIRING = yaml_block(
    """
types:
  decision: memory/decisions
  fact: memory/semantic
  lesson: memory/lessons
deprecations:
  idea: fact
  note: fact
"""
)


def halted_errors(vault: Path, block: str) -> list[str]:
    write_vault_contract(vault, "# Rules\n\n" + yaml_block(block))
    state = load_contract(vault)
    assert state.halted
    return list(state.errors)


# ------------------------------------------------------------------------------------------- validation


def test_a_valid_map_retires_types(tmp_path: Path) -> None:
    write_vault_contract(tmp_path, RETIRING)
    state = load_contract(tmp_path)
    assert not state.halted, state.errors
    contract = state.contract
    assert dict(contract.deprecations) == {"idea": "fact", "note": "fact"}
    assert contract.current_type("idea") == "fact" and contract.current_type("lesson") == "lesson"
    assert contract.class_dir("note") == "memory/semantic"
    folder, why = state.route("idea", DAY)
    assert folder == "memory/semantic" and "retired" in why and "'fact'" in why


@pytest.mark.parametrize(
    ("block", "named", "words"),
    [
        ("deprecations:\n  note: howto", "`deprecations.note`", "not a type in `types`"),
        ("deprecations:\n  note: fakt", "`deprecations.note`", "did you mean `fact`?"),
        ("deprecations:\n  note: memo\n  memo: fact", "`deprecations.note`", "'memo' is retired too"),
        ("deprecations:\n  note: memo\n  memo: note", "`deprecations.memo`", "'note' is retired too"),
        ("deprecations:\n  note: note", "`deprecations.note`", "in favour of itself"),
        ("deprecations: [note, fact]", "`deprecations`", "is a list, not a mapping"),
        ("deprecations:\n  note: [fact]", "`deprecations.note`", "not a type name"),
        ("deprecations:\n  Old Note: fact", "`deprecations.Old Note`", "not kebab-case"),
        ("deprecations:\n  idea: fact", "`types.idea`", "is retired by `deprecations`"),
    ],
)
def test_a_malformed_map_halts_the_contract_by_name(tmp_path: Path, block: str, named: str, words: str) -> None:
    errors = halted_errors(tmp_path, block)
    assert any(named in e and words in e for e in errors), errors


def test_a_retired_type_still_listed_in_the_defaults_types_says_where_it_comes_from(tmp_path: Path) -> None:
    errors = halted_errors(tmp_path, "deprecations:\n  idea: fact")
    assert any("comes from the packaged default; set `types`" in e for e in errors), errors
    assert check_file(tmp_path / "standards" / "storage-rules.md") == errors


def test_an_empty_map_retires_nothing(tmp_path: Path) -> None:
    for block in ("deprecations:", "deprecations: {}"):
        write_vault_contract(tmp_path, yaml_block(block))
        state = load_contract(tmp_path)
        assert not state.halted, state.errors
        assert dict(state.contract.deprecations) == {}


# ------------------------------------------------------------------------------------------------ capture


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"}).resolve()
    write_vault_contract(root, RETIRING)
    return root


@pytest.fixture
def capturer(tmp_path: Path, vault: Path) -> Iterator[Capturer]:
    store = Store(tmp_path / "cache")
    yield Capturer(vault, tmp_path / "state", ContractCache(vault), store, now=lambda: NOW)
    store.close()


def test_a_capture_naming_a_retired_type_is_filed_as_its_replacement(capturer: Capturer, vault: Path) -> None:
    result = capturer.capture(CaptureRequest(title="Otters sleep holding hands", body="They do.", type="idea", why="w"))
    assert result.path == "memory/semantic/otters-sleep-holding-hands.md"
    assert result.status == "active" and result.stamps["filing_confidence"] == "high"
    assert len(result.warnings) == 1
    assert "'idea' is retired" in result.warnings[0] and "filed as 'fact'" in result.warnings[0]
    fm = parse_note(result.path, (vault / result.path).read_bytes(), 0).frontmatter
    assert fm["type"] == "fact"
    assert result.stamps["route"] == "type: 'fact' routes to memory/semantic"


def test_a_current_type_gets_no_warning_and_an_unknown_one_is_still_refused(capturer: Capturer) -> None:
    result = capturer.capture(CaptureRequest(title="Use Postgres", body="b", type="decision", why="w"))
    assert result.warnings == []
    with pytest.raises(CaptureRefused) as info:
        capturer.capture(CaptureRequest(title="A howto", body="b", type="howto", why="w"))
    assert info.value.code == "unknown-type"


# --------------------------------------------------------------------------------------------- enrichment


def answer(type_: str) -> str:
    return json.dumps(
        {
            "title": "Otters",
            "type": type_,
            "summary": "Otters hold hands.",
            "tags": [],
            "aliases": [],
            "related": [],
            "importance": 2,
            "confidence": 0.9,
        }
    )


def test_an_answer_naming_a_retired_type_is_read_as_its_replacement() -> None:
    common = {"types": ["decision", "fact"], "offered": [], "note_text": "Otters hold hands.", "note_title": ""}
    proposal = read_answer(answer("idea"), **common, file_stem="otters", deprecations={"idea": "fact"})
    assert proposal.type == "fact"
    with pytest.raises(AnswerRefused):  # without the map it is a type the contract does not list
        read_answer(answer("idea"), **common, file_stem="otters")


def test_a_note_typed_with_a_retired_type_is_retyped_to_its_replacement() -> None:
    common = {"types": ["decision", "fact"], "offered": [], "note_text": "Otters hold hands.", "note_title": ""}
    proposal = read_answer(answer("decision"), **common, file_stem="otters")
    kwargs = {"floor": 0.5, "types": {"decision": "d", "fact": "f"}, "at": "2024-03-05T10:20:30Z"}
    updates, verdict = updates_for(
        {"type": "idea"}, proposal, **kwargs, model="m", prompt_version="p", deprecations={"idea": "fact"}
    )
    assert updates["type"] == "fact" and verdict == "filed"  # the map decides, not the model's pick
    updates, _ = updates_for({"type": "fact"}, proposal, **kwargs, model="m", prompt_version="p")
    assert "type" not in updates  # a current type stands
