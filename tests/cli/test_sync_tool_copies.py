"""A file-sync tool's conflict copies through the command line: `agentmd conflicts` lists each with its tool
and original after a pass, and `agentmd resolve COPY --keep mine|theirs|both` ends one in one commit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import CliResult
from daemon_helpers import git, make_repo, origins

PLAN = "---\ntitle: Plan\n---\n# Plan\n\n- ship the importer\n- write the docs\n- cut the release\n"
BUDGET = "---\ntitle: Budget\n---\n# Budget\n\n- rent\n- travel\n- books\n"
COPIES = {
    "Plan (1).md": ("Google Drive", "Plan.md", PLAN.replace("write the docs", "write the guide")),
    "Budget.sync-conflict-20261204-101500-ABCDEF7.md": ("Syncthing", "Budget.md", BUDGET + "- the phone's line\n"),
    "Notes 2.md": ("iCloud", "Notes.md", "---\ntitle: Notes\n---\nsame lines\nand one more\n"),
}


def test_conflicts_lists_sync_tool_copies_and_resolve_ends_each(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    vault = make_repo(
        tmp_path / "vault", {"Plan.md": PLAN, "Budget.md": BUDGET, "Notes.md": "---\ntitle: Notes\n---\nsame lines\n"}
    )
    for rel, (_tool, _original, text) in COPIES.items():
        (vault / rel).write_text(text, encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "the sync tool's copies arrive")
    assert cli("reindex", "--vault", str(vault)).code == 0

    listed = cli("conflicts", "--vault", str(vault), "--json").json()
    assert {c["copy"]: (c["tool"], c["original"]) for c in listed["sync_tool_copies"]} == {
        rel: (tool, original) for rel, (tool, original, _text) in COPIES.items()
    }
    shown = cli("conflicts", "--vault", str(vault)).out
    assert "Plan (1).md  (Google Drive copy of Plan.md)" in shown and "agentmd resolve PATH" in shown

    theirs = cli("resolve", "Plan (1).md", "--keep", "theirs", "--vault", str(vault))
    assert theirs.code == 0, theirs.err
    assert (vault / "Plan.md").read_text(encoding="utf-8") == COPIES["Plan (1).md"][2]
    assert not (vault / "Plan (1).md").exists()

    copy = "Budget.sync-conflict-20261204-101500-ABCDEF7.md"
    both = cli("resolve", copy, "--keep", "both", "--vault", str(vault), "--json")
    assert both.code == 0, both.err
    assert both.json()["sibling"] == "Budget (kept copy).md"
    assert (vault / "Budget (kept copy).md").read_text(encoding="utf-8") == COPIES[copy][2]
    assert (vault / "Budget.md").read_text(encoding="utf-8") == BUDGET and not (vault / copy).exists()

    mine = cli("resolve", "Notes 2.md", "--keep", "mine", "--vault", str(vault))
    assert mine.code == 0, mine.err
    assert not (vault / "Notes 2.md").exists() and (vault / "Notes.md").exists()

    assert not git(vault, "status", "--porcelain").strip()
    assert origins(vault)[:3] == ["resolve", "resolve", "resolve"]
    assert cli("conflicts", "--vault", str(vault), "--json").json()["sync_tool_copies"] == []
    assert cli("reindex", "--vault", str(vault)).code == 0
    found = cli("search", "phone's line", "--vault", str(vault), "--json").json()
    assert "Budget (kept copy).md" in [r["note"] for r in found["results"]]


def test_resolve_refuses_a_note_that_is_no_copy(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    vault = make_repo(tmp_path / "vault", {"Meeting.md": "first\n", "Meeting 2.md": "a different note\n"})
    run = cli("resolve", "Meeting 2.md", "--keep", "mine", "--vault", str(vault))
    assert run.code != 0 and "no conflict" in run.err and (vault / "Meeting 2.md").exists()
