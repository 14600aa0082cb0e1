"""`agentmd rules` prints the contract in effect with its two hashes; `agentmd rules --history` lists every
committed version of the vault's contract file, newest first, following renames, with the origin trailer and
both hashes of each version (or its errors). A real vault with real git, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from contract_helpers import yaml_block
from git_helpers import git, make_repo, write

from agentmd.rules.contract import default_contract, load_contract

CONTRACT = "standards/storage-rules.md"
DRAFT = "standards/storage-rules-draft.md"
INTRO = "# My rules\n\nThese are the rules of my vault, written out at some length so a rename is recognised.\n\n"
RETIRING = yaml_block("types:\n  decision: memory/decisions\n  fact: memory/semantic\ndeprecations:\n  idea: fact")


def commit(vault: Path, summary: str, origin: str | None = None) -> str:
    git(vault, "add", "-A")
    message = ["-m", summary] + (["-m", f"origin: {origin}\nhost: laptop"] if origin else [])
    git(vault, "commit", "-q", *message)
    return git(vault, "rev-parse", "HEAD").stdout.strip()


def rules(cli, vault: Path, *extra: str):
    return cli("rules", "--vault", str(vault), "--index", str(vault.parent / "idx"), *extra)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault", {"README.md": "# Vault\n"}).resolve()


def test_rules_prints_both_hashes_of_the_contract_in_effect(cli, vault: Path) -> None:
    default = default_contract()
    r = rules(cli, vault, "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert data["rules_hash"] == default.rules_hash and data["judgment_hash"] == default.judgment_hash
    assert data["halted"] is False and data["deprecations"] == {} and "decision" in data["types"]

    write(vault, CONTRACT, INTRO + RETIRING)
    data = rules(cli, vault, "--json").json()
    mine = load_contract(vault).contract
    assert data["source"] == str(vault / CONTRACT) and data["deprecations"] == {"idea": "fact"}
    assert data["judgment_hash"] == mine.judgment_hash != default.judgment_hash
    text = rules(cli, vault).out
    assert f"rules hash     {mine.rules_hash}" in text and f"judgment hash  {mine.judgment_hash}" in text
    assert "retired        idea -> fact" in text


def test_a_halted_contract_is_said_with_its_errors(cli, vault: Path) -> None:
    write(vault, CONTRACT, yaml_block("deprecations:\n  note: howto"))
    r = rules(cli, vault)
    assert r.code == 1
    assert "halted" in r.out and "`deprecations.note`" in r.out and "not a type in `types`" in r.out
    data = rules(cli, vault, "--json").json()
    assert data["halted"] is True and data["rules_hash"] == default_contract().rules_hash


def test_history_lists_every_committed_version_newest_first(cli, vault: Path) -> None:
    write(vault, DRAFT, INTRO + yaml_block("link_convention: obsidian"))
    drafted = commit(vault, "a draft of the rules")  # no trailer: the owner's own commit
    git(vault, "mv", DRAFT, CONTRACT)
    moved = commit(vault, "the draft becomes the contract", "local-edit")
    write(vault, CONTRACT, INTRO + RETIRING)
    retired = commit(vault, "retire idea", "local-edit")
    write(vault, CONTRACT, INTRO.replace("at some length", "at great length") + RETIRING)
    reworded = commit(vault, "reword the prose", "local-edit")
    write(vault, CONTRACT, INTRO + yaml_block("deprecations: [idea]"))
    broken = commit(vault, "a broken edit", "local-edit")
    (vault / CONTRACT).unlink()
    removed = commit(vault, "drop the contract")
    write(vault, CONTRACT, INTRO + RETIRING)
    restored = commit(vault, "bring it back", "local-edit")
    write(vault, "memory/other.md", "# Other\n")
    commit(vault, "an unrelated note", "capture")  # not a version of the contract

    r = rules(cli, vault, "--history", "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert data["path"] == CONTRACT
    versions = data["versions"]
    shas = [v["sha"] for v in versions]
    assert shas == [restored, removed, broken, reworded, retired, moved, drafted]

    default, mine = default_contract(), load_contract(vault).contract
    by = dict(zip(shas, versions, strict=True))
    assert by[restored]["rules_hash"] == mine.rules_hash and by[restored]["judgment_hash"] == mine.judgment_hash
    assert by[restored]["origin"] == "local-edit" and by[restored]["host"] == "laptop"
    assert by[reworded]["rules_hash"] == by[retired]["rules_hash"]  # the prose changed, the settings did not
    assert by[removed]["removed"] is True and by[removed]["rules_hash"] == default.rules_hash
    assert by[broken]["rules_hash"] is None and by[broken]["judgment_hash"] is None
    assert any("`deprecations` is a list, not a mapping" in e for e in by[broken]["errors"])
    assert by[moved]["judgment_hash"] == default.judgment_hash  # one key, the default's own value
    assert by[drafted]["path"] == DRAFT and by[drafted]["origin"] == "manual"
    assert by[drafted]["rules_hash"] == by[moved]["rules_hash"] == default.rules_hash
    assert by[retired]["judgment_hash"] != by[moved]["judgment_hash"]  # retiring a type re-owes judgments

    text = rules(cli, vault, "--history").out
    lines = text.splitlines()
    assert lines[0] == f"{CONTRACT}: 7 committed version(s), newest first"
    assert lines[1].startswith(f"  {restored[:10]}  ") and "origin: local-edit" in lines[1]
    assert f"rules {mine.rules_hash}  judgment {mine.judgment_hash}" in lines[2]
    assert "does not parse" in text and "removed; the packaged default applied" in text
    assert f"(as {DRAFT})" in text


def test_history_without_commits_of_the_contract_says_so(cli, vault: Path) -> None:
    r = rules(cli, vault, "--history")
    assert r.code == 0, r.err
    assert "no committed version" in r.out
    assert rules(cli, vault, "--history", "--json").json() == {"path": CONTRACT, "versions": []}


def test_history_of_a_vault_without_git_is_an_error(cli, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    r = rules(cli, plain, "--history")
    assert r.code == 1
    assert "git history" in r.err
