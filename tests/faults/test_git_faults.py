"""Fault injection on the path from a change to a commit: git history is the undo, so no change may miss it.

Real repositories, real git, real crashes: a `kill -9` is a SIGKILL sent by the named fault point
(`AGENTMD_FAILPOINTS`, engine/failpoints.py) inside a child process, an I/O error is the same point
raising ENOSPC. Clocks are injected where the code reads time; nothing here sleeps to wait for something.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_helpers import wait_until
from git_helpers import (
    FakeClock,
    committer,
    dead_pid,
    git,
    make_repo,
    marker,
    origins,
    status,
    stray_temp_files,
    write,
)

from agentmd.cli import main
from agentmd.engine.client import DaemonClient, access_token, locate
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.failpoints import CRASH_ENV
from agentmd.engine.failpoints import ENV as FAILPOINTS
from agentmd.engine.fsutil import read_json
from agentmd.engine.git.committer import Committer
from agentmd.engine.git.schedule import CommitSchedule
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def run_child(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh Python process (the agentmd of the crash), bounded in time."""
    full = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True, text=True, timeout=120
    )


# --------------------------------------------------------------------------------------------------
# 1. A same-size edit in the same second as the last commit


def test_same_second_same_size_edits_are_all_committed(tmp_path: Path) -> None:
    """git trusts an index entry whose stat data matches the file, unless the entry is as new as the index
    file itself (then it compares content). The scenario runs in a past second so that the next cycle is
    certainly in a later one: the note is written, committed, and edited to the same size within one second
    (file and index times set to that second; `core.trustctime=false` keeps the ctime of those `utime` calls
    out of the comparison, as the real same-second edit would)."""
    repo = make_repo(tmp_path / "v")
    git(repo, "config", "core.trustctime", "false")
    c = committer(repo, state_dir=tmp_path / "state")
    base = int(os.stat(repo / ".git/index").st_mtime) - 1000
    committed = 0
    for i in range(6):
        second = base + 10 * i
        note = write(repo, f"notes/n{i}.md", f"value {i}: draft\n")
        os.utime(note, (second, second))
        assert c.commit_cycle().commits
        os.utime(repo / ".git/index", (second, second))  # that commit published its index in the same second
        write(repo, f"notes/n{i}.md", f"value {i}: fixed\n")  # a typo fix: same size
        os.utime(note, (second, second))  # ... saved within that second too
        result = c.commit_cycle()
        assert result.error is None and result.skipped is None
        committed += sum(1 for commit in result.commits if f"notes/n{i}.md" in commit.paths)
        assert git(repo, "show", f"HEAD:notes/n{i}.md").stdout == f"value {i}: fixed\n"
    assert committed == 6
    assert status(repo) == []


# --------------------------------------------------------------------------------------------------
# 2. A crash after the index is published and before HEAD moves


def test_crash_between_index_publish_and_head_move_is_finished_at_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n", "notes/b.md": "b\n", "notes/mine.md": "mine\n"})
    state = tmp_path / "state"
    write(repo, "notes/mine.md", "the user's own staged change\n")
    git(repo, "add", "notes/mine.md")
    before = head(repo)
    crashed = run_child(
        f"""
        from pathlib import Path
        from agentmd.engine.git.committer import Committer
        c = Committer(Path({str(repo)!r}), phone_paths=tuple, state_dir=Path({str(state)!r}))
        c.note_origin("notes/a.md", "capture")
        Path({str(repo / "notes/a.md")!r}).write_text("a captured\\n")
        c.commit_cycle()
        raise SystemExit("the fault point did not fire")
        """,
        {CRASH_ENV: "after-index-published"},
    )
    assert crashed.returncode == -9, crashed.stderr
    assert head(repo) == before  # HEAD never moved ...
    assert "M  notes/a.md" in status(repo)  # ... but the index already holds the note: staged

    c = committer(repo, state_dir=state)
    assert any("a crash interrupted a commit" in line for line in c.prepare())  # at start-up
    assert status(repo) == [" M notes/a.md", "M  notes/mine.md"]  # ours unstaged again, theirs staged
    result = c.commit_cycle()
    assert result.error is None, result
    assert [(x.origin, x.paths) for x in result.commits] == [("capture", ("notes/a.md",))]
    assert git(repo, "show", "HEAD:notes/a.md").stdout == "a captured\n"
    assert status(repo) == ["M  notes/mine.md"]  # the user's staging is theirs, untouched
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["notes/mine.md"]

    write(repo, "notes/a.md", "a edited later\n")  # later edits to the note commit as usual
    assert c.commit_cycle().commits
    assert git(repo, "show", "HEAD:notes/a.md").stdout == "a edited later\n"
    assert stray_temp_files(repo) == []


def edited_and_killed(repo: Path, state: Path, fault: str) -> subprocess.CompletedProcess[str]:
    """A process whose commit cycle, taking an edit of notes/a.md, is killed at the fault point `fault`."""
    return run_child(
        f"""
        from pathlib import Path
        from agentmd.engine.git.committer import Committer
        c = Committer(Path({str(repo)!r}), phone_paths=tuple, state_dir=Path({str(state)!r}))
        Path({str(repo / "notes/a.md")!r}).write_text("a edited\\n")
        c.commit_cycle()
        raise SystemExit("the fault point did not fire")
        """,
        {CRASH_ENV: fault},
    )


def test_a_crash_record_left_in_the_state_folder_by_an_earlier_version_is_finished(tmp_path: Path) -> None:
    # the record of a cycle between publishing the index and moving HEAD lives in `.git/agentmd/`; one an
    # earlier version left in the state folder is moved there and finished the same way
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    state = tmp_path / "state"
    crashed = edited_and_killed(repo, state, "after-index-published")
    assert crashed.returncode == -9, crashed.stderr
    record = repo / ".git" / "agentmd" / "commit-intent.json"
    assert record.is_file() and not (state / "commit-intent.json").exists()
    os.replace(record, state / "commit-intent.json")

    c = committer(repo, state_dir=state)
    assert any("a crash interrupted a commit" in line for line in c.prepare())
    assert not (state / "commit-intent.json").exists()
    result = c.commit_cycle()
    assert result.error is None and [x.paths for x in result.commits] == [("notes/a.md",)], result
    assert not record.exists()


def test_a_state_folder_that_takes_no_writes_stops_no_commit(tmp_path: Path) -> None:
    # a full or broken state disk: the origin journal cannot be written (the origin is kept in memory and the
    # result says so), and the cycle's crash record goes beside the repository, so the commit is made
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    state = tmp_path / "state"
    state.write_text("not a folder\n")
    c = committer(repo, state_dir=state)
    c.note_origin("notes/a.md", "capture", b"a captured\n")
    write(repo, "notes/a.md", "a captured\n")
    result = c.commit_cycle()
    assert result.error is None and result.skipped is None, result
    assert [(x.origin, x.paths) for x in result.commits] == [("capture", ("notes/a.md",))]
    assert git(repo, "show", "HEAD:notes/a.md").stdout == "a captured\n"
    assert not (repo / ".git" / "agentmd" / "commit-intent.json").exists()


def test_a_crash_while_taking_the_index_lock_never_leaves_an_empty_lock(tmp_path: Path) -> None:
    """Killed after writing the lock's marker and before taking the lock: no `index.lock` is left (an empty
    one would read as a running git command's and hold every later cycle back); the staged marker file is
    swept at the next start and the next cycle commits."""
    repo = make_repo(tmp_path / "v", {"notes/a.md": "a\n"})
    state = tmp_path / "state"
    crashed = edited_and_killed(repo, state, "index-lock-staged")
    assert crashed.returncode == -9, crashed.stderr
    assert not (repo / ".git" / "index.lock").exists()
    assert [p.name for p in (repo / ".git").glob("index.agentmd-*.lock")]  # the marker, staged
    c = committer(repo, state_dir=state)
    c.prepare()
    assert not list((repo / ".git").glob("index.agentmd-*"))
    result = c.commit_cycle()
    assert result.error is None and result.skipped is None and result.commits, result


# --------------------------------------------------------------------------------------------------
# 3. The origin of a pending write survives a crash


def test_pending_origins_survive_kill_9(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    state = tmp_path / "state"
    crashed = run_child(
        f"""
        import os, signal
        from pathlib import Path
        from agentmd.engine.git.committer import Committer
        vault = Path({str(repo)!r})
        c = Committer(vault, phone_paths=tuple, state_dir=Path({str(state)!r}))
        for i in range(20):
            c.note_origin(f"memory/capture-{{i}}.md", "capture")
            (vault / "memory").mkdir(exist_ok=True)
            (vault / "memory" / f"capture-{{i}}.md").write_text(f"captured {{i}}\\n")
        c.note_origin("probe/p.md", "self-probe")
        (vault / "probe").mkdir()
        (vault / "probe/p.md").write_text("probe\\n")
        c.note_origin("memory/never-written.md", "capture")  # crashed before its write
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert crashed.returncode == -9, crashed.stderr
    write(repo, "notes/hand.md", "typed by the user meanwhile\n")

    c = committer(repo, state_dir=state)
    c.prepare()
    result = c.commit_cycle()
    by_origin = {commit.origin: set(commit.paths) for commit in result.commits}
    assert by_origin == {
        "capture": {f"memory/capture-{i}.md" for i in range(20)},
        "self-probe": {"probe/p.md"},
        "local-edit": {"notes/hand.md"},
    }
    # the registration whose write never happened is gone: a later user file there is a local edit
    write(repo, "memory/never-written.md", "the user's own file\n")
    assert [x.origin for x in c.commit_cycle().commits] == ["local-edit"]
    assert (state / "pending-origins.jsonl").read_bytes() == b""  # every registration was spent


@pytest.mark.parametrize("then", ["restart", "cli-capture"])
def test_captures_acknowledged_by_a_daemon_killed_before_its_commit_keep_their_origin(
    tmp_path: Path, env: dict[str, str], then: str
) -> None:
    """After the kill, either a new daemon commits, or a CLI capture made while none runs commits everything
    pending itself: either way every capture keeps `origin: capture`, none becomes a local edit."""
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"})
    settings = resolve(vault=str(vault))

    def serve() -> tuple[subprocess.Popen[bytes], int]:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "agentmd",
                "serve",
                "--vault",
                str(vault),
                "--port",
                "0",
                "--commit-debounce",
                "600",
            ],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def port() -> int | None:
            info = read_json(settings.state_dir / "daemon.json") or {}
            ours = proc.pid in (info.get("pid"), info.get("supervisor"))  # not a file a killed daemon left
            return int(info["port"]) if ours and info.get("port") else None

        return proc, int(wait_until(port, 30, "the daemon's port"))

    proc, port = serve()
    try:
        client = DaemonClient(port, token=access_token(settings.state_dir))
        wait_until(lambda: client.get("/status")["daemon"]["commit_cycles"] >= 1, 30, "the start-up cycle")
        paths = [
            client.post(
                "/v1/capture", {"title": f"Decision {i}: pin tool {i}", "body": f"We pin tool {i}.", "type": "decision"}
            )["path"]
            for i in range(5)
        ]
    finally:
        proc.kill()  # SIGKILL: the captures are acknowledged, their commit is 600 s away
        proc.wait(10)
    assert all(p.startswith("memory/") for p in paths) and len(set(paths)) == 5
    assert head(vault) == git(vault, "rev-list", "--max-parents=0", "HEAD").stdout.strip()  # nothing committed

    if then == "restart":
        proc, port = serve()
        try:
            wait_until(lambda: status(vault) == [], 30, "the commit after the restart")
        finally:
            proc.terminate()
            proc.wait(30)
    else:
        wait_until(lambda: locate(settings.state_dir, vault) is None, 30, "the killed daemon's child to go too")
        out, err = io.StringIO(), io.StringIO()
        argv = ["capture", "--vault", str(vault), "--title", "Decision 9: pin the linter", "--body", "We pin it."]
        assert main([*argv, "--json"], out=out, err=err) == 0, err.getvalue()
        assert status(vault) == []  # the CLI's own cycle committed it all
        paths.append(json.loads(out.getvalue())["path"])
        assert "local-edit" not in git(vault, "log", "--format=%(trailers:key=origin,valueonly)").stdout
    commit_of = {
        p: git(vault, "log", "-1", "--format=%(trailers:key=origin,valueonly)", "--", p).stdout.strip() for p in paths
    }
    assert set(commit_of.values()) == {"capture"}, commit_of


def test_a_torn_last_journal_line_costs_only_that_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    state = tmp_path / "state"
    c = committer(repo, state_dir=state)
    c.note_origin("memory/a.md", "capture")
    c.note_origin("probe/p.md", "self-probe")
    journal = state / "pending-origins.jsonl"
    journal.write_bytes(journal.read_bytes() + b'{"at": 1.0, "origin": "cap')  # a crash in mid-append
    write(repo, "memory/a.md", "a\n")
    write(repo, "probe/p.md", "p\n")
    result = committer(repo, state_dir=state).commit_cycle()
    assert {x.origin: x.paths for x in result.commits} == {"capture": ("memory/a.md",), "self-probe": ("probe/p.md",)}


# --------------------------------------------------------------------------------------------------
# 4. Commits happen within a bounded delay under continuous activity


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note\n"})
    return resolve(vault=str(vault))


@pytest.fixture
def started() -> Iterator[Callable[[Daemon], Daemon]]:
    daemons: list[Daemon] = []

    def start(d: Daemon) -> Daemon:
        daemons.append(d)
        d.start()
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
        return d

    yield start
    for d in daemons:
        d.stop()


def test_continuous_writes_cannot_postpone_the_commit_forever(
    settings: Settings, started: Callable[[Daemon], Daemon]
) -> None:
    clock = FakeClock()
    d = started(Daemon(settings, port=0, watch=False, commit_debounce=1.0, clock=clock, probe_interval=0))
    wait_until(lambda: d.commit_cycles >= 1, 10, "the start-up cycle")
    before, cycles = head(settings.vault), d.commit_cycles
    for i in range(40):  # a write every 0.5 s for 20 s, each asking for the debounce again
        write(settings.vault, f"notes/burst-{i}.md", f"burst {i}\n")
        clock.now += 0.5
        d.request_commit(d.commit_debounce)
    # the schedule's clock stands still: only the longest wait, not a pause in the writes, can start this cycle
    wait_until(lambda: d.commit_cycles > cycles, 10, "a cycle although the writes never paused")

    def committed() -> bool:  # that cycle found the notes a moment old (engine/git/settle.py) and asked again: the
        clock.now += 0.1  # clock moves on while the test waits, as a real one would, and they land once settled
        return head(settings.vault) != before

    wait_until(committed, 10, "the notes committed")


def test_schedule_bounds_the_delay_and_retries_a_skipped_cycle() -> None:
    clock = FakeClock()
    schedule = CommitSchedule(1.0, 10.0, retry=5.0, clock=clock)
    start = clock.now
    for _ in range(100):
        schedule.changed()
        clock.now += 0.5
        if schedule.ready():
            break
    assert clock.now - start <= 10.5
    schedule.take()
    assert schedule.due is None
    schedule.skipped()
    assert schedule.wait_seconds() == 5.0


def test_a_change_says_when_the_cycle_moved_sooner_so_a_sleeping_committer_needs_waking() -> None:
    clock = FakeClock()
    schedule = CommitSchedule(1.0, 3.0, clock=clock)
    assert schedule.changed() is True  # nothing was due: the committer sleeps without a deadline
    first_due = schedule.due
    clock.now += 0.25
    assert schedule.changed() is False  # pushed back: the committer wakes at the earlier time and waits on
    assert schedule.due is not None and first_due is not None and schedule.due > first_due
    assert schedule.changed(0.0) is True  # a cycle wanted now: sooner than the debounce said
    schedule.take()
    start = clock.now
    assert schedule.changed() is True
    wakes = 0
    while not schedule.ready():  # a stream of changes every 0.25 s: none wakes anybody, the cycle still comes
        clock.now += 0.25
        wakes += schedule.changed()
    assert wakes == 0
    assert clock.now - start <= 3.0  # within max_wait of the first change


# --------------------------------------------------------------------------------------------------
# 5. ENOSPC / EIO while publishing the index, and our own lock after a crash


@pytest.mark.parametrize("fault", ["enospc", "eio"])
def test_io_error_while_publishing_leaves_no_lock_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "notes/a.md", "edited\n")
    before, index_before = head(repo), (repo / ".git/index").read_bytes()
    c = committer(repo, state_dir=tmp_path / "state")
    monkeypatch.setenv(FAILPOINTS, f"index-publish={fault}")
    result = c.commit_cycle()
    assert result.error and ("No space left" in result.error or "Input/output error" in result.error)
    assert not (repo / ".git/index.lock").exists()
    assert head(repo) == before and (repo / ".git/index").read_bytes() == index_before
    assert not os.path.exists(repo / ".git/HEAD.lock") and not os.path.exists(repo / ".git/refs/heads/main.lock")
    git(repo, "add", "--dry-run", "notes/a.md")  # the user's git is not blocked
    monkeypatch.delenv(FAILPOINTS)
    assert c.commit_cycle().commits
    assert status(repo) == [] and stray_temp_files(repo) == []


def test_a_lock_left_by_a_crash_while_publishing_is_recognised_as_ours(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "notes/a.md", "edited\n")
    crashed = run_child(
        f"""
        from pathlib import Path
        from agentmd.engine.git.committer import Committer
        Committer(Path({str(repo)!r}), phone_paths=tuple).commit_cycle()
        """,
        {CRASH_ENV: "index-publish"},
    )
    assert crashed.returncode == -9, crashed.stderr
    lock = repo / ".git/index.lock"
    assert lock.read_bytes().startswith(b"held by agentmd (pid ")  # the marker survived the crash
    lines = Committer(repo, phone_paths=tuple).prepare()
    assert any("removed a stale index.lock left by a dead agentmd" in line for line in lines)
    assert not lock.exists()
    # a foreign lock is still never touched
    lock.write_bytes(b"")
    assert any("leaves it" in line for line in Committer(repo, phone_paths=tuple).prepare())
    assert lock.exists()
    lock.write_bytes(marker(dead_pid(), host="another-host"))
    assert any("left alone" in line for line in Committer(repo, phone_paths=tuple).prepare())
    assert lock.exists()


def test_a_cycle_skipped_for_a_foreign_lock_is_retried_without_a_new_change(
    settings: Settings, started: Callable[[Daemon], Daemon]
) -> None:
    vault = settings.vault
    d = Daemon(settings, port=0, watch=False, commit_debounce=0.2, probe_interval=0)
    d.committer = Committer(vault, phone_paths=tuple, state_dir=settings.state_dir, lock_wait=0.0)
    started(d)
    wait_until(lambda: d.commit_cycles >= 1, 10, "the start-up cycle")
    lock = vault / ".git/index.lock"
    lock.write_bytes(b"")  # a user's git command holds the index
    write(vault, "notes/late.md", "written while the index was locked\n")
    d.request_commit(0.0)
    wait_until(lambda: d.committer.state.skipped_cycles >= 1, 10, "a skipped cycle")
    lock.unlink()
    wait_until(lambda: "notes/late.md" in git(vault, "ls-tree", "-r", "--name-only", "HEAD").stdout, 15, "the retry")


# --------------------------------------------------------------------------------------------------
# 6. A refused mass deletion: red status, and the allowance taken while the daemon runs


def _thirty_committed_notes_then_25_deleted(
    settings: Settings, started: Callable[[Daemon], Daemon]
) -> tuple[Daemon, str]:
    """Thirty committed notes, a daemon started on them (its start-up commit cycle run), then 25 of them
    deleted; (the daemon, the HEAD before the deletion)."""
    vault = settings.vault
    for i in range(30):
        write(vault, f"notes/n{i}.md", f"note {i}\n")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "thirty notes")
    d = started(Daemon(settings, port=0, watch=False, commit_debounce=0.1, probe_interval=0))
    wait_until(lambda: d.commit_cycles >= 1, 15, "the start's commit cycle")
    before = head(vault)
    for i in range(25):
        (vault / f"notes/n{i}.md").unlink()
    return d, before


def test_refused_mass_deletion_is_red_and_reindex_allows_it_while_the_daemon_runs(
    settings: Settings, started: Callable[[Daemon], Daemon]
) -> None:
    vault = settings.vault
    d, before = _thirty_committed_notes_then_25_deleted(settings, started)
    # the start's own commit cycle has run, so the deletion meets a reconcile pass first (a cycle that runs
    # between a mass deletion and the pass that would refuse it is the next test's case)
    d.request_pass()
    wait_until(lambda: d.committer.state.commits_held, 15, "the refusal held in the commit state")
    d.request_commit(0.0)
    wait_until(lambda: any("commits-held" in r for r in d.status().get("red", [])), 15, "status red")
    red = [r for r in d.status()["red"] if "commits-held" in r]
    assert "agentmd reindex --allow-mass-delete" in red[0]
    assert head(vault) == before

    out, err = io.StringIO(), io.StringIO()
    code = main(["reindex", "--vault", str(vault), "--allow-mass-delete"], out=out, err=err)
    assert code == 0, (out.getvalue(), err.getvalue())
    assert "25 deleted" in out.getvalue()
    wait_until(lambda: head(vault) != before and status(vault) == [], 15, "the deletion committed")
    assert d.committer.state.commits_held is None
    wait_until(lambda: not any("commits-held" in r for r in d.status().get("red", [])), 15, "status clear")


def test_a_commit_cycle_before_the_refusing_pass_does_not_commit_a_mass_deletion(
    settings: Settings, started: Callable[[Daemon], Daemon]
) -> None:
    vault = settings.vault
    d, before = _thirty_committed_notes_then_25_deleted(settings, started)
    cycles = d.commit_cycles
    d.request_commit(0.0)  # a cycle now, whether or not a pass has seen the deletion yet
    wait_until(lambda: d.commit_cycles > cycles, 15, "a commit cycle after the deletion")
    assert head(vault) == before
    d.request_pass()
    wait_until(lambda: d.committer.state.commits_held, 15, "the pass's refusal")
    assert head(vault) == before and len(status(vault)) == 25

    out, err = io.StringIO(), io.StringIO()
    assert main(["reindex", "--vault", str(vault), "--allow-mass-delete"], out=out, err=err) == 0, err.getvalue()
    wait_until(lambda: head(vault) != before and status(vault) == [], 15, "the deletion committed")
    assert d.committer.state.mass_deletion is None
    wait_until(lambda: not d.status().get("red"), 15, "status clear")


# --------------------------------------------------------------------------------------------------
# 7. A user's `git commit` waiting in its editor


def test_a_held_head_lock_skips_the_cycle_until_it_is_gone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    write(repo, "notes/a.md", "edited\n")
    (repo / ".git/HEAD.lock").write_bytes(b"")  # a `git reset` or `git update-ref` moving HEAD right now
    c = committer(repo, state_dir=tmp_path / "state")
    result = c.commit_cycle()
    assert result.skipped and "HEAD.lock" in result.skipped and not result.commits
    (repo / ".git/HEAD.lock").unlink()
    assert c.commit_cycle().commits


def test_daemon_yields_to_a_git_commit_waiting_in_its_editor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "v")
    opened, release = tmp_path / "editor-opened", tmp_path / "editor-release"
    editor = tmp_path / "editor.sh"
    editor.write_text(
        "#!/bin/sh\n"
        f"touch '{opened}'\n"
        "i=0\n"
        f"while [ ! -e '{release}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
        'echo "the user\'s message" > "$1"\n'
    )
    editor.chmod(0o755)
    write(repo, "notes/user.md", "staged by the user\n")
    git(repo, "add", "notes/user.md")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    user = subprocess.Popen(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", f"core.editor={editor}", "commit"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(opened.exists, 30, "the editor to open")
        write(repo, "notes/daemon.md", "a change for the daemon\n")
        c = committer(repo, state_dir=tmp_path / "state")
        result = c.commit_cycle()
        assert result.skipped and "waiting for its message" in result.skipped
        assert not result.commits
        release.touch()
        _out, err = user.communicate(timeout=60)
    finally:
        release.touch()
        if user.poll() is None:
            user.kill()
            user.wait()
    assert user.returncode == 0, err
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "the user's message"
    result = c.commit_cycle()  # the retry once the user's commit is done
    assert [x.paths for x in result.commits] == [("notes/daemon.md",)]
    assert origins(repo)[0] == "local-edit"
    assert status(repo) == []
