"""`.git/index.lock` against real repositories: foreign locks are waited on and never removed, our own
stale lock and private index copies are cleared at start, every other lock is left alone.

Time is injected (a fake monotonic clock whose sleep advances it), never patched.
"""

from __future__ import annotations

import os
import socket
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from git_helpers import FakeClock, FakeWall, committer, dead_pid, git, make_repo, marker, stray_temp_files, write

from agentmd.engine.git.committer import Committer

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
    merges = [repo / f".git/agentmd-sync-index-{dead_pid()}", repo / f".git/agentmd-replay-index-{dead_pid()}"]
    for index in merges:  # a sync round's or a replay's private index, left by a kill
        index.write_bytes(b"DIRC")
    lines = Committer(repo, phone_paths=tuple).prepare()
    assert not any(index.exists() for index in merges)
    assert git(repo, "config", "--local", "gc.auto").stdout.strip() == "0"
    assert git(repo, "config", "--local", "maintenance.auto").stdout.strip() == "false"
    assert any("gc.auto=0" in line and "6700" in line for line in lines)
    assert any("maintenance.auto=false" in line for line in lines)
    assert not stray.exists()
    assert Committer(repo, phone_paths=tuple).prepare() == []  # nothing left to change
