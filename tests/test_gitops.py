"""The git layer against real repositories: commits and origins, the index.lock protocol, hostile repos, gate.

Every test builds a real repository in tmp_path and plays the user with the real git CLI. Time is
injected (a fake monotonic clock whose sleep advances it, and a settable wall clock), never patched.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentmd.engine.git.gitops import (
    ORIGINS,
    CommitState,
    Committer,
    GitError,
    corpus_write_gate,
    git_health,
    init_git,
    worktrees_inside,
)

# The test's own git calls play "the user", but must not trip the hooks a test plants on purpose.
SAFE = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]


def git(repo: Path, *args: str, check: bool = True, plain: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    argv = ["git", *([] if plain else SAFE), *args]
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}")
    return proc


def make_repo(root: Path, files: dict[str, str | bytes] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Vault Owner")
    git(root, "config", "user.email", "owner@example.com")
    for rel, content in (files or {"notes/a.md": "# A\n", "notes/b.md": "# B\n"}).items():
        write(root, rel, content)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def origins(repo: Path) -> list[str]:
    """Origin trailers, newest commit first, read the way the spec says they must be readable."""
    out = git(repo, "log", "--format=%(trailers:key=origin,valueonly)%x00").stdout
    return [chunk.strip() for chunk in out.split("\0") if chunk.strip()]


def tree(repo: Path, rev: str = "HEAD") -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", rev).stdout.splitlines())


def show(repo: Path, spec: str) -> str:
    return git(repo, "show", spec).stdout


def blob(repo: Path, spec: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "cat-file", "blob", spec], cwd=repo, env=env, capture_output=True, check=True).stdout


def changed_in(repo: Path, rev: str = "HEAD") -> set[str]:
    out = git(repo, "show", "--format=", "--name-only", "--no-renames", rev).stdout
    return set(out.split())


def status(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain=v1", "--untracked-files=all").stdout.splitlines()


def stray_temp_files(repo: Path) -> list[str]:
    return sorted(
        n for n in os.listdir(repo / ".git") if "agentmd" in n or n.startswith("next-index") or n == "index.lock"
    )


class FakeClock:
    """A monotonic clock that only moves when someone sleeps on it (or the test advances it)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


class FakeWall:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def committer(repo: Path, phone: tuple[str, ...] = (), **kw: object) -> Committer:
    return Committer(repo, phone_paths=lambda: phone, **kw)  # type: ignore[arg-type]


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def marker(pid: int, host: str | None = None, boot: str | None = None) -> bytes:
    return f"held by agentmd (pid {pid}, host {host or socket.gethostname()}, boot {boot or boot_id()})\n".encode()


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


# --------------------------------------------------------------------------------------------------
# What gets committed, and with which origin


def test_edits_new_deleted_renamed_and_binary_files_commit_as_local_edit(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "v", {"notes/a.md": "a\n", "notes/b.md": "b\n", "notes/c.md": "c\n", "img.png": b"\x89"}
    )
    write(repo, "notes/a.md", "a edited\n")
    write(repo, "notes/new.md", "new\n")
    (repo / "notes/b.md").unlink()
    (repo / "notes/c.md").rename(repo / "notes/c-renamed.md")
    write(repo, "img.png", b"\x89PNG\x00\x01")
    write(repo, "data/table.csv", "x,y\n1,2\n")

    result = committer(repo).commit_cycle()

    assert result.error is None and result.skipped is None
    assert [c.origin for c in result.commits] == ["local-edit"]
    commit = result.commits[0]
    assert set(commit.paths) == {
        "notes/a.md",
        "notes/new.md",
        "notes/b.md",
        "notes/c.md",
        "notes/c-renamed.md",
        "img.png",
        "data/table.csv",
    }
    assert commit.sha == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert origins(repo) == ["local-edit"]  # the hand-made initial commit has no trailer
    assert tree(repo) == {"notes/a.md", "notes/new.md", "notes/c-renamed.md", "img.png", "data/table.csv"}
    assert blob(repo, "HEAD:img.png") == b"\x89PNG\x00\x01"
    assert status(repo) == []
    assert stray_temp_files(repo) == []


def test_message_has_summary_blank_line_and_parseable_trailer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    for i in range(5):
        write(repo, f"n/{i}.md", f"{i}\n")
    committer(repo).commit_cycle()
    raw = git(repo, "log", "-1", "--format=%B").stdout
    subject, blank, trailer = raw.split("\n")[:3]
    assert subject == "local-edit: 5 files (n/0.md, n/1.md, n/2.md, and 2 more)"
    assert blank == "" and trailer == "origin: local-edit"
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"], input=raw, capture_output=True, text=True, check=True
    ).stdout
    assert parsed.strip() == "origin: local-edit"


def test_phone_file_and_hand_edit_become_two_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "inbox/phone/clip.md", "from the phone\n")
    write(repo, "notes/a.md", "edited by hand\n")
    write(repo, "inbox/phoney.md", "not under the phone folder\n")

    result = committer(repo, phone=("inbox/phone/",)).commit_cycle()

    assert [(c.origin, c.paths) for c in result.commits] == [
        ("phone", ("inbox/phone/clip.md",)),
        ("local-edit", ("inbox/phoney.md", "notes/a.md")),
    ]
    assert origins(repo) == ["local-edit", "phone"]
    assert changed_in(repo, "HEAD~1") == {"inbox/phone/clip.md"}
    assert changed_in(repo, "HEAD") == {"inbox/phoney.md", "notes/a.md"}


def test_note_origin_gives_a_capture_commit_and_is_consumed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    c = committer(repo)
    c.note_origin("memory/decision.md", "capture")
    write(repo, "memory/decision.md", "decided\n")
    c.note_origin("probe/self.md", "self-probe")
    write(repo, "probe/self.md", "probe\n")
    write(repo, "notes/b.md", "hand\n")

    result = c.commit_cycle()

    assert [c.origin for c in result.commits] == ["capture", "self-probe", "local-edit"]
    assert origins(repo) == ["local-edit", "self-probe", "capture"]
    write(repo, "memory/decision.md", "edited later by hand\n")
    assert [c.origin for c in c.commit_cycle().commits] == ["local-edit"]
    with pytest.raises(ValueError, match="unknown commit origin"):
        c.note_origin("x.md", "agent")
    assert ORIGINS == ("capture", "phone", "self-probe", "local-edit")


def test_untracked_dot_dirs_and_scratch_files_are_never_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/x.md": "x\n", ".obsidian/app.json": "{}\n"})
    write(repo, ".obsidian/app.json", '{"theme": "dark"}\n')  # tracked: committed
    write(repo, ".obsidian/new.json", "{}\n")  # untracked under a dot dir: left alone
    write(repo, "notes/.hidden/deep.md", "x\n")
    for scratch in ("notes/x.md.swp", "notes/x.md.swx", "notes/x.md~", "notes/.#x.md", "notes/4913"):
        write(repo, scratch, "scratch\n")
    write(repo, ".tmp.driveupload/y", "upload\n")
    write(repo, "notes/keep.md", "real note\n")

    result = committer(repo).commit_cycle()

    assert [set(c.paths) for c in result.commits] == [{".obsidian/app.json", "notes/keep.md"}]
    assert tree(repo) == {"notes/x.md", ".obsidian/app.json", "notes/keep.md"}
    assert '"dark"' in show(repo, "HEAD:.obsidian/app.json")
    left = {line[3:] for line in status(repo)}
    assert ".obsidian/new.json" in left and "notes/x.md.swp" in left and ".tmp.driveupload/y" in left


def test_large_file_is_committed_with_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "attachments/scan.pdf", b"%PDF" + b"\0" * 4996)
    result = committer(repo, large_file_bytes=1000).commit_cycle()
    assert result.commits and "attachments/scan.pdf" in tree(repo)
    assert any("attachments/scan.pdf" in w and "5000 bytes" in w for w in result.warnings)


def test_nothing_dirty_is_a_success_that_commits_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    head = git(repo, "rev-parse", "HEAD").stdout
    result = committer(repo).commit_cycle()
    assert result == type(result)([], None, None, [])
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert stray_temp_files(repo) == []


def test_glob_characters_in_file_names_are_literal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n", "notes/b.md": "b\n"})
    write(repo, "notes/a.md", "a staged by the user\n")
    git(repo, "add", "notes/a.md")
    write(repo, "notes/[ab].md", "a note whose name looks like a glob\n")
    result = committer(repo).commit_cycle()
    assert [c.paths for c in result.commits] == [("notes/[ab].md",)]
    assert changed_in(repo) == {"notes/[ab].md"}
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["notes/a.md"]


# --------------------------------------------------------------------------------------------------
# The user's staging


def test_user_staging_is_preserved_and_left_for_the_user(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "one\n", "notes/b.md": "b\n", "notes/gone.md": "g\n"})
    write(repo, "notes/a.md", "one\ntwo\n")
    git(repo, "add", "notes/a.md")  # the user stages part of their work ...
    write(repo, "notes/a.md", "one\ntwo\nthree\n")  # ... and keeps editing
    staged_blob = git(repo, "rev-parse", ":notes/a.md").stdout.strip()
    write(repo, "notes/new.md", "new\n")
    git(repo, "add", "notes/new.md")
    git(repo, "rm", "-q", "--cached", "notes/gone.md")  # untrack, keep the file
    write(repo, "notes/b.md", "edited by hand, not staged\n")

    c = committer(repo)
    result = c.commit_cycle()

    assert [c.paths for c in result.commits] == [("notes/b.md",)]
    assert changed_in(repo) == {"notes/b.md"}
    assert git(repo, "rev-parse", ":notes/a.md").stdout.strip() == staged_blob
    assert set(git(repo, "diff", "--cached", "--name-only").stdout.split()) == {
        "notes/a.md",
        "notes/new.md",
        "notes/gone.md",
    }
    assert any("notes/a.md" in w and "staged" in w for w in result.warnings)
    assert c.commit_cycle().warnings == []  # said once, not every cycle

    git(repo, "commit", "-q", "-m", "the user's own commit")
    assert show(repo, "HEAD:notes/a.md") == "one\ntwo\n"
    assert "notes/gone.md" not in tree(repo)
    # After the user's commit, the rest of a.md is an ordinary hand edit, and notes/gone.md is an ordinary
    # untracked, not ignored file: both are committed (to keep a file out of history, .gitignore it).
    result = c.commit_cycle()
    assert [c.paths for c in result.commits] == [("notes/a.md", "notes/gone.md")]
    assert show(repo, "HEAD:notes/a.md") == "one\ntwo\nthree\n"
    assert status(repo) == []


def test_missing_index_is_rebuilt_from_head_not_read_as_mass_deletion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {f"n/{i}.md": f"{i}\n" for i in range(5)})
    (repo / ".git/index").unlink()
    write(repo, "n/0.md", "changed\n")
    result = committer(repo).commit_cycle()
    assert [c.paths for c in result.commits] == [("n/0.md",)]
    assert tree(repo) == {f"n/{i}.md" for i in range(5)}
    assert status(repo) == []


# --------------------------------------------------------------------------------------------------
# Locks


def test_foreign_lock_is_waited_on_skipped_and_never_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    lock = repo / ".git/index.lock"
    lock.write_bytes(b"")
    write(repo, "notes/a.md", "edited\n")
    clock, wall = FakeClock(), FakeWall()
    c = committer(repo, lock_wait=10.0, clock=clock, sleep=clock.sleep, wall=wall)
    head = git(repo, "rev-parse", "HEAD").stdout

    first = c.commit_cycle()
    assert first.commits == [] and first.error is None
    assert first.skipped is not None and str(lock) in first.skipped and " s old" in first.skipped
    assert clock.slept == pytest.approx(10.0, abs=0.01)
    assert lock.exists() and lock.read_bytes() == b""
    assert c.state.skipped_cycles == 1 and c.state.commit_failures == 0
    assert git(repo, "rev-parse", "HEAD").stdout == head

    first_skip_at = wall.now
    wall.now += timedelta(minutes=1)
    second = c.commit_cycle()  # the lock outlasted a cycle: now it counts towards the stall alarm
    assert second.skipped and c.state.skipped_cycles == 2
    assert c.state.commit_failures == 1
    assert c.state.first_commit_failure == first_skip_at.isoformat(timespec="seconds")
    assert c.state.red(first_skip_at + timedelta(minutes=30))
    assert lock.read_bytes() == b""

    lock.write_bytes(b"some other tool holds this\n")
    assert c.commit_cycle().skipped and lock.read_bytes() == b"some other tool holds this\n"

    lock.unlink()
    third = c.commit_cycle()
    assert [x.origin for x in third.commits] == ["local-edit"]
    assert c.state.commit_failures == 0 and c.state.first_commit_failure is None
    assert stray_temp_files(repo) == []


def test_prepare_removes_only_our_own_stale_lock(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    lock = repo / ".git/index.lock"
    write(repo, "notes/a.md", "edited while the old daemon died\n")
    pid = dead_pid()
    lock.write_bytes(marker(pid))
    clock = FakeClock()
    c = committer(repo, clock=clock, sleep=clock.sleep)

    assert c.commit_cycle().skipped  # a cycle never removes a lock, even one that looks like ours
    assert lock.exists()
    lines = c.prepare()
    assert f"removed a stale index.lock left by a dead agentmd (pid {pid})" in lines
    assert not lock.exists()
    assert [x.origin for x in c.commit_cycle().commits] == ["local-edit"]


@pytest.mark.parametrize("case", ["this-process", "sleeping-child", "other-host", "other-boot", "not-a-marker"])
def test_prepare_leaves_every_other_lock_alone(tmp_path: Path, case: str) -> None:
    repo = make_repo(tmp_path / "v")
    lock = repo / ".git/index.lock"
    child = None
    if case == "this-process":
        content = marker(os.getpid())
    elif case == "sleeping-child":
        child = subprocess.Popen(["sleep", "30"])
        content = marker(child.pid)
    elif case == "other-host":
        content = marker(dead_pid(), host="laptop-" + socket.gethostname())
    elif case == "other-boot":
        content = marker(dead_pid(), boot="00000000-1111-2222-3333-444444444444")
    else:
        content = f"held by agentmd pid {dead_pid()}\n".encode()
    lock.write_bytes(content)
    try:
        lines = Committer(repo, phone_paths=tuple).prepare()
    finally:
        if child is not None:
            child.kill()
            child.wait()
    assert lock.read_bytes() == content
    assert not any(line.startswith("removed") for line in lines)
    assert any("left alone" in line or "leaves it" in line for line in lines)


def test_prepare_pins_repo_local_gc_settings_and_sweeps_dead_temp_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    git(repo, "config", "gc.auto", "6700")
    stray = repo / f".git/index.agentmd-{dead_pid()}-abc123"
    stray.write_bytes(b"DIRC")
    lines = Committer(repo, phone_paths=tuple).prepare()
    assert git(repo, "config", "--local", "gc.auto").stdout.strip() == "0"
    assert git(repo, "config", "--local", "maintenance.auto").stdout.strip() == "false"
    assert any("gc.auto=0" in line and "6700" in line for line in lines)
    assert any("maintenance.auto=false" in line for line in lines)
    assert not stray.exists()
    assert Committer(repo, phone_paths=tuple).prepare() == []  # nothing left to change


# --------------------------------------------------------------------------------------------------
# Hostile repositories


def plant(script: Path, marker_file: Path) -> None:
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\necho ran >> '{marker_file}'\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


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


def test_degraded_repositories_report_without_raising(tmp_path: Path) -> None:
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    assert git_health(plain_dir).reason == "not-a-repository"
    assert "init-git" in git_health(plain_dir).detail
    assert git_health(tmp_path / "missing").reason == "not-a-repository"

    renamed = make_repo(tmp_path / "renamed")
    (renamed / ".git").rename(renamed / "git 2")
    health = git_health(renamed)
    assert health.reason == "not-a-repository" and "git 2" in health.detail

    conflicted = make_repo(tmp_path / "conflicted")
    sha = git(conflicted, "rev-parse", "HEAD").stdout
    (conflicted / ".git/refs/heads/main (conflicted copy 2026-05-01)").write_text(sha)
    health = git_health(conflicted)
    assert health.reason == "broken" and "conflicted copy" in health.detail

    garbage_head = make_repo(tmp_path / "garbage-head")
    (garbage_head / ".git/HEAD").write_bytes(b"\x00\xffnot a ref")
    assert git_health(garbage_head).reason == "broken"

    garbage_ref = make_repo(tmp_path / "garbage-ref")
    (garbage_ref / ".git/refs/heads/main").write_text("this is not a commit id\n")
    assert git_health(garbage_ref).reason == "broken"

    missing_object = make_repo(tmp_path / "missing-object")
    sha = git(missing_object, "rev-parse", "HEAD").stdout.strip()
    (missing_object / ".git/objects" / sha[:2] / sha[2:]).unlink()
    health = git_health(missing_object)
    assert health.reason == "broken" and "missing" in health.detail

    git_file = tmp_path / "gitfile"
    git_file.mkdir()
    (git_file / ".git").write_text("gitdir: /nowhere\n")
    assert git_health(git_file).reason == "broken"

    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q", "-b", "main")
    assert git_health(unborn).reason == "no-commits"

    deep_broken = make_repo(tmp_path / "deep")
    write(deep_broken, "notes/a.md", "second\n")
    git(deep_broken, "commit", "-qam", "second")
    old = git(deep_broken, "rev-parse", "HEAD~1:notes/a.md").stdout.strip()
    (deep_broken / ".git/objects" / old[:2] / old[2:]).unlink()
    assert git_health(deep_broken).ok
    assert git_health(deep_broken, deep=True).reason == "broken"

    # Nothing is created or "repaired": a cycle on a degraded repo reports and counts a failure.
    for vault in (plain_dir, renamed, conflicted, garbage_ref):
        c = committer(vault)
        result = c.commit_cycle()
        assert result.error and "degraded" in result.error and not result.commits
        assert c.state.commit_failures == 1
        assert corpus_write_gate(vault).reason == "git-degraded"
        assert c.prepare()[0].startswith("git is degraded")
        assert c.repack_if_due() is not None
    assert not (plain_dir / ".git").exists() and not (renamed / ".git").exists()
    assert worktrees_inside(plain_dir) == []


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


def test_merge_in_progress_skips_the_cycle(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    sha = git(repo, "rev-parse", "HEAD").stdout
    (repo / ".git/MERGE_HEAD").write_text(sha)
    write(repo, "notes/a.md", "mid-merge edit\n")
    result = committer(repo).commit_cycle()
    assert result.skipped and "merge" in result.skipped and not result.commits
    assert stray_temp_files(repo) == []


# --------------------------------------------------------------------------------------------------
# Concurrency with a user's own git


def test_user_git_loop_and_committer_cycles_lose_nothing(tmp_path: Path) -> None:
    """A user's add/commit loop against ~100+ daemon cycles: nothing lost, nothing reverted, staging intact.

    The user's files live in a dot folder, so the daemon never picks them up while they are untracked
    and each user commit must contain exactly what the user staged. After staging, the user appends a
    tail to the file: the daemon must never slip that unstaged tail into the user's commit, and commits
    it itself once the user's commit made the file tracked.
    """
    repo = make_repo(tmp_path / "v", {"daemon/seed.md": "seed\n", ".user/seed.md": "seed\n"})
    user_files = [f".user/u{i:03d}.md" for i in range(200)]
    errors: list[str] = []
    retryable = ("index.lock", "cannot lock ref")

    def user_loop() -> None:
        def retrying(*args: str) -> None:
            for _ in range(3000):
                proc = git(repo, *args, check=False)
                if proc.returncode == 0:
                    return
                if not any(text in proc.stderr for text in retryable):
                    errors.append(f"{args}: {proc.stderr}{proc.stdout}")
                    return
                time.sleep(0.002)
            errors.append(f"{args}: gave up retrying")

        for i, rel in enumerate(user_files):
            write(repo, rel, f"user note {i}\n")
            retrying("add", "--", rel)
            write(repo, rel, f"user note {i}\nunstaged tail\n")  # staged and worktree now differ
            retrying("commit", "-q", "-m", f"user commit {i}")

    c = committer(repo)
    daemon_commits = 0
    thread = threading.Thread(target=user_loop)
    started = time.monotonic()
    thread.start()
    cycles = 0
    while (cycles < 100 or thread.is_alive()) and cycles < 3000:
        write(repo, f"daemon/d{cycles % 10}.md", f"daemon edit {cycles}\n")
        result = c.commit_cycle()
        # "HEAD changed" is benign: nothing was changed; user commits moved HEAD during all five attempts.
        assert result.error is None or result.error.startswith("HEAD changed"), result.error
        daemon_commits += len(result.commits)
        cycles += 1
    thread.join(timeout=60)
    for _ in range(3):
        daemon_commits += len(c.commit_cycle().commits)
    assert time.monotonic() - started < 30

    assert errors == []
    assert status(repo) == []
    assert stray_temp_files(repo) == []
    fsck = git(repo, "fsck", "--full", "--no-progress", check=False)
    assert fsck.returncode == 0, fsck.stderr
    assert int(git(repo, "rev-list", "--count", "HEAD").stdout) == 1 + len(user_files) + daemon_commits

    # Every user commit exists once and holds exactly the staged version of its file.
    user_log = [ln.split(" ") for ln in git(repo, "log", "--format=%H %s", "--grep=^user commit ").stdout.splitlines()]
    assert sorted(int(parts[-1]) for parts in user_log) == list(range(len(user_files)))
    specs = "".join(f"{parts[0]}:.user/u{int(parts[-1]):03d}.md\n" for parts in user_log)
    staged_versions: list[str | None] = cat_file_batch(repo, specs)
    assert staged_versions == [f"user note {int(parts[-1])}\n" for parts in user_log]
    # The unstaged tails were committed by the daemon afterwards.
    for i, rel in enumerate(user_files):
        assert show(repo, f"HEAD:{rel}") == f"user note {i}\nunstaged tail\n"

    # No agentmd commit ever takes a daemon file back to an older edit. A *user's* plain `git commit` can:
    # it reads the index before taking index.lock, so when it reads during a cycle and writes after it,
    # it puts back a stale index (git's own read-before-lock race, the same between two git processes).
    # That costs history noise, never content: the file keeps its newest edit and the next cycle
    # commits it again, which the HEAD check above proves.
    log = git(repo, "log", "--format=%x00%H%x01%(trailers:key=origin,valueonly)%x01", "--name-only", "--", "daemon")
    changes = []
    for chunk in log.stdout.split("\0")[1:]:
        sha, origin, names = chunk.split("\x01")
        changes += [(sha, origin.strip(), name) for name in names.split() if name != "daemon/seed.md"]
    specs = "".join(f"{sha}:{name}\n{sha}^:{name}\n" for sha, _, name in changes)
    blobs = cat_file_batch(repo, specs)
    user_reverts = 0
    for n, (sha, origin, name) in enumerate(changes):
        new, old = blobs[2 * n], blobs[2 * n + 1]
        went_back = new is not None and old is not None and int(new.split()[-1]) < int(old.split()[-1])
        if origin:
            assert not went_back, f"agentmd commit {sha} took {name} back from {old!r} to {new!r}"
        user_reverts += went_back
    assert user_reverts <= len(user_files)
    print(f"user commits that undid a daemon change in history (git's race, content kept): {user_reverts}")


def cat_file_batch(repo: Path, specs: str) -> list[str | None]:
    """The contents of many `<rev>:<path>` blobs in one git process (None for a missing one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=repo, env=env, input=specs.encode(), capture_output=True, check=True
    ).stdout
    blobs: list[str | None] = []
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end]
        if header.endswith(b" missing"):
            blobs.append(None)
            pos = header_end + 1
            continue
        size = int(header.split()[2])
        blobs.append(out[header_end + 1 : header_end + 1 + size].decode())
        pos = header_end + 1 + size + 1
    return blobs


# --------------------------------------------------------------------------------------------------
# Failure accounting


def test_failing_commits_are_counted_and_go_red_after_thirty_minutes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    blocker = repo / ".git/refs/heads/main.lock"
    blocker.mkdir()  # a directory where git must create its ref lock: every commit fails, even as root
    write(repo, "notes/a.md", "cannot be committed yet\n")
    index_before = (repo / ".git/index").read_bytes()
    wall = FakeWall()
    c = committer(repo, wall=wall)
    t0 = wall.now

    first = c.commit_cycle()
    assert first.error and "could not lock HEAD" in first.error and "main.lock" in first.error
    assert not first.commits
    assert c.state.commit_failures == 1
    assert c.state.first_commit_failure == t0.isoformat(timespec="seconds")
    assert c.state.last_commit_error == first.error

    wall.now = t0 + timedelta(minutes=5)
    assert c.commit_cycle().error
    assert c.state.commit_failures == 2
    assert c.state.first_commit_failure == t0.isoformat(timespec="seconds")
    assert not c.state.red(t0 + timedelta(minutes=29))
    assert c.state.red(t0 + timedelta(minutes=30))
    assert (repo / ".git/index").read_bytes() == index_before
    assert stray_temp_files(repo) == []
    assert c.state.to_dict()["commit_failures"] == 2

    blocker.rmdir()
    wall.now = t0 + timedelta(minutes=40)
    ok = c.commit_cycle()
    assert ok.error is None and ok.commits
    assert c.state.commit_failures == 0 and c.state.first_commit_failure is None
    assert c.state.last_commit_error is None
    assert c.state.last_commit_sha == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert c.state.last_commit_at == wall.now.isoformat(timespec="seconds")
    assert not c.state.red(wall.now + timedelta(hours=5))


def test_commit_state_red_handles_naive_times() -> None:
    state = CommitState(commit_failures=3, first_commit_failure="2026-05-04T12:00:00+00:00")
    assert state.red(datetime(2026, 5, 4, 12, 30))
    assert not state.red(datetime(2026, 5, 4, 12, 29, 59, tzinfo=UTC))
    assert not CommitState().red(datetime.now(UTC))


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
# Worktrees, first commits, init-git, repack


def test_worktrees_inside_the_vault_are_listed_and_never_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    git(repo, "worktree", "add", "-q", "-b", "inside", str(repo / "wt"))
    git(repo, "worktree", "add", "-q", "-b", "outside", str(tmp_path / "elsewhere"))
    assert worktrees_inside(repo) == ["wt"]
    write(repo, "notes/a.md", "edit\n")
    result = committer(repo).commit_cycle()
    assert [x.paths for x in result.commits] == [("notes/a.md",)]
    assert not any(p.startswith("wt") for p in tree(repo))
    assert any("wt/" in w for w in result.warnings)


def test_daemon_makes_the_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    git(vault, "init", "-q", "-b", "main")
    write(vault, "notes/first.md", "first\n")
    assert git_health(vault).reason == "no-commits"
    result = Committer(vault, phone_paths=tuple).commit_cycle()
    assert [x.paths for x in result.commits] == [("notes/first.md",)]
    assert git_health(vault).ok and corpus_write_gate(vault).ok
    assert origins(vault) == ["local-edit"]


def test_fixed_identity_when_the_repository_has_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git(vault, "init", "-q", "-b", "main")
    write(vault, "a.md", "a\n")
    assert Committer(vault, phone_paths=tuple).commit_cycle().commits
    assert git(vault, "log", "-1", "--format=%an <%ae>|%cn <%ce>").stdout.strip() == (
        "agentmd <agentmd@localhost>|agentmd <agentmd@localhost>"
    )


def test_init_git_creates_repo_gitignore_settings_and_first_commit(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "notes/a.md", "a\n")
    write(vault, ".obsidian/app.json", "{}\n")
    write(vault, ".obsidian/workspace.json", "{}\n")
    write(vault, ".smart-cache/blob", "cache\n")
    write(vault, ".trash/old.md", "old\n")

    summary = init_git(vault)

    assert "\n" not in summary and "initialised" in summary and ".smart-cache/" in summary
    ignore = (vault / ".gitignore").read_text()
    for line in (".obsidian/workspace*.json", ".trash/", ".DS_Store", "*.swp", "*~", ".#*", ".tmp.driveupload/"):
        assert line in ignore.splitlines()
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


def test_repack_runs_once_a_day_and_keeps_every_object(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    clock = FakeClock()
    c = committer(repo, clock=clock, sleep=clock.sleep)
    for i in range(5):
        write(repo, f"notes/n{i}.md", f"{i}\n")
        c.commit_cycle()
    loose = repo / "loose.txt"
    loose.write_text("unreachable but kept\n")
    dangling = git(repo, "hash-object", "-w", str(loose)).stdout.strip()
    loose.unlink()
    commits_before = git(repo, "rev-list", "--all").stdout

    line = c.repack_if_due()
    assert line is not None and "repack" in line
    counts = dict(ln.split(": ") for ln in git(repo, "count-objects", "-v").stdout.splitlines())
    assert int(counts["in-pack"]) > 0
    clock.now += 23 * 3600
    assert c.repack_if_due() is None
    clock.now += 3600
    assert c.repack_if_due() is not None

    assert git(repo, "rev-list", "--all").stdout == commits_before
    assert git(repo, "cat-file", "-e", dangling, check=False).returncode == 0
    fsck = git(repo, "fsck", "--full", "--no-progress", check=False)
    assert fsck.returncode == 0, fsck.stderr
    assert stray_temp_files(repo) == []


def test_repack_is_postponed_by_a_foreign_lock(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    (repo / ".git/index.lock").write_bytes(b"")
    clock = FakeClock()
    c = committer(repo, clock=clock, sleep=clock.sleep)
    line = c.repack_if_due()
    assert line is not None and "postponed" in line and (repo / ".git/index.lock").exists()
    (repo / ".git/index.lock").unlink()
    line = c.repack_if_due()
    assert line is not None and line.startswith("repacked")
