"""`agentmd log` (alias `changelog`): what changed, grouped by origin, read from real git history."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemon_helpers import git, make_repo


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})


def args(vault: Path) -> list[str]:
    return ["--vault", str(vault), "--index", str(vault.parent / "idx")]


def test_log_groups_commits_by_origin_and_filters(cli, vault: Path) -> None:
    for title in ("Use Postgres", "Prefer uv"):
        assert cli("capture", *args(vault), "--title", title, "--body", f"{title}.").code == 0
    path = cli("capture", *args(vault), "--title", "Retire me", "--body", "soon", "--json").json()["path"]
    assert cli("retire", *args(vault), path, "--yes").code == 0
    r = cli("log", *args(vault), "--json")
    assert r.code == 0, r.err
    groups = r.json()["origins"]
    assert sorted(groups) == ["capture", "manual", "retire"]
    assert len(groups["capture"]) == 3 and groups["retire"][0]["files"] == [{"status": "M", "path": path}]
    only = cli("changelog", *args(vault), "--origin", "retire", "--json").json()
    assert list(only["origins"]) == ["retire"] and only["commits"] == 1
    assert cli("log", *args(vault), "--since", "1d", "--json").json()["commits"] == 5
    assert "capture: 3 commit(s)" in cli("log", *args(vault)).out


def test_a_notes_biography_is_oldest_first_and_follows_renames(cli, vault: Path) -> None:
    path = cli("capture", *args(vault), "--title", "Moving note", "--body", "body", "--json").json()["path"]
    assert cli("confirm", *args(vault), path, "--yes").code == 0
    git(vault, "mv", path, "memory/moved.md")
    git(vault, "commit", "-q", "-m", "move it by hand")
    r = cli("log", *args(vault), "memory/moved.md", "--json")
    assert r.code == 0
    assert [c["origin"] for c in r.json()["changes"]] == ["capture", "confirm", "manual"]
    assert cli("log", *args(vault), "memory/never.md").code == 2


def test_every_commit_line_names_its_origin_and_its_machine(cli, vault: Path) -> None:
    (vault / "notes.md").write_text("# Notes\n", encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "sync: merge origin\n\norigin: sync\nhost: desk-7\n")
    text = cli("log", *args(vault)).out
    assert "sync: 1 commit(s)" in text
    (line,) = [ln for ln in text.splitlines() if "sync: merge origin" in ln]
    assert line.endswith("[desk-7]")
    (change,) = cli("log", *args(vault), "notes.md", "--json").json()["changes"]
    assert (change["origin"], change["host"]) == ("sync", "desk-7")
