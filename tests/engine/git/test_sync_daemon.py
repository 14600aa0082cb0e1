"""Sync as people run it: `agentmd remote add`, `agentmd sync` with and without a daemon, and two daemons on two
clones of one vault (separate XDG folders, as two machines have), each capturing and syncing through a bare
remote. Real git, real daemons, real indexes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import client_of, git, make_repo, running_daemon, wait_until

from agentmd.cli import main
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import CaptureRequest

pytestmark = pytest.mark.slow


def environment(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "XDG_CONFIG_HOME": str(root / "config"),
    }


def cli(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


@pytest.fixture
def two(tmp_path: Path, env: dict[str, str]) -> tuple[Path, Path, Path]:
    """A bare remote, the laptop's vault pushed to it, and the desktop's clone."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    laptop = make_repo(tmp_path / "laptop", {"README.md": "# Vault\n", "notes/otters.md": "# Otters\n\nThey float.\n"})
    git(laptop, "remote", "add", "origin", str(bare))
    git(laptop, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(bare), str(tmp_path / "desktop"))
    desktop = tmp_path / "desktop"
    git(desktop, "config", "user.name", "Desk")
    git(desktop, "config", "user.email", "desk@example.com")
    return bare, laptop, desktop


def test_remote_add_sync_and_conflicts_from_the_command_line(
    tmp_path: Path, two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, laptop, desktop = two
    a, b = environment(tmp_path / "a"), environment(tmp_path / "b")
    other = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(other))
    code, out, _ = cli(a, monkeypatch, "remote", "add", str(other), "--vault", str(laptop))
    assert code == 0 and f"now points at {other} (was {bare})" in out
    cli(a, monkeypatch, "remote", "add", str(bare), "--vault", str(laptop))
    code, out, _ = cli(a, monkeypatch, "remote", "add", str(other), "--name", "backup", "--vault", str(laptop))
    assert code == 0 and "`agentmd sync --remote backup` syncs with it; the daemon syncs with origin only" in out
    (laptop / "notes/otters.md").write_text("# Otters\n\nThey hold hands, says the laptop.\n")
    (desktop / "notes/otters.md").write_text("# Otters\n\nThey hold hands, says the desktop.\n")
    code, out, err = cli(a, monkeypatch, "sync", "--vault", str(laptop))
    assert code == 0 and "sync: pushed to origin/main" in out, err
    code, out, err = cli(b, monkeypatch, "sync", "--vault", str(desktop), "--json")
    result = json.loads(out)
    assert code == 0 and result["outcome"] == "merged", err
    (conflict,) = result["conflicts"]
    code, out, _ = cli(b, monkeypatch, "conflicts", "--vault", str(desktop))
    assert out.strip() == conflict["sibling"]
    code, out, _ = cli(b, monkeypatch, "queue", "--vault", str(desktop), "--origin", "sync", "--json")
    (queued,) = json.loads(out)["items"]
    assert queued["path"] == conflict["sibling"] and queued["reason"] == "conflict"
    code, out, _ = cli(b, monkeypatch, "status", "--vault", str(desktop), "--json")
    sync = json.loads(out)["sync"]
    assert sync["remote"] == str(bare) and sync["conflicts"] == [conflict["sibling"]]
    assert any(y.startswith("conflicts-to-resolve: 1 note(s)") for y in json.loads(out)["yellow"])
    code, out, _ = cli(b, monkeypatch, "remote", "show", "--vault", str(desktop))
    assert f"remote {bare}; last good sync 20" in out


def test_a_sync_with_an_unreachable_remote_says_so_and_keeps_everything(
    tmp_path: Path, two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, laptop, _ = two
    a = environment(tmp_path / "a")
    (laptop / "notes/new.md").write_text("# New\n\nwritten while the remote is away\n")
    bare.rename(tmp_path / "away.git")
    code, _out, err = cli(a, monkeypatch, "sync", "--vault", str(laptop))
    assert code == 1 and "is the remote reachable?" in err and "Traceback" not in err
    assert git(laptop, "status", "--porcelain") == ""  # committed locally all the same
    # status says so from the first failed round (yellow only after an hour), and what waits to be pushed
    code, out, err = cli(a, monkeypatch, "status", "--vault", str(laptop))
    assert "failing since" in out and "is the remote reachable?" in out, out
    assert "1 commit(s) here not yet on the remote" in out, out
    (tmp_path / "away.git").rename(bare)
    code, out, err = cli(a, monkeypatch, "sync", "--vault", str(laptop))
    assert code == 0 and "pushed" in out, err
    code, out, err = cli(a, monkeypatch, "status", "--vault", str(laptop))
    assert "failing since" not in out and "not yet on the remote" not in out, out


@pytest.fixture
def daemons(tmp_path: Path, two: tuple[Path, Path, Path]) -> Iterator[tuple[Daemon, Daemon]]:
    _, laptop, desktop = two
    settings: list[Settings] = [
        resolve(vault=str(laptop), env=environment(tmp_path / "a")),
        resolve(vault=str(desktop), env=environment(tmp_path / "b")),
    ]
    with running_daemon(settings[0]) as a, running_daemon(settings[1]) as b:
        yield a, b


def test_two_daemons_share_their_captures_through_the_remote(daemons: tuple[Daemon, Daemon]) -> None:
    a, b = daemons
    first = a.capture(CaptureRequest(title="Pin the toolchain", body="Use uv in every repository.", type="decision",
                                     why="reproducible builds"))  # fmt: skip
    second = b.capture(CaptureRequest(title="Deploys on Fridays", body="Never deploy on a Friday.", type="decision",
                                      why="weekends"))  # fmt: skip
    a.sync()
    b.sync()
    assert client_of(a).post("/v1/sync", {}, timeout=60)["outcome"] == "fast-forward"  # as `agentmd sync` asks
    for d in (a, b):
        for path in (first["path"], second["path"]):
            assert (d.settings.vault / path).is_file()

    def found(d: Daemon, words: str, path: str) -> bool:
        return path in [r.path for r in d.search(SearchRequest(query=words, mode="fusion")).results]

    wait_until(lambda: found(b, "toolchain uv", first["path"]), 20, "the laptop's capture searchable on the desktop")
    wait_until(lambda: found(a, "deploy friday", second["path"]), 20, "the desktop's capture searchable on the laptop")
    for d in (a, b):
        log = git(d.settings.vault, "log", "--format=%(trailers:key=origin,valueonly)", "--", first["path"])
        assert log.split() == ["capture"]  # committed once, by the machine that captured it; never a local edit
    assert git(b.settings.vault, "rev-parse", "HEAD") == git(a.settings.vault, "rev-parse", "HEAD")


def test_a_mass_deletion_that_arrives_through_git_passes_the_breaker(
    tmp_path: Path, two: tuple[Path, Path, Path]
) -> None:
    _bare, laptop, desktop = two
    for i in range(60):
        (laptop / f"notes/n{i:02d}.md").write_text(f"# Note {i}\n\nabout herons {i}\n")
    git(laptop, "add", "-A")
    git(laptop, "commit", "-q", "-m", "sixty notes")
    git(laptop, "push", "-q", "origin", "main")
    settings = resolve(vault=str(desktop), env=environment(tmp_path / "b"))
    with running_daemon(settings) as d:
        d.sync()
        wait_until(lambda: d.store is not None and d.store.catalog.count() >= 62, 20, "the sixty notes indexed")
        for i in range(35):  # the owner deletes most of them on the laptop and commits it there, deliberately
            (laptop / f"notes/n{i:02d}.md").unlink()
        git(laptop, "add", "-A")
        git(laptop, "commit", "-q", "-m", "prune")
        git(laptop, "push", "-q", "origin", "main")
        passes = d.passes
        assert d.sync().outcome == "fast-forward"
        assert d.store is not None and d.store.catalog.count() == 27
        d.health_check()
        assert not [r for r in d.status()["red"] if "refused" in r or "held" in r], d.status()["red"]

        def settled() -> bool:  # the passes the move's own file events start go through too
            d.health_check()
            return d.passes > passes and not [r for r in d.status()["red"] if "refused" in r or "held" in r]

        wait_until(settled, 20, "a full pass after the sync, and no refusal")
        # a deletion git has not seen still trips it
        for i in range(35, 55):
            (desktop / f"notes/n{i:02d}.md").unlink()
        d.request_pass()
        wait_until(lambda: any(r.startswith("reconcile-refused") for r in d.status()["red"]), 20, "the refusal")


def test_a_refused_deletion_holds_the_sync_until_a_pass_sees_the_notes_back(
    tmp_path: Path, two: tuple[Path, Path, Path]
) -> None:
    """Notes deleted a few at a time: the committer's own check passes each batch, the reconcile pass refuses
    the second. While that hold stands a sync round commits and pushes nothing; once the notes are back, the
    hold ends with the passes their return starts, not with the next periodic pass minutes later."""
    from agentmd.engine.git.branches import SyncHeld

    bare, _laptop, desktop = two
    for i in range(60):
        (desktop / f"notes/n{i:02d}.md").write_text(f"# Note {i}\n\nabout herons {i}\n")
    settings = resolve(vault=str(desktop), env=environment(tmp_path / "b"))
    with running_daemon(settings) as d:
        d.sync()
        wait_until(lambda: git(desktop, "status", "--porcelain") == "", 20, "the sixty notes committed")
        wait_until(lambda: d.store is not None and d.store.catalog.count() >= 62, 20, "the sixty notes indexed")
        for i in range(20):  # a third of them: neither the pass nor the committer minds
            (desktop / f"notes/n{i:02d}.md").unlink()
        wait_until(lambda: d.store is not None and d.store.catalog.count() == 42, 20, "the first deletions indexed")
        wait_until(lambda: "n00.md" not in git(desktop, "ls-files"), 20, "the first deletions committed")
        for i in range(20, 35):  # half of what the index held within the hour is gone now: refused
            (desktop / f"notes/n{i:02d}.md").unlink()
        wait_until(lambda: d.committer.state.commits_held, 20, "the refusal")
        head, there = git(desktop, "rev-parse", "HEAD"), git(bare, "rev-parse", "main")
        with pytest.raises(SyncHeld) as caught:
            d.sync()
        assert "--allow-mass-delete" in str(caught.value)
        assert git(desktop, "rev-parse", "HEAD") == head and git(bare, "rev-parse", "main") == there
        d.health_check()
        assert any(r.startswith("sync-held since") for r in d.status()["red"]), d.status()["red"]
        git(desktop, "checkout", "--", "notes")  # the notes are back

        def cleared() -> bool:
            d.health_check()
            red = d.status()["red"]
            return d.committer.state.commits_held is None and not [
                r for r in red if r.startswith(("reconcile-", "commits-"))
            ]

        wait_until(cleared, 20, "the hold ended by the passes the notes' return starts")
        assert d.sync().outcome in ("pushed", "up-to-date")  # rounds go through again
        assert git(bare, "rev-parse", "main") == git(desktop, "rev-parse", "HEAD")
        assert "notes/n25.md" in git(bare, "ls-tree", "-r", "--name-only", "main")  # the held deletion never left
        d.health_check()
        assert not [r for r in d.status()["red"] if "held" in r], d.status()["red"]


def test_a_persons_own_git_pull_never_meets_the_daemons_lock_while_agents_capture(
    tmp_path: Path, two: tuple[Path, Path, Path]
) -> None:
    import os
    import subprocess
    import sys
    import threading

    _bare, laptop, desktop = two
    env = environment(tmp_path / "b")
    settings = resolve(vault=str(desktop), env=env)
    stop = threading.Event()
    captured: list[str] = []
    with running_daemon(settings, commit_debounce=0.05) as d:

        def agent() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                answer = d.capture(CaptureRequest(title=f"Agent fact {n}", body=f"Fact {n} while the owner pulls."))
                captured.append(answer["path"])

        worker = threading.Thread(target=agent)
        worker.start()
        codes = []
        try:
            for i in range(6):
                (laptop / f"notes/laptop-{i}.md").write_text(f"# Laptop {i}\n\nfrom the laptop\n")
                git(laptop, "add", "-A")
                git(laptop, "commit", "-q", "-m", f"laptop {i}")
                git(laptop, "push", "-q", "origin", "main")
                pull = subprocess.run(
                    [sys.executable, "-m", "agentmd", "git", "--vault", str(desktop), "pull", "-q", "--no-rebase",
                     "--no-edit", "origin", "main"],
                    env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
                )  # fmt: skip
                codes.append((pull.returncode, pull.stderr.strip()[-300:]))
        finally:
            stop.set()
            worker.join(60)
        assert [c for c, _ in codes] == [0] * 6, codes
        wait_until(lambda: git(desktop, "status", "--porcelain") == "", 30, "every capture committed")
    tracked = set(git(desktop, "ls-files").split())
    assert {f"notes/laptop-{i}.md" for i in range(6)} <= tracked and set(captured) <= tracked
    assert not (desktop / ".git/agentmd/pause.json").exists()


@pytest.mark.parametrize("keep", ["mine", "theirs", "both"])
def test_resolve_ends_a_conflict_in_one_commit(
    tmp_path: Path, two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, keep: str
) -> None:
    _bare, laptop, desktop = two
    a, b = environment(tmp_path / "a"), environment(tmp_path / "b")
    theirs = "---\ntitle: Otters\nstatus: active\ntags: [river]\n---\n# Otters\n\nThe laptop's otters.\n"
    (laptop / "notes/otters.md").write_text(theirs)
    (desktop / "notes/otters.md").write_text(
        "---\ntitle: Otters\nstatus: draft\n---\n# Otters\n\nThe desktop's otters.\n"
    )
    cli(a, monkeypatch, "sync", "--vault", str(laptop))
    _code, out, _ = cli(b, monkeypatch, "sync", "--vault", str(desktop), "--json")
    sibling = json.loads(out)["conflicts"][0]["sibling"]
    before = git(desktop, "rev-parse", "HEAD")
    code, out, err = cli(b, monkeypatch, "resolve", "notes/otters.md", "--keep", keep, "--vault", str(desktop))
    assert code == 0 and "committed (origin: resolve)" in out, err
    assert git(desktop, "rev-list", "--count", f"{before.strip()}..HEAD").strip() == "1"
    assert git(desktop, "log", "-1", "--format=%(trailers:key=origin,valueonly)").strip() == "resolve"
    note = (desktop / "notes/otters.md").read_text()
    if keep == "mine":
        assert "desktop's" in note and not (desktop / sibling).exists()
    elif keep == "theirs":  # the other machine's version byte for byte, its own status back where it stood
        assert note == theirs and not (desktop / sibling).exists()
        assert "now holds the version from " in out
    else:
        kept = (desktop / sibling).read_text()
        assert "desktop's" in note and kept == theirs
    _code, out, _ = cli(b, monkeypatch, "conflicts", "--vault", str(desktop))
    assert out.strip() == "no conflicts left by a sync"


def test_a_daemon_shares_its_commits_soon_after_they_settle(tmp_path: Path, two: tuple[Path, Path, Path]) -> None:
    from agentmd.engine.daemon import jobs_host

    bare, laptop, _desktop = two
    settings = resolve(vault=str(laptop), env=environment(tmp_path / "a"))
    d = Daemon(settings, port=0, commit_debounce=0.1, probe_interval=0, reconcile_interval=2, health_interval=0)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
        assert d.jobs is not None and jobs_host.SYNC_SETTLE > 0
        d.jobs.sync_settle = 0.2  # the daemon's own settling delay, shortened for the test
        head = git(bare, "rev-parse", "main")
        answer = d.capture(CaptureRequest(title="Shared soon", body="Pushed without anyone running sync."))
        remote_has = lambda: answer["path"] in git(bare, "ls-tree", "-r", "--name-only", "main")  # noqa: E731
        wait_until(remote_has, 60, "the capture on the remote through the settled-commits round")
        assert git(bare, "rev-parse", "main") != head
    finally:
        d.stop()


def test_mine_is_this_machines_text_on_the_machine_whose_version_the_other_merge_set_aside(
    tmp_path: Path, two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _bare, laptop, desktop = two
    a = {**environment(tmp_path / "a"), "AGENTMD_HOST": "machine-a"}  # two machines of two names
    b = {**environment(tmp_path / "b"), "AGENTMD_HOST": "machine-b"}
    ours = "---\ntitle: Otters\n---\n# Otters\n\nThe laptop's otters.\n"
    (laptop / "notes/otters.md").write_text(ours)
    (desktop / "notes/otters.md").write_text("---\ntitle: Otters\n---\n# Otters\n\nThe desktop's otters.\n")
    cli(a, monkeypatch, "sync", "--vault", str(laptop))
    cli(b, monkeypatch, "sync", "--vault", str(desktop))  # the desktop merges: its text stays, the laptop's aside
    code, out, err = cli(a, monkeypatch, "sync", "--vault", str(laptop), "--json")
    assert code == 0, err
    sibling = next(p.name for p in (laptop / "notes").glob("otters.conflict-*.md"))
    assert "machine-a" in sibling and "desktop's" in (laptop / "notes/otters.md").read_text()
    code, out, err = cli(a, monkeypatch, "resolve", "notes/otters.md", "--keep", "mine", "--vault", str(laptop))
    assert code == 0, err
    assert (laptop / "notes/otters.md").read_text() == ours and not (laptop / "notes" / sibling).exists()
    assert "this machine's own version" in out


def test_theirs_on_the_machine_whose_version_was_set_aside_keeps_the_other_machines_and_says_so(
    tmp_path: Path, two: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _bare, laptop, desktop = two
    a = {**environment(tmp_path / "a"), "AGENTMD_HOST": "machine-a"}
    b = {**environment(tmp_path / "b"), "AGENTMD_HOST": "machine-b"}
    (laptop / "notes/otters.md").write_text("---\ntitle: Otters\n---\n# Otters\n\nThe laptop's otters.\n")
    theirs = "---\ntitle: Otters\n---\n# Otters\n\nThe desktop's otters.\n"
    (desktop / "notes/otters.md").write_text(theirs)
    cli(a, monkeypatch, "sync", "--vault", str(laptop))
    cli(b, monkeypatch, "sync", "--vault", str(desktop))
    code, _out, err = cli(a, monkeypatch, "sync", "--vault", str(laptop), "--json")
    assert code == 0, err
    code, out, err = cli(a, monkeypatch, "resolve", "notes/otters.md", "--keep", "theirs", "--vault", str(laptop))
    assert code == 0, err
    assert (laptop / "notes/otters.md").read_text() == theirs
    assert "the other machine's version" in out and "now holds this machine's own version" not in out, out
