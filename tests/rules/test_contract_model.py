"""The contract's answers: routing, trust, spaces and authority, ranking multipliers, prose sections."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from contract_helpers import DAY, write_vault_contract, yaml_block

from agentmd.rules.contract import Contract, ContractState, default_contract, load_contract

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
