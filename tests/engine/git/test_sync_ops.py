"""Sync as it runs for months: the daemon's rounds back off while the remote is unreachable (and a person's
`agentmd sync` never waits), status's thresholds come from the config file, and so on. Real git (a bare remote
moved away and back), real daemons; time is the jobs' injected clock, never a sleep."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_helpers import client_of, git, make_repo, wait_until

from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.fsutil import read_json, write_json
from agentmd.engine.git.branches import SyncError
from agentmd.engine.git.conflicts import STATE_FILE
from agentmd.engine.git.sync_run import BACKOFF_MOST, backing_off, backoff_delay
from agentmd.engine.git.sync_status import sync_section
from agentmd.engine.index.store import Store
from agentmd.engine.jobs.report import jobs_status
from agentmd.engine.settings import Settings, resolve
from agentmd.engine.write.capture import Capturer, CaptureRequest
from agentmd.rules import ContractCache
from agentmd.rules.door import decide

pytestmark = pytest.mark.slow


class FakeClock:
    """The jobs' clock, moved by the test; it starts a minute ahead of the real one (as
    tests/engine/jobs/test_daemon_jobs.py's), so the daemon's own scheduler, on the real clock, has nothing due
    meanwhile."""

    def __init__(self) -> None:
        self.now = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(minutes=1)

    def __call__(self) -> dt.datetime:
        return self.now


def _pushed(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and a vault pushed to it."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/otters.md": "# Otters\n\nThey float.\n"})
    git(vault, "remote", "add", "origin", str(bare))
    git(vault, "push", "-q", "origin", "main")
    return bare, vault


@pytest.fixture
def remote(tmp_path: Path, env: dict[str, str]) -> tuple[Path, Path]:
    return _pushed(tmp_path)


@pytest.fixture
def cli_remote(tmp_path: Path, cli: object) -> tuple[Path, Path]:
    return _pushed(tmp_path)


@pytest.fixture
def daemon(remote: tuple[Path, Path]) -> Iterator[Daemon]:
    _, vault = remote
    d = Daemon(resolve(vault=str(vault)), port=0, commit_debounce=0.1, probe_interval=0, reconcile_interval=2)
    d.start()
    try:
        wait_until(lambda: not d.health()["index_stale"], 30, "first pass")
        yield d
    finally:
        d.stop()


def _state(settings: Settings) -> dict[str, object]:
    return read_json(settings.state_dir / STATE_FILE) or {}


def test_a_sync_right_after_a_save_takes_the_saved_file(daemon: Daemon, remote: tuple[Path, Path]) -> None:
    # the daemon's committer leaves a file saved a moment ago to settle (engine/git/settle.py); a round asked for
    # at once waits that moment, so the person's save is in what it pushes
    bare, vault = remote
    (vault / "notes/otters.md").write_text("# Otters\n\nThey float, holding hands.\n")
    pushed = daemon.sync().to_dict()
    assert pushed["outcome"] in ("pushed", "merged"), pushed
    assert "holding hands" in git(bare, "show", "main:notes/otters.md")


def test_the_backoff_doubles_from_a_minute_up_to_half_an_hour() -> None:
    minutes = [backoff_delay(n).total_seconds() / 60 for n in range(0, 9)]
    assert minutes == [0, 1, 2, 4, 8, 16, 30, 30, 30]
    assert backoff_delay(10_000) == BACKOFF_MOST


def test_the_daemons_rounds_back_off_while_the_remote_is_unreachable_and_start_again_on_success(
    daemon: Daemon, remote: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, vault = remote
    clock = FakeClock()
    jobs = DaemonJobs(daemon, clock=clock)
    away = tmp_path / "away.git"
    bare.rename(away)
    start = clock.now

    first = jobs.scheduler.run_named("sync")
    assert first["outcome"] == "failed" and "is the remote reachable?" in first["stop_reason"], first
    assert first["streak"] is False  # the sync state, not the job streak, turns status yellow and red
    state = _state(daemon.settings)
    assert state["failures"] == 1 and state["failing_since"] == start.isoformat()
    assert state["next_attempt_at"] == (start + dt.timedelta(minutes=1)).isoformat()

    waited = jobs.scheduler.run_named("sync")  # the same minute: the round is skipped, git is not asked
    assert waited["outcome"] == "skipped" and "backing off" in waited["stop_reason"], waited
    assert _state(daemon.settings)["failures"] == 1

    # each failed round doubles the wait: 1, 2, 4 minutes
    for failures, wait in ((2, 2), (3, 4)):
        clock.now = dt.datetime.fromisoformat(str(_state(daemon.settings)["next_attempt_at"]))
        ran = jobs.scheduler.run_named("sync")
        assert ran["outcome"] == "failed", ran
        state = _state(daemon.settings)
        assert state["failures"] == failures
        assert state["next_attempt_at"] == (clock.now + dt.timedelta(minutes=wait)).isoformat()
        clock.now += dt.timedelta(minutes=wait) - dt.timedelta(seconds=1)
        assert "backing off" in jobs.scheduler.run_named("sync")["stop_reason"]

    # three failed rounds in a row are no `job-failing` line: the sync state judges them (below)
    jobs_section = jobs_status(daemon.settings)
    assert jobs_section["red"] == [] and jobs_section["jobs"]["sync"]["failed_in_a_row"] == 0
    assert jobs_section["jobs"]["sync"]["last"]["outcome"] == "skipped"  # type: ignore[index]

    # status names the next attempt; the yellow line comes only after an hour of failures
    section = sync_section(vault, daemon.settings.state_dir, clock.now)
    assert section["next_attempt_at"] == state["next_attempt_at"] and section["yellow"] == []
    later = sync_section(vault, daemon.settings.state_dir, start + dt.timedelta(minutes=61))
    assert later["next_attempt_at"] is None  # an attempt time already past is no backoff
    assert any(line.startswith("sync-failing since") for line in later["yellow"])

    away.rename(bare)
    clock.now += dt.timedelta(seconds=1)  # the backoff has ended
    back = jobs.scheduler.run_named("sync")
    assert back["changed"].get("outcome") == "up-to-date", back
    state = _state(daemon.settings)
    assert state["failures"] == 0 and state["next_attempt_at"] is None and state["failing_since"] is None
    assert backing_off(daemon.settings.state_dir, clock.now) is None


def test_commits_wait_for_the_backoff_and_a_person_s_sync_never_does(
    daemon: Daemon, remote: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, vault = remote
    assert daemon.jobs is not None
    daemon.jobs.sync_settle = 0.1  # the daemon's own settling delay, shortened for the test
    away = tmp_path / "away.git"
    bare.rename(away)
    with pytest.raises(Exception, match="is the remote reachable"):
        client_of(daemon).post("/v1/sync", {})  # a person's round: it fails, and the daemon's rounds back off
    retry = backing_off(daemon.settings.state_dir, dt.datetime.now(dt.UTC))
    assert retry is not None, "a failed round starts the backoff"
    away.rename(bare)
    head = git(bare, "rev-parse", "main")
    answer = daemon.capture(CaptureRequest(title="Waits for the backoff", body="Pushed once the wait is over."))
    wait_until(lambda: git(vault, "status", "--porcelain") == "", 20, "the capture committed")
    runs = daemon.jobs.scheduler.log.records
    # the round the commits asked for waits: it is still asked for, and no round ran
    wait_until(lambda: daemon.jobs is not None and daemon.jobs.sync_asked, 10, "the round asked for")
    assert git(bare, "rev-parse", "main") == head
    assert not [r for r in runs() if r["job"] == "sync" and r["trigger"] == "commits"]

    # the backoff's end, as the state records it (the minute passing, without waiting for it)
    state = read_json(daemon.settings.state_dir / STATE_FILE) or {}
    state["next_attempt_at"] = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat(timespec="seconds")
    write_json(daemon.settings.state_dir / STATE_FILE, state)
    remote_has = lambda: answer["path"] in git(bare, "ls-tree", "-r", "--name-only", "main")  # noqa: E731
    waited = lambda: any(r["job"] == "sync" and r["trigger"] == "commits" for r in runs())  # noqa: E731
    wait_until(waited, 60, "the round the commits asked for, once the backoff ended")
    assert remote_has() and not daemon.jobs.sync_asked

    # a person's `agentmd sync` tries at once, even while the daemon backs off
    bare.rename(away)
    with pytest.raises(Exception, match="is the remote reachable"):
        client_of(daemon).post("/v1/sync", {})
    assert backing_off(daemon.settings.state_dir, dt.datetime.now(dt.UTC)) is not None
    away.rename(bare)
    result = client_of(daemon).post("/v1/sync", {})
    assert result["outcome"] == "up-to-date", result
    assert backing_off(daemon.settings.state_dir, dt.datetime.now(dt.UTC)) is None


def test_a_round_the_commits_asked_for_that_cannot_reach_the_remote_is_asked_for_again_at_the_backoffs_end(
    daemon: Daemon, remote: tuple[Path, Path], tmp_path: Path
) -> None:
    # the commits are still unpushed after the failed round: the next try is at the backoff's end (a minute), not
    # at the sync job's next slot
    bare, _vault = remote
    assert daemon.jobs is not None
    daemon.jobs.sync_settle = 0.1
    bare.rename(tmp_path / "away.git")
    daemon.capture(CaptureRequest(title="Made while the remote is away", body="It waits for the remote."))
    runs = daemon.jobs.scheduler.log.records
    failed = lambda: any(  # noqa: E731
        r["job"] == "sync" and r["trigger"] == "commits" and r["outcome"] == "failed" for r in runs()
    )
    wait_until(failed, 60, "the round the commits asked for, failing")
    jobs = daemon.jobs
    wait_until(lambda: jobs.sync_asked, 10, "the round asked for again")  # just after the failed run is logged
    assert backing_off(daemon.settings.state_dir, dt.datetime.now(dt.UTC)) is not None


def test_a_person_s_sync_from_the_command_line_ignores_the_backoff(cli_remote: tuple[Path, Path], cli) -> None:
    bare, vault = cli_remote
    settings = resolve(vault=str(vault))
    in_ten = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=10)).isoformat(timespec="seconds")
    write_json(
        settings.state_dir / STATE_FILE,
        {"failing_since": in_ten, "last_error": "`git fetch origin` failed", "failures": 5, "next_attempt_at": in_ten},
    )
    (vault / "notes/new.md").write_text("# New\n\nwritten while the daemon backed off\n")
    result = cli("sync", "--vault", str(vault))
    assert result.code == 0 and "pushed to origin/main" in result.out, result.err
    assert "notes/new.md" in git(bare, "ls-tree", "-r", "--name-only", "main")
    state = _state(settings)
    assert state["failures"] == 0 and state["next_attempt_at"] is None


def test_the_status_thresholds_come_from_the_config_file(cli_remote: tuple[Path, Path], tmp_path: Path, cli) -> None:
    from agentmd.engine.git.committer import committer_for
    from agentmd.engine.git.sync_run import sync_vault
    from agentmd.rules import ContractCache

    bare, vault = cli_remote
    config = tmp_path / "config.toml"
    config.write_text('sync_yellow_after = "10m"\nsync_red_after = "2h"\n')
    settings = resolve(vault=str(vault), config=str(config))
    assert settings.sync_yellow_after == dt.timedelta(minutes=10)
    assert settings.sync_red_after == dt.timedelta(hours=2)
    bare.rename(tmp_path / "away.git")
    half_an_hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=30)
    committer = committer_for(settings, ContractCache(settings.vault, settings.contract_path))
    with pytest.raises(Exception, match="is the remote reachable"):
        sync_vault(committer, settings.state_dir, clock=lambda: half_an_hour_ago)

    default = json.loads(cli("status", "--vault", str(vault), "--json").out)
    assert not any(line.startswith("sync-failing") for line in default["yellow"] + default["red"])
    shown = json.loads(cli("status", "--vault", str(vault), "--config", str(config), "--json").out)
    assert any(line.startswith("sync-failing since") for line in shown["yellow"]), shown["yellow"]
    later = sync_section(
        vault,
        settings.state_dir,
        half_an_hour_ago + dt.timedelta(hours=3),
        yellow_after=settings.sync_yellow_after,
        red_after=settings.sync_red_after,
    )
    assert any(line.startswith("sync-failing since") for line in later["red"]) and later["yellow"] == []
    shown_remote = cli("remote", "show", "--vault", str(vault), "--config", str(config))
    assert "sync-failing since" in shown_remote.out
    bare = cli("remote", "--vault", str(vault), "--config", str(config))  # as `git remote`: shows it
    assert bare.code == 0 and bare.out == shown_remote.out


@pytest.mark.parametrize(
    ("lines", "words"),
    [
        ('sync_yellow_after = "soon"\n', "`sync_yellow_after = 'soon'`"),
        ('sync_red_after = "-1d"\n', "`sync_red_after = '-1d'`"),
        ("sync_red_after = 0\n", "between a second and a year"),
        ("sync_yellow_after = true\n", 'sync_yellow_after = "1h"'),
        ('sync_yellow_after = "2d"\n', "longer than `sync_red_after`"),
    ],
)
def test_a_wrong_threshold_in_the_config_file_is_refused_with_the_fix(tmp_path: Path, lines: str, words: str) -> None:
    from agentmd.engine.errors import ConfigError

    vault = make_repo(tmp_path / "v", {"a.md": "a\n"})
    config = tmp_path / "config.toml"
    config.write_text(lines)
    with pytest.raises(ConfigError) as caught:
        resolve(vault=str(vault), config=str(config))
    assert words in str(caught.value)


# -- folders resolved ignoring case -------------------------------------------------------------------


@pytest.fixture
def capturer(tmp_path: Path) -> Iterator[Capturer]:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n"}).resolve()
    store = Store(tmp_path / "cache")
    try:
        yield Capturer(vault, tmp_path / "state", ContractCache(vault), store)
    finally:
        store.close()


def _folders(root: Path) -> list[str]:
    found = (p.relative_to(root) for p in root.rglob("*") if p.is_dir())
    return sorted(p.as_posix() for p in found if not p.parts[0].startswith("."))


def test_a_capture_goes_into_the_folder_the_vault_already_has_in_another_case(capturer: Capturer) -> None:
    vault = capturer.vault
    (vault / "Memory" / "Lessons").mkdir(parents=True)
    result = capturer.capture(CaptureRequest(title="Pin the versions", body="Unpinned builds broke.", type="lesson"))
    assert result.path == "Memory/Lessons/pin-the-versions.md" and result.warnings == []
    assert (vault / result.path).is_file()
    assert _folders(vault) == ["Memory", "Memory/Lessons"], "no second memory/lessons beside Memory/Lessons"
    # the door judged the vault's spelling as the contract's memory space (an agent may write there)
    contract = capturer.contracts.get().contract
    door = decide(vault, result.path, contract, actor="agent")
    assert door.allowed and door.rule == "level:standing", door
    # a case variant the vault does not have stays outside every space: never looser
    assert decide(vault, "MEMORY/lessons/x.md", contract, actor="agent").rule == "space:unknown"
    # only the existing part is respelt: a new class folder under it keeps the contract's spelling
    other = capturer.capture(CaptureRequest(title="Ship on Fridays", body="We do not.", type="decision"))
    assert other.path == "Memory/decisions/ship-on-fridays.md"
    assert capturer.store is not None and {result.path, other.path} <= capturer.store.index.paths()


def test_the_exact_spelling_wins_and_siblings_differing_in_case_are_named(capturer: Capturer) -> None:
    vault = capturer.vault
    for folder in ("memory/lessons", "Memory/Lessons", "MEMORY"):
        (vault / folder).mkdir(parents=True)
    result = capturer.capture(CaptureRequest(title="Cache the wheel", body="Builds halve.", type="lesson"))
    assert result.path == "memory/lessons/cache-the-wheel.md"
    (warning,) = result.warnings
    assert "MEMORY, Memory" in warning and "went into memory" in warning

    (vault / "memory" / "lessons" / "cache-the-wheel.md").unlink()
    for folder in ("memory/lessons", "memory"):
        (vault / folder).rmdir()
    again = capturer.capture(CaptureRequest(title="Cache the wheel", body="Builds halve.", type="lesson"))
    assert again.path == "MEMORY/lessons/cache-the-wheel.md"  # the first in sorted order, then a new folder
    assert any("(MEMORY, Memory)" in w for w in again.warnings), again.warnings


def test_a_folder_made_after_a_capture_is_seen_by_the_next(capturer: Capturer) -> None:
    vault = capturer.vault
    first = capturer.capture(CaptureRequest(title="One", body="first", type="lesson"))
    assert first.path == "memory/lessons/one.md"
    (vault / "memory" / "lessons" / "one.md").unlink()
    (vault / "memory" / "lessons").rmdir()
    (vault / "memory").rename(vault / "Memory")
    second = capturer.capture(CaptureRequest(title="Two", body="second", type="lesson"))
    assert second.path == "Memory/lessons/two.md"


# -- sync-tool patterns the contract adds ------------------------------------------------------------

PATTERNS = (
    "# Storage rules\n\n```yaml\nsync_tool_patterns:\n"
    '  temp: ["~cloud~*", "cloudsync-cache/"]\n'
    '  conflict: ["{stem} (clash *){ext}"]\n'
    '  placeholder: [".{stem}{ext}.cloudf"]\n```\n'
)
TOOL_FILES = {
    "notes/~cloud~Plan.md": "half a download, flamingos\n",
    "cloudsync-cache/old.md": "the tool's old version, flamingos\n",
    "notes/Plan (clash 2026-12-04).md": "the other device's plan, flamingos\n",
}


def _tool_vault(root: Path) -> Path:
    vault = make_repo(root, {"notes/Plan.md": "the plan, pelicans\n", "notes/Budget.md": "the budget, quokkas\n"})
    (vault / "standards").mkdir()
    (vault / "standards" / "storage-rules.md").write_text(PATTERNS)
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "contract")
    for rel, text in TOOL_FILES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    return vault


def test_the_contracts_sync_tool_patterns_are_honoured_by_the_reconcile(tmp_path: Path) -> None:
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.rules import load_contract

    vault = _tool_vault(tmp_path / "vault")
    patterns = load_contract(vault).contract.sync_tool_patterns
    assert patterns, "the vault's contract adds patterns"
    with Store(tmp_path / "plain") as store:  # without the contract's patterns they would be notes
        reconcile(vault, store)
        assert set(TOOL_FILES) <= store.index.paths()
    with Store(tmp_path / "cache") as store:
        report = reconcile(vault, store, sync_patterns=patterns)
        assert store.index.paths() == {"notes/Plan.md", "notes/Budget.md", "standards/storage-rules.md"}
        reasons = {s["path"]: s["reason"] for s in report.skipped}
        assert reasons["notes/Plan (clash 2026-12-04).md"].endswith("copy of notes/Plan.md")
        # the tool moves Budget.md off this device: its placeholder keeps it in the index, on a full pass and
        # on a pass over the one path
        (vault / "notes" / "Budget.md").unlink()
        (vault / "notes" / ".Budget.md.cloudf").write_text("placeholder")
        assert reconcile(vault, store, only={"notes/Budget.md"}, sync_patterns=patterns).deleted == 0
        assert reconcile(vault, store, sync_patterns=patterns).deleted == 0
        assert "notes/Budget.md" in store.index.paths()
        assert reconcile(vault, store).deleted == 1  # without the patterns, a deletion


def test_the_daemon_never_indexes_or_commits_what_the_contracts_patterns_name(tmp_path: Path, env: dict) -> None:
    from daemon_helpers import running_daemon

    vault = _tool_vault(tmp_path / "vault")
    with running_daemon(resolve(vault=str(vault))) as d:
        assert d.store is not None
        (vault / "notes" / "Fresh.md").write_text("a new note, herons\n")
        (vault / "notes" / "~cloud~Fresh.md").write_text("half a download, herons\n")
        (vault / "notes" / "Fresh (clash 2026-12-05).md").write_text("the other device's, herons\n")
        store = d.store
        wait_until(lambda: "notes/Fresh.md" in store.index.paths(), 20, "the new note indexed")
        wait_until(lambda: git(vault, "status", "--porcelain", "--", "notes/Fresh.md") == "", 20, "committed")
        indexed = store.index.paths()
        assert not indexed & {*TOOL_FILES, "notes/~cloud~Fresh.md", "notes/Fresh (clash 2026-12-05).md"}
        wait_until(lambda: "clash 2026-12-05" in git(vault, "ls-files"), 20, "the conflict copy committed")
        tracked = git(vault, "ls-files")
        assert "~cloud~" not in tracked and "cloudsync-cache" not in tracked
        # the tool moves Fresh.md off this device: no deletion is committed, the note stays searchable
        (vault / "notes" / "Fresh.md").unlink()
        (vault / "notes" / ".Fresh.md.cloudf").write_text("placeholder")
        d.request_pass()
        passes = d.passes
        wait_until(lambda: d.passes > passes, 20, "a full pass")
        d.request_commit(0.0)
        wait_until(lambda: d.committer.commit_cycle().commits == [], 20, "nothing left to commit")
        tracked = git(vault, "ls-files")
        assert "notes/Fresh.md" in tracked and ".Fresh.md.cloudf" not in tracked
        assert "notes/Fresh.md" in store.index.paths()


def test_status_tells_of_a_failed_round_at_once(daemon: Daemon, remote: tuple[Path, Path], tmp_path: Path) -> None:
    # `agentmd sync` through the daemon fails; the `agentmd status` that follows names the failure, without
    # waiting for the health pass to compute the whole status again
    bare, _vault = remote
    assert "reachable" not in json.dumps(daemon.status()["sync"])
    bare.rename(tmp_path / "away.git")
    with pytest.raises(SyncError):
        daemon.sync()
    section = daemon.status()["sync"]
    assert "is the remote reachable?" in json.dumps(section), section


def test_a_round_asked_while_another_runs_waits_and_its_outcome_is_recorded_last(
    daemon: Daemon, remote: tuple[Path, Path], tmp_path: Path
) -> None:
    # the daemon's own sync job and `agentmd sync` may ask at once: the second round waits for the first to record
    # its outcome, so a success finished first can never be written over the failure that came after it
    import threading

    bare, _vault = remote
    outcome: list[object] = []

    def second() -> None:
        try:
            outcome.append(daemon.sync())
        except SyncError as exc:
            outcome.append(exc)

    with daemon.committer.sync_round():  # a round in progress
        bare.rename(tmp_path / "away.git")
        worker = threading.Thread(target=second)
        worker.start()
        worker.join(0.5)
        assert worker.is_alive() and not outcome  # it waits for the round in progress
    worker.join(30)
    assert outcome and isinstance(outcome[0], SyncError)
    assert "is the remote reachable?" in json.dumps(daemon.status()["sync"])
