"""How git is launched, against real repositories: planted hooks and fsmonitor never run, pathspecs are
literal, and a missing git executable is reported instead of raised.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from git_helpers import changed_in, committer, git, make_repo, origins, plant, write

from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.git.health import git_health, worktrees_inside

# --------------------------------------------------------------------------------------------------
# Hostile repositories and the git executable


def test_planted_hooks_and_fsmonitor_never_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    markers = tmp_path / "markers"
    markers.mkdir()
    for hook in ("pre-commit", "post-commit", "commit-msg", "post-index-change", "reference-transaction"):
        plant(repo / ".git/hooks" / hook, markers / f"git-hooks-{hook}")
    plant(tmp_path / "evil/fsmonitor.sh", markers / "fsmonitor")
    git(repo, "config", "core.fsmonitor", str(tmp_path / "evil/fsmonitor.sh"))

    c = committer(repo)
    for i in range(2):
        write(repo, f"notes/n{i}.md", f"{i}\n")
        assert c.commit_cycle().commits
        assert git_health(repo).ok and corpus_write_gate(repo).ok
    c.prepare()
    c.repack_if_due()
    worktrees_inside(repo)

    other_hooks = tmp_path / "evil/hooks"
    for hook in ("pre-commit", "post-commit", "post-index-change"):
        plant(other_hooks / hook, markers / f"hooks-path-{hook}")
    git(repo, "config", "core.hooksPath", str(other_hooks))
    write(repo, "notes/n9.md", "9\n")
    assert [x.paths for x in c.commit_cycle().commits] == [("notes/n9.md",)]
    assert corpus_write_gate(repo).ok

    assert sorted(os.listdir(markers)) == []
    assert len(origins(repo)) == 3
    # The plants are live: plain git runs them, which is exactly what agentmd must not do.
    git(repo, "status", plain=True)
    git(repo, "commit", "-q", "--allow-empty", "-m", "plain git", plain=True)
    assert {"fsmonitor", "hooks-path-pre-commit", "hooks-path-post-commit"} <= set(os.listdir(markers))


def test_glob_characters_in_file_names_are_literal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n", "notes/b.md": "b\n"})
    write(repo, "notes/a.md", "a staged by the user\n")
    git(repo, "add", "notes/a.md")
    write(repo, "notes/[ab].md", "a note whose name looks like a glob\n")
    result = committer(repo).commit_cycle()
    assert [c.paths for c in result.commits] == [("notes/[ab].md",)]
    assert changed_in(repo) == {"notes/[ab].md"}
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["notes/a.md"]


def test_missing_git_executable_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "notes/a.md", "edit\n")
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert git_health(repo).reason == "git-missing"
    assert corpus_write_gate(repo).reason == "git-degraded"
    c = committer(repo)
    result = c.commit_cycle()
    assert result.error and "install git" in result.error and c.state.commit_failures == 1
    assert worktrees_inside(repo) == []
    monkeypatch.undo()
    assert c.commit_cycle().commits and c.state.commit_failures == 0
