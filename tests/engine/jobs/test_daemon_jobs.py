"""The daemon's own timers as jobs: the real daemon's reconcile, self-probe, repack and morning note run by a
scheduler whose clock the test moves (the daemon's own scheduler runs beside it on the real clock, and has
nothing due in the seconds the test takes)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import client_of, is_clean, make_repo, origins, wait_until

from agentmd.engine.client import DaemonHTTPError
from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.service import Daemon
from agentmd.engine.jobs.manifest import load_jobs
from agentmd.engine.jobs.report import BUILT_IN_ACTIONS
from agentmd.engine.jobs.runner import RunLog
from agentmd.engine.jobs.schedule import latest_slot
from agentmd.engine.settings import Settings, resolve

pytestmark = pytest.mark.slow


def openings(at: dt.datetime) -> list[dt.datetime]:
    """The latest opening at or before `at` of every shipped job that runs at a time of day."""
    jobs = load_jobs(None, set(BUILT_IN_ACTIONS)).jobs.values()
    return [latest_slot(j.schedule, at) for j in jobs if j.schedule.kind != "interval"]


class FakeClock:
    """Starts just after the daemon's own scheduler first saw the jobs on the real clock, so no slot of
    today before that counts. When a daily time or a window opens within the minutes the test steps through,
    it starts half an hour before the real time instead (openings of the shipped jobs are further apart than
    that): a slot before the first sighting never runs, so the first ticks see only the interval jobs."""

    STEPS = dt.timedelta(minutes=10)

    def __init__(self) -> None:
        real = dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.now = real + dt.timedelta(minutes=1)
        if any(real < opening <= self.now + self.STEPS for opening in openings(real + self.STEPS)):
            self.now = real - dt.timedelta(minutes=30)

    def at(self, hour: int, minute: int) -> None:
        """The given time on the day after the clock's current day."""
        self.now = (self.now + dt.timedelta(days=1)).replace(hour=hour, minute=minute)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def settings(tmp_path: Path, env: dict[str, str]) -> Settings:
    vault = make_repo(tmp_path / "vault", {"README.md": "# Vault\n", "notes/first.md": "first note about otters\n"})
    return resolve(vault=str(vault))


@pytest.fixture
def daemon(settings: Settings) -> Iterator[Daemon]:
    d = Daemon(settings, port=0, commit_debounce=0.2, probe_interval=3600)
    d.start()
    wait_until(lambda: not d.health()["index_stale"], what="first pass")
    yield d
    d.stop()


def test_the_daemon_timers_run_as_jobs_at_their_times(
    daemon: Daemon, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert daemon.reconcile_interval == float("inf")  # the reconcile job owns the periodic pass
    clock = FakeClock()
    # The morning note (06:30 on the day after the clock's day, below) counts the commits of the day before it.
    # Git dates commits by the real clock, which is more than a day before that note when the suite runs
    # between midnight and 06:30, so the commits of this evening are dated on the jobs' clock instead.
    morning = (clock.now + dt.timedelta(minutes=5, days=1)).replace(hour=6, minute=30)
    stamp = (morning - dt.timedelta(hours=1)).isoformat()
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
    jobs = DaemonJobs(daemon, clock=clock)
    assert jobs.scheduler.tick() == []
    clock.now += dt.timedelta(minutes=2)
    (probe,) = jobs.scheduler.tick()
    assert probe["job"] == "probe" and probe["outcome"] == "ok", probe
    assert probe["changed"]["round_trip_ms"] is not None
    (settings.vault / "notes" / "second.md").write_text("a second note about herons\n", encoding="utf-8")
    clock.now += dt.timedelta(minutes=3)
    records = jobs.scheduler.tick()
    assert [r["job"] for r in records] == ["reconcile", "sync"] and records[0]["outcome"] == "ok"
    assert records[1]["outcome"] == "skipped" and "no git remote" in records[1]["stop_reason"]  # nothing to sync
    wait_until(lambda: is_clean(settings.vault), 10, "the pass's commit")

    clock.at(2, 10)
    # a repack that finds the repository's lock held (a commit in flight) is deferred to a later pass
    repacked = wait_until(
        lambda: [r for r in jobs.scheduler.tick() if r["job"] == "repack" and r["outcome"] == "ok"], 10, "repack"
    )
    assert "repacked the vault repository" in repacked[0]["changed"]["message"]
    clock.now = clock.now.replace(hour=6, minute=30)
    records = {r["job"]: r for r in jobs.scheduler.tick()}
    note = records["morning-note"]
    assert note["outcome"] == "ok", note
    wait_until(lambda: is_clean(settings.vault) and "morning" in origins(settings.vault), 10, "morning commit")
    text = (settings.vault / note["changed"]["path"]).read_text(encoding="utf-8")
    assert "- probe: " in text and "- reconcile: " in text and "- repack: 1 ok" in text
    changed = text.split("## What changed")[1].split("## What needs you")[0]
    assert "self-probe" not in changed.split("commits:")[0]  # probe notes are not the memory changing
    assert "by self-probe" in changed.split("commits:")[1]  # their commits are still counted
    # the probe (hourly in this daemon) and the reconcile ran again on the next day's passes
    # (a run the clock's jump over a whole day passed by, such as that day's morning note when the suite runs
    # before 06:30, is logged as skipped: it did not run)
    logged = [r["job"] for r in RunLog(settings.state_dir).records() if r.get("outcome") != "skipped"]
    assert logged[0] == "probe" and "groom-propose" in logged  # the nightly groom proposal ran in its window
    wanted = ["repack", "lifecycle", "morning-note"]  # the lifecycle policy runs before the morning note
    assert [j for j in logged if j not in ("probe", "reconcile", "groom-propose", "sync")] == wanted
    ran = [r for r in RunLog(settings.state_dir).records() if r["job"] == "lifecycle" and r["outcome"] == "ok"]
    assert ran and ran[0]["changed"]["sank"] == [] and ran[0]["changed"]["off"] is None  # its watch has just begun


def test_a_daemon_without_the_probe_has_it_switched_off(settings: Settings) -> None:
    d = Daemon(settings, port=0, commit_debounce=0.2, probe_interval=0)
    d.start()
    try:
        assert d.jobs is not None
        loaded = d.jobs.scheduler.reload()
        assert loaded.jobs["probe"].enabled is False and loaded.jobs["reconcile"].enabled is True
    finally:
        d.stop()


def test_ingest_sweep_and_groom_propose_run_as_jobs(daemon: Daemon, settings: Settings, tmp_path: Path) -> None:
    """The curation jobs: the sweep brings the config's sources in through the daemon's writer (one ingest
    commit), and again finds nothing to do; the groom job writes a plan for review and changes no note."""
    clock = FakeClock()
    jobs = DaemonJobs(daemon, clock=clock)
    ran = jobs.scheduler.run_named("ingest-sweep")
    assert ran["outcome"] == "ok" and "no [[ingest]] sources" in ran["changed"]["skipped"]
    source = tmp_path / "runbooks"
    source.mkdir()
    (source / "deploy.md").write_text("# Deploy\n\n## Rollback\n\nRevert the release tag, then redeploy.\n")
    jobs.config = {"ingest": [{"path": str(source)}]}
    ran = jobs.scheduler.run_named("ingest-sweep")
    assert ran["outcome"] == "ok" and ran["changed"]["created"] >= 1, ran
    wait_until(lambda: is_clean(settings.vault) and "ingest" in origins(settings.vault), 10, "the ingest commit")
    again = jobs.scheduler.run_named("ingest-sweep")
    assert again["outcome"] == "ok" and again["changed"]["created"] == 0 and "commits" not in again["changed"]

    head = sorted(p.read_bytes() for p in settings.vault.rglob("*.md"))
    proposed = jobs.scheduler.run_named("groom-propose")
    assert proposed["outcome"] == "ok", proposed
    plan = Path(proposed["changed"]["plan"])
    assert plan.is_file() and plan.is_relative_to(settings.state_dir)
    assert sorted(p.read_bytes() for p in settings.vault.rglob("*.md")) == head and is_clean(settings.vault)


def test_only_the_owner_starts_a_job_by_hand(daemon: Daemon, settings: Settings) -> None:
    # the access token is in every agent's configuration; starting a job (one switched off, a paid one) takes
    # the operator token, which `agentmd jobs run` sends
    from agentmd.engine.daemon.operator import OPERATOR_HEADER, ensure_token

    client = client_of(daemon)
    before = len(RunLog(settings.state_dir).records(job="repack"))
    with pytest.raises(DaemonHTTPError) as refused:
        client.post("/v1/jobs_run", {"name": "repack"})
    assert refused.value.status == 400 and "operator token" in refused.value.message
    with pytest.raises(DaemonHTTPError):  # a body's own claim is not the header
        client.post("/v1/jobs_run", {"name": "repack", "_operator_token": ensure_token(settings.state_dir)})
    assert len(RunLog(settings.state_dir).records(job="repack")) == before  # nothing ran
    def run() -> dict[str, Any]:
        return dict(
            client.post("/v1/jobs_run", {"name": "repack"}, headers={OPERATOR_HEADER: ensure_token(settings.state_dir)})
        )

    # a repack waits (is deferred, not logged) while a commit cycle holds the repository's lock, as the
    # daemon's first cycles may at start: asked again until it runs
    record = wait_until(lambda: (r := run())["outcome"] != "deferred" and r, 30, "the repack run by its owner")
    assert record["job"] == "repack" and len(RunLog(settings.state_dir).records(job="repack")) == before + 1
