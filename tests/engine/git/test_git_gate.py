"""The corpus-write gate and `agentmd init-git`, against real repositories."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import corpus
from git_helpers import committer, git, make_repo, origins, stray_temp_files, tree, write

from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.git.health import git_health
from agentmd.engine.git.repo_init import GitError, init_git
from agentmd.engine.write.tempfiles import SCRATCH_DIR

# --------------------------------------------------------------------------------------------------
# Gate


def test_gate_refuses_degraded_and_dirty_vaults_and_passes_clean_ones(tmp_path: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    assert corpus_write_gate(plain_dir).reason == "git-degraded"

    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q")
    write(unborn, "a.md", "a\n")
    gate = corpus_write_gate(unborn)
    assert gate.reason == "git-degraded" and "no-commits" in gate.detail

    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n", "data.json": "{}\n", ".obsidian/app.json": "{}\n"})
    assert corpus_write_gate(repo).ok

    cases = {
        "notes/a.md": "modified markdown\n",
        "data.json": '{"modified": true}\n',
        "notes/untracked.md": "new\n",
        ".obsidian/plugins/x/data.json": "{}\n",
    }
    for rel, content in cases.items():
        before = (repo / rel).read_bytes() if (repo / rel).exists() else None
        write(repo, rel, content)
        gate = corpus_write_gate(repo)
        assert not gate.ok and gate.reason == "uncommitted-changes", rel
        assert rel in gate.detail and "commit" in gate.detail
        if before is None:
            (repo / rel).unlink()
        else:
            (repo / rel).write_bytes(before)
    assert corpus_write_gate(repo).ok

    write(repo, ".obsidian/plugins/x/data.json", "{}\n")
    assert "will not commit" in corpus_write_gate(repo).detail
    (repo / ".obsidian/plugins/x/data.json").unlink()

    many = [f"bulk/{i:02d}.md" for i in range(15)]
    for rel in many:
        write(repo, rel, "x\n")
    gate = corpus_write_gate(repo)
    assert "15 uncommitted paths" in gate.detail and "and 5 more" in gate.detail
    committer(repo).commit_cycle()
    assert corpus_write_gate(repo).ok

    write(repo, "ignored.tmp", "x\n")
    write(repo, ".gitignore", "*.tmp\n")
    committer(repo).commit_cycle()
    assert corpus_write_gate(repo).ok  # gitignored files do not count
    assert stray_temp_files(repo) == []


# --------------------------------------------------------------------------------------------------
# init-git


def test_init_git_creates_repo_gitignore_settings_and_first_commit(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "notes/a.md", "a\n")
    write(vault, ".obsidian/app.json", "{}\n")
    write(vault, ".obsidian/workspace.json", "{}\n")
    write(vault, ".smart-cache/blob", "cache\n")
    write(vault, ".trash/old.md", "old\n")

    summary = init_git(vault)

    first, why, *left = summary.splitlines()
    assert "initialised" in first and "(.smart-cache/)" in why and "corpus-write gate" in why
    assert [line.strip() for line in left] == [".smart-cache/blob"]  # every file left untracked, by name
    ignore = (vault / ".gitignore").read_text()
    for line in ("**/.obsidian/workspace*.json", ".trash/", ".DS_Store", "*.swp", "*~", ".#*", ".tmp.driveupload/"):
        assert line in ignore.splitlines()
    assert f"{SCRATCH_DIR}/" in ignore.splitlines()  # a crashed capture's temp file is never added by hand
    assert git(vault, "config", "--local", "gc.auto").stdout.strip() == "0"
    assert git(vault, "config", "--local", "maintenance.auto").stdout.strip() == "false"
    assert origins(vault) == ["local-edit"]
    assert tree(vault) == {".gitignore", "notes/a.md", ".obsidian/app.json"}
    assert git_health(vault).ok
    with pytest.raises(GitError, match=r"already has a \.git"):
        init_git(vault)
    with pytest.raises(GitError, match="does not exist"):
        init_git(tmp_path / "nowhere")


def test_init_git_keeps_an_existing_gitignore(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, ".gitignore", "private/\n*~\n")
    write(vault, "a.md", "a\n")
    init_git(vault)
    lines = (vault / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["private/", "*~"] and lines.count("*~") == 1 and ".trash/" in lines


def test_init_git_commits_the_settings_of_vaults_nested_in_folders(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    for sub in ("", "docs/", "Tasks-Demo/"):  # one repository holding three vaults
        write(vault, f"{sub}note.md", "a note\n")
        write(vault, f"{sub}.obsidian/app.json", "{}\n")
        write(vault, f"{sub}.obsidian/workspace.json", '{"open": "per device"}\n')
        write(vault, f"{sub}.obsidian/workspace-mobile.json", "{}\n")
    write(vault, "docs/.trash/gone.md", "trashed\n")
    write(vault, "docs/.smart-env/cache.bin", "cache\n")

    summary = init_git(vault)

    committed = tree(vault)
    for sub in ("", "docs/", "Tasks-Demo/"):
        assert f"{sub}.obsidian/app.json" in committed
        assert f"{sub}.obsidian/workspace.json" not in committed  # ignored at every depth
    assert "docs/.smart-env/cache.bin" not in committed
    named = [line.strip() for line in summary.splitlines()[2:]]
    assert named == ["docs/.smart-env/cache.bin"]  # .trash/ is ignored, so only the cache is left, named
    assert "docs/.smart-env/" in summary.splitlines()[1]
    git(vault, "add", "docs/.smart-env/cache.bin")
    git(vault, "commit", "-q", "-m", "the owner commits it")
    assert corpus_write_gate(vault).ok


@pytest.mark.parametrize("name", ["dendron-site", "obsidian-tasks", "vaultofknowledge", "ailurus-zh"])
def test_the_gate_passes_right_after_init_git_on_every_shared_corpus(tmp_path: Path, name: str) -> None:
    vault = tmp_path / name
    shutil.copytree(corpus(name), vault)
    summary = init_git(vault)
    assert "left untracked" not in summary, summary
    gate = corpus_write_gate(vault)
    assert gate.ok, gate.detail
