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
    assert cli("log", *args(vault), "--since", "yesterday", "--json").json()["commits"] == 5  # as --after reads
    assert "capture: 3 commit(s)" in cli("log", *args(vault)).out
    missing = cli("log", *args(vault), "memory/never-there.md")
    assert missing.code == 2 and "no such note in the vault" in missing.err


def test_a_notes_biography_is_oldest_first_and_follows_renames(cli, vault: Path) -> None:
    path = cli("capture", *args(vault), "--title", "Moving note", "--body", "body", "--json").json()["path"]
    assert cli("confirm", *args(vault), path, "--yes").code == 0
    git(vault, "mv", path, "memory/moved.md")
    git(vault, "commit", "-q", "-m", "move it by hand")
    r = cli("log", *args(vault), "memory/moved.md", "--json")
    assert r.code == 0
    assert [c["origin"] for c in r.json()["changes"]] == ["capture", "confirm", "manual"]
    assert cli("log", *args(vault), "memory/never.md").code == 2


def test_a_note_made_from_the_same_template_as_a_deleted_one_has_its_own_biography(cli, vault: Path) -> None:
    template = "---\ntype: decision\nstatus: active\n---\n# {t}\n\n## Context\n\n## Decision\n\n## Why\n\n{b}\n"
    (vault / "memory").mkdir(exist_ok=True)
    (vault / "memory/old-secret.md").write_text(template.format(t="Old", b="the old one"), encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "the old note")
    (vault / "memory/old-secret.md").unlink()
    (vault / "memory/new-choice.md").write_text(template.format(t="New", b="another one entirely"), encoding="utf-8")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "one note gone, another made")
    r = cli("log", *args(vault), "memory/new-choice.md", "--json")
    assert [c["summary"] for c in r.json()["changes"]] == ["one note gone, another made"]


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


def test_a_commit_from_a_machine_whose_clock_was_behind_hides_nothing_after_it(tmp_path: Path) -> None:
    """A merge dated two days back (a machine with a slow clock synced it) under an hour of new commits: every
    commit of the hour is in the history since an hour ago, for the log, the revert of an origin and the page."""
    import datetime as dt
    import os
    import subprocess

    from agentmd.engine.curate.changelog import history

    root = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    now = dt.datetime.now(dt.UTC)

    def commit(name: str, when: dt.datetime) -> None:
        (root / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
        stamp = when.isoformat(timespec="seconds")
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
        message = f"{name}\n\norigin: capture\n"
        subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", message], check=True, env=env)

    for i in range(8):
        commit(f"recent-{i}", now - dt.timedelta(minutes=30 - i))
    commit("from-the-slow-clock", now - dt.timedelta(days=2))
    commit("newest", now - dt.timedelta(minutes=1))
    found = history(root, since=now - dt.timedelta(hours=1))
    subjects = {c.summary for c in found}
    assert {f"recent-{i}" for i in range(8)} | {"newest"} <= subjects, subjects
    assert "from-the-slow-clock" not in subjects
