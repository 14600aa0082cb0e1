"""Repository health, failure accounting, worktrees and the daily repack, against real repositories.

Time is injected (a fake monotonic clock whose sleep advances it, and a settable wall clock), never patched.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from git_helpers import FakeClock, FakeWall, committer, git, make_repo, stray_temp_files, tree, write

from agentmd.engine.git.gate import corpus_write_gate
from agentmd.engine.git.health import CommitState, git_health, worktrees_inside

# --------------------------------------------------------------------------------------------------
# Degraded repositories


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
    branch = git(garbage_head, "symbolic-ref", "--short", "HEAD").stdout.strip()
    (garbage_head / ".git/HEAD").write_bytes(b"\x00\xffnot a ref")
    health = git_health(garbage_head)
    assert health.reason == "broken" and f"write `ref: refs/heads/{branch}` into .git/HEAD" in health.detail
    (garbage_head / ".git/HEAD").write_text(f"ref: refs/heads/{branch}\n")  # the fix it names
    assert git_health(garbage_head).ok
    (garbage_head / ".git/HEAD").write_bytes(b"\x00\xffnot a ref")  # broken again for the cycles below

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


def test_commit_state_reads_back_what_it_wrote_and_keeps_defaults_for_the_rest() -> None:
    state = CommitState(
        commit_failures=2,
        first_commit_failure="2026-05-04T12:00:00+00:00",
        large_files_held={"scan.pdf": 3 * 2**20},
        large_file_limit=2 * 2**20,
    )
    assert CommitState.from_mapping(json.loads(json.dumps(state.to_dict()))) == state
    assert CommitState.from_mapping(None) == CommitState()
    odd = {"commit_failures": "3", "skipped_cycles": True, "last_commit_error": 7, "commits_held": "a merge"}
    assert CommitState.from_mapping(odd) == CommitState(commits_held="a merge")


# --------------------------------------------------------------------------------------------------
# Worktrees and repack


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


def test_a_branch_that_lost_its_ref_is_broken_and_gets_no_new_root(tmp_path: Path) -> None:
    """The branch's ref file is gone (moved, or lost to a sync client) while the reflog still names its last
    commit: the repository is broken, the fix names the commit to restore, and no cycle commits a new root
    (which would start a second history holding only the newest change)."""
    vault = make_repo(tmp_path / "vault")
    write(vault, "notes/a.md", "second\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "second")
    head = git(vault, "rev-parse", "HEAD").stdout.strip()
    branch = git(vault, "symbolic-ref", "HEAD").stdout.strip()
    (vault / ".git" / branch).unlink()
    git(vault, "pack-refs", "--all")  # nothing left to pack: the branch is in neither place
    assert head not in (vault / ".git" / "packed-refs").read_text()

    health = git_health(vault)
    assert health.reason == "broken", health
    assert head[:12] in health.detail and f"git update-ref {branch} {head}" in health.detail

    write(vault, "notes/b.md", "a change waiting to be committed\n")
    result = committer(vault).commit_cycle()
    assert result.error and "degraded" in result.error and not result.commits
    assert not (vault / ".git" / branch).exists()  # no commit was made: the branch still has no ref at all
    assert branch not in (vault / ".git" / "packed-refs").read_text()

    git(vault, "update-ref", branch, head)  # the fix the detail gives
    assert git_health(vault).ok
