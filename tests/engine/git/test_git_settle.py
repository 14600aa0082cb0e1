"""The settle rule (engine/git/settle.py) through the committer, against real repositories: a file still being
written waits for a later cycle, so history never holds a copy torn mid-write, and nothing waits for ever.

Both clocks are injected: the wall clock the files' mtimes are measured against, and the monotonic clock that
times how long a file has waited. File mtimes are set with `os.utime` relative to the injected wall clock.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from git_helpers import FakeClock, FakeWall, blob, changed_in, git, make_repo, origins, status, write

from agentmd.engine.git.committer import Committer
from agentmd.engine.git.schedule import CommitSchedule
from agentmd.engine.settings import COMMIT_MAX_DEFERRAL, COMMIT_SETTLE


class Clocks:
    """The wall clock and the monotonic clock, moved together."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.wall = FakeWall()

    def advance(self, seconds: float) -> None:
        self.clock.now += seconds
        self.wall.now += timedelta(seconds=seconds)

    def stamp(self, path: Path, age: float) -> None:
        """Give `path` an mtime `age` seconds before the wall clock (negative: in its future)."""
        t = self.wall.now.timestamp() - age
        os.utime(path, (t, t))


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


def settling_committer(repo: Path, clocks: Clocks, **kw: object) -> Committer:
    return Committer(
        repo,
        phone_paths=lambda: (),
        clock=clocks.clock,
        sleep=clocks.clock.sleep,
        wall=clocks.wall,
        settle=COMMIT_SETTLE,
        **kw,  # type: ignore[arg-type]
    )


def test_a_file_written_a_moment_ago_waits_while_the_settled_ones_commit(tmp_path: Path, clocks: Clocks) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    clocks.stamp(write(repo, "notes/a.md", "a edited\n"), 5.0)
    clocks.stamp(write(repo, "notes/big.md", "half of it\n"), 0.3)
    c = settling_committer(repo, clocks)

    first = c.commit_cycle()

    assert first.error is None and first.skipped is None
    assert [cm.paths for cm in first.commits] == [("notes/a.md",)]
    assert first.deferred == ("notes/big.md",)
    assert first.retry_in == pytest.approx(COMMIT_SETTLE - 0.3)
    assert status(repo) == ["?? notes/big.md"]  # left as it was: not staged

    clocks.advance(first.retry_in or 0.0)
    second = c.commit_cycle()

    assert [cm.paths for cm in second.commits] == [("notes/big.md",)]
    assert second.deferred == () and second.retry_in is None
    assert status(repo) == []


def test_a_note_written_in_pieces_is_committed_once_whole(tmp_path: Path, clocks: Clocks) -> None:
    repo = make_repo(tmp_path / "v")
    c = settling_committer(repo, clocks)
    big = repo / "notes/big.md"
    big.parent.mkdir(parents=True, exist_ok=True)
    piece = b"x" * 1023 + b"\n"
    for _ in range(12):  # a piece every 0.4 s, a cycle after each: 4.8 s of writing
        with big.open("ab") as f:
            f.write(piece * 64)
        clocks.stamp(big, 0.0)
        clocks.advance(0.4)
        result = c.commit_cycle()
        assert result.commits == [] and result.deferred == ("notes/big.md",)
    clocks.advance(COMMIT_SETTLE)
    result = c.commit_cycle()

    assert [cm.paths for cm in result.commits] == [("notes/big.md",)]
    history = git(repo, "log", "--format=%H", "--", "notes/big.md").stdout.split()
    assert len(history) == 1
    assert blob(repo, "HEAD:notes/big.md") == piece * 64 * 12


def test_a_file_written_into_without_a_pause_is_committed_after_the_longest_deferral(
    tmp_path: Path, clocks: Clocks
) -> None:
    repo = make_repo(tmp_path / "v")
    c = settling_committer(repo, clocks)
    log = repo / "notes/log.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    waited = 0.0
    result = None
    for i in range(1000):
        with log.open("a") as f:
            f.write(f"line {i}\n")
        clocks.stamp(log, 0.0)
        result = c.commit_cycle()
        if result.commits:
            break
        clocks.advance(2.0)
        waited += 2.0
    assert result is not None and [cm.paths for cm in result.commits] == [("notes/log.md",)]
    assert waited == COMMIT_MAX_DEFERRAL  # the first cycle at or past the bound commits it
    assert any("still being written" in w and "notes/log.md" in w for w in result.warnings)

    with log.open("a") as f:  # still going: it waits afresh, for the whole bound again
        f.write("more\n")
    clocks.stamp(log, 0.0)
    again = c.commit_cycle()
    assert again.commits == [] and again.deferred == ("notes/log.md",)


def test_the_longest_deferral_counts_from_the_first_change_the_daemon_saw(tmp_path: Path, clocks: Clocks) -> None:
    # the daemon's first cycle runs up to COMMIT_MAX_WAIT after the change that asked for it; a file written into
    # since then has been written for that long already, and is forced in COMMIT_MAX_DEFERRAL after it began
    repo = make_repo(tmp_path / "v")
    c = settling_committer(repo, clocks)
    log = repo / "notes/log.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    began = clocks.clock.now
    schedule = CommitSchedule(1.0, clock=clocks.clock)
    schedule.changed()
    result = None
    for i in range(1000):
        with log.open("a") as f:
            f.write(f"line {i}\n")
        clocks.stamp(log, 0.0)
        if schedule.ready():
            result = c.commit_cycle(waited=schedule.take())
            if result.commits:
                break
            schedule.changed(result.retry_in)
        else:
            schedule.changed()  # each write pushes the cycle back, up to COMMIT_MAX_WAIT after the first
        clocks.advance(0.5)
    assert result is not None and [cm.paths for cm in result.commits] == [("notes/log.md",)]
    assert clocks.clock.now - began == pytest.approx(COMMIT_MAX_DEFERRAL, abs=1.0)


def test_a_file_dated_in_the_future_settles_once_unchanged_for_the_settle_time(tmp_path: Path, clocks: Clocks) -> None:
    repo = make_repo(tmp_path / "v")
    clocks.stamp(write(repo, "notes/ahead.md", "from a machine whose clock runs ahead\n"), -3600.0)
    c = settling_committer(repo, clocks)

    assert c.commit_cycle().deferred == ("notes/ahead.md",)
    clocks.advance(COMMIT_SETTLE / 2)
    half = c.commit_cycle()
    assert half.deferred == ("notes/ahead.md",)
    assert half.retry_in == pytest.approx(COMMIT_SETTLE / 2)
    clocks.advance(COMMIT_SETTLE / 2)
    assert [cm.paths for cm in c.commit_cycle().commits] == [("notes/ahead.md",)]


def test_the_daemons_own_writes_and_a_final_cycle_wait_for_nothing(tmp_path: Path, clocks: Clocks) -> None:
    repo = make_repo(tmp_path / "v")
    c = settling_committer(repo, clocks)
    c.note_origin("inbox/captured.md", "capture")
    clocks.stamp(write(repo, "inbox/captured.md", "written whole, renamed into place\n"), 0.0)
    clocks.stamp(write(repo, "notes/typing.md", "half a sent"), 0.0)

    result = c.commit_cycle()
    assert [(cm.origin, cm.paths) for cm in result.commits] == [("capture", ("inbox/captured.md",))]
    assert result.deferred == ("notes/typing.md",)

    last = c.commit_cycle(final=True)  # the daemon's stop: nothing is left uncommitted
    assert [cm.paths for cm in last.commits] == [("notes/typing.md",)]
    assert last.deferred == ()
    assert status(repo) == []


def test_without_a_settle_time_a_fresh_file_commits_at_once(tmp_path: Path, clocks: Clocks) -> None:
    repo = make_repo(tmp_path / "v")  # the CLI's committer: no later cycle would come back for it
    clocks.stamp(write(repo, "notes/now.md", "just saved\n"), 0.0)
    c = Committer(repo, phone_paths=lambda: (), clock=clocks.clock, wall=clocks.wall)

    result = c.commit_cycle()

    assert [cm.paths for cm in result.commits] == [("notes/now.md",)]
    assert result.deferred == ()
    assert changed_in(repo) == {"notes/now.md"} and origins(repo) == ["local-edit"]
