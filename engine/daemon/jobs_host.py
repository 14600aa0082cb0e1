"""The daemon's scheduled work: the job scheduler (engine/jobs/) wired to this daemon's own actions.

The built-in actions are what used to be the daemon's private timers (the periodic reconcile pass, the
daily self-probe, the daily repack) plus the morning note. The scheduler runs them on its thread, one at a
time, and after every pass the alerter looks at the status and pages on a new red condition.
`serve --reconcile-interval` and the daemon's probe interval become the defaults of the `reconcile` and
`probe` jobs; a manifest in the config folder's `jobs/` still overrides them.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import threading
import time
from collections.abc import Mapping
from typing import Any

from agentmd.engine.git.health import repack
from agentmd.engine.jobs import morning
from agentmd.engine.jobs.manifest import Loaded, jobs_dir, load_jobs
from agentmd.engine.jobs.notify import Alerter, AlertTracker, notifiers_from_config
from agentmd.engine.jobs.report import BUILT_IN_ACTIONS, read_config, token_ceiling
from agentmd.engine.jobs.runner import (
    Clock,
    JobDeferred,
    JobFailed,
    JobInterrupted,
    JobSkipped,
    Meter,
    Scheduler,
    system_clock,
)
from agentmd.engine.settings import RECONCILE_INTERVAL

log = logging.getLogger("agentmd.daemon.jobs")

MAX_POLL = 30.0
SYNC_SETTLE = 15.0  # seconds after commits before the round that shares them (the job's next pass after it)


class DaemonJobs:
    def __init__(self, daemon: Any, *, clock: Clock = system_clock) -> None:
        """`daemon` is the `Daemon` of engine/daemon/service.py (not imported here: it imports this)."""
        self.daemon = daemon
        self.config = read_config(daemon.settings)
        self.overrides: dict[str, dict[str, object]] = {}
        interval = daemon.reconcile_interval
        if interval != RECONCILE_INTERVAL and interval > 0 and math.isfinite(interval):
            self.overrides["reconcile"] = {"schedule": f"every {interval:g}s"}
        if daemon.probe_interval <= 0:
            self.overrides["probe"] = {"enabled": False}
        else:
            self.overrides["probe"] = {"schedule": f"every {daemon.probe_interval:g}s"}
        self.poll = max(0.05, min(MAX_POLL, interval / 4)) if interval > 0 else MAX_POLL
        daemon.reconcile_interval = math.inf  # the reconcile job owns the periodic pass from now on
        actions = {
            "reconcile": self._reconcile,
            "probe": self._probe,
            "repack": self._repack,
            "morning-note": self._morning_note,
            "ingest-sweep": self._ingest_sweep,
            "groom-propose": self._groom_propose,
            "enrich": self._enrich,
            "sync": self._sync,
            "lifecycle": self._lifecycle,
            "lessons": self._lessons,
            "maps": self._maps,
        }
        assert set(actions) == BUILT_IN_ACTIONS
        self.scheduler = Scheduler(
            self._load, actions, daemon.settings.state_dir, clock=clock, daily_token_ceiling=token_ceiling(self.config)
        )
        notifiers, notes = notifiers_from_config(self.config)
        for note in notes:
            log.warning("%s", note)
        if not notifiers:
            log.info("no notifier configured: a red status sends no alert (set [notify] in the config file)")
        self.alerter = Alerter(AlertTracker(daemon.settings.state_dir, clock), notifiers, daemon.status)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sync_due: float | None = None  # when a round is due because commits settled (monotonic seconds)
        self.sync_settle = SYNC_SETTLE

    def _load(self) -> Loaded:
        return load_jobs(jobs_dir(self.daemon.settings), set(BUILT_IN_ACTIONS), self.overrides)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.scheduler.serve,
            args=(self._stop, self.poll, self._after_tick),
            name="agentmd-jobs",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def sync_soon(self, delay: float | None = None) -> None:
        """Commits settled: run a sync round `delay` seconds (default `sync_settle`) from now, at the scheduler's
        next pass after it, besides the job's own schedule, so another machine sees them within a minute."""
        due = time.monotonic() + (self.sync_settle if delay is None else delay)
        if self._sync_due is None or due < self._sync_due:
            self._sync_due = due

    @property
    def sync_asked(self) -> bool:
        """Whether commits asked for a sync round that has not run yet (it waits while the rounds back off)."""
        return self._sync_due is not None

    def _after_tick(self) -> None:
        if not self.daemon._stale:
            self.alerter.check()
        due = self._sync_due
        if due is not None and time.monotonic() >= due:
            if self._backing_off() is not None:
                return  # the remote was unreachable: the round waits (still asked for) until the backoff ends
            self._sync_due = None
            spec = self.scheduler.reload().jobs.get("sync")
            if spec is not None and spec.enabled:  # a manifest may switch it off
                self.scheduler.run(spec, trigger="commits")
                retry = self._backing_off()
                if retry is not None:  # the remote was unreachable: the commits still wait, until the backoff ends
                    left = (retry - self.scheduler.clock()).total_seconds()
                    self.sync_soon(max(0.0, left))

    def routes(self) -> list[Any]:
        """`POST /v1/jobs_run {"name": ...}`: run one job now (`agentmd jobs run NAME`)."""
        from agentmd.engine.daemon.server import json_routes

        return json_routes(jobs_run=self._run_json)

    def _run_json(self, data: dict[str, object]) -> dict[str, object]:
        """Only the owner starts a job by hand: a job may be one they switched off, or a paid one (`enrich`), and
        the access token alone is in every agent's configuration."""
        from agentmd.engine.daemon.operator import OPERATOR_FIELD, OPERATOR_HEADER, is_operator
        from agentmd.engine.errors import UsageError

        if not is_operator(self.daemon.settings.state_dir, data.pop(OPERATOR_FIELD, None)):
            raise UsageError(
                f"running a job needs the vault's operator token in the {OPERATOR_HEADER} header, which "
                "`agentmd jobs run NAME` sends; the access token alone does not start jobs"
            )
        try:
            return dict(self.scheduler.run_named(str(data.get("name", ""))))
        except KeyError as exc:
            raise UsageError(str(exc.args[0])) from None

    # -- the actions ---------------------------------------------------------------------------

    def _wait(self, meter: Meter, done: Any) -> None:
        pause = threading.Event()
        while not done():
            if self._stop.is_set():
                raise JobInterrupted("the daemon is stopping")
            meter.check()
            pause.wait(0.05)

    def _reconcile(self, meter: Meter) -> Mapping[str, Any]:
        before = self.daemon.passes
        self.daemon.request_pass()
        self._wait(meter, lambda: self.daemon.passes > before)
        report = self.daemon._last_report
        if report is None:
            return {}
        if report.refused:
            raise JobFailed(f"reconcile refused: {report.refused}")
        return {
            "added": report.added,
            "updated": report.updated,
            "deleted": report.deleted,
            "errors": len(report.errors),
        }

    def _ready(self) -> None:
        if self.daemon._stale:
            raise JobDeferred("the index is still being built")

    def _probe(self, meter: Meter) -> Mapping[str, Any]:
        self._ready()
        result = self.daemon.probe(min(self.daemon.probe_budget, meter.spec.budget.wall))
        if not result.ok:
            raise JobFailed(f"probe failed: {result.error}")
        return {"round_trip_ms": result.round_trip_ms, "note": result.path}

    def _backing_off(self) -> dt.datetime | None:
        """When the daemon's next sync round may run, while it backs off from an unreachable remote."""
        from agentmd.engine.git.sync_run import backing_off

        return backing_off(self.daemon.settings.state_dir, self.scheduler.clock())

    def _sync(self, meter: Meter) -> Mapping[str, Any]:
        """A sync round when the vault has a remote. A failed round is recorded as failed, but its streak is the
        sync state's to judge (engine/git/sync.py): status turns yellow after an hour of failures and red after a
        day, not after three rounds, and the rounds back off (1, 2, 4 ... 30 minutes, recorded as skipped) until
        one reaches the remote."""
        from agentmd.engine.git.branches import SyncError, remote_url
        from agentmd.engine.git.runner import GitCli

        if not (self.daemon.settings.vault / ".git").exists() or remote_url(GitCli(self.daemon.settings.vault)) is None:
            raise JobSkipped("the vault has no git remote (`agentmd remote add URL` adds one)")
        retry = self._backing_off()
        if retry is not None:
            raise JobSkipped(
                f"backing off: the remote was unreachable; the next round runs from "
                f"{retry.isoformat(timespec='seconds')} (`agentmd sync` tries now)"
            )
        try:
            return self.daemon.sync(clock=self.scheduler.clock).to_dict()
        except SyncError as exc:
            raise JobFailed(str(exc), streak=False) from exc

    def _repack(self, meter: Meter) -> Mapping[str, Any]:
        if not (self.daemon.settings.vault / ".git").exists():
            return {"skipped": "the vault is not a git repository"}
        message, done = repack(self.daemon.settings.vault)
        if "failed" in message:
            raise JobFailed(message)
        if not done:  # someone holds the repository's lock: a later pass tries again while the slot is open
            raise JobDeferred(message)
        return {"message": message}

    def _morning_note(self, meter: Meter) -> Mapping[str, Any]:
        self._ready()
        table = self.config.get("morning")
        space = str(table.get("space", morning.DEFAULT_SPACE)) if isinstance(table, dict) else morning.DEFAULT_SPACE
        written = morning.write_note(
            self.daemon.capturer,
            vault=self.daemon.settings.vault,
            state_dir=self.daemon.settings.state_dir,
            status=self.daemon.status(),
            records=self.scheduler.log.records(),
            now=self.scheduler.clock(),
            space=space,
        )
        self.daemon.request_commit(0.0)
        return written

    def _ingest_sweep(self, meter: Meter) -> Mapping[str, Any]:
        """`agentmd ingest sweep`, unattended: the config's `[[ingest]]` sources in, through the daemon's own
        writer and committer (`origin: ingest`); a change to more than one note asks the corpus-write gate."""
        from agentmd.engine.curate.ingest import plan_ingest, sources_of
        from agentmd.engine.curate.steps import apply_steps
        from agentmd.engine.git.gate import corpus_write_gate

        self._ready()
        entries = self.config.get("ingest", [])
        sources = [s for s in sources_of(entries if isinstance(entries, list) else []) if s.exists()]
        if not sources:
            return {"skipped": "no [[ingest]] sources in the config file, or none of them exists"}
        report, step = plan_ingest(self.daemon.settings.vault, sources, self.daemon.contracts.get().contract)
        meter.check()
        outcome: dict[str, object] = {
            "files": report.files,
            "created": len(report.created),
            "updated": len(report.updated),
            "unchanged": report.unchanged,
            "rejected": dict(report.rejected),
            **({"errors": report.errors} if report.errors else {}),
        }
        if not step.edits:
            return outcome
        if len(step.edits) > 1:
            gate = corpus_write_gate(self.daemon.settings.vault)
            if not gate.ok:
                raise JobFailed(f"the corpus-write gate refused the ingest ({gate.reason}): {gate.detail}")
        results = apply_steps(self.daemon.curation_writer(), [step])
        outcome["commits"] = [sha for r in results for sha in r.commits]
        return outcome

    def _lifecycle(self, meter: Meter) -> Mapping[str, Any]:
        """The lifecycle policy (engine/curate/lifecycle.py) on the scheduler's clock, applied through the daemon's
        own writer (one commit, `origin: lifecycle`); what sank and rose goes into the morning note."""
        from agentmd.engine.curate.lifecycle import run_pass
        from agentmd.engine.curate.steps import apply_steps
        from agentmd.engine.git.gate import corpus_write_gate
        from agentmd.engine.index.catalog import Catalog

        self._ready()
        daemon = self.daemon
        settings = daemon.settings
        catalog = Catalog.reader(settings.catalog_path, timeout=5.0)
        try:
            plan, results = run_pass(
                settings.vault,
                daemon.contracts.get().contract,
                catalog,
                settings.state_dir,
                settings.catalog_path,
                now=self.scheduler.clock(),
                apply=lambda steps: apply_steps(daemon.curation_writer(), steps),
                gate=lambda: corpus_write_gate(settings.vault),
            )
        finally:
            catalog.close()
        outcome = plan.to_dict()
        outcome.pop("changes", None)
        return outcome | {"commits": [sha for r in results for sha in r.commits]}

    def _groom_propose(self, meter: Meter) -> Mapping[str, Any]:
        """`agentmd groom --propose`, unattended: the plan is written to the state folder for the owner to
        review and apply (`agentmd groom --apply PLAN --yes`); nothing in the vault changes. With `[groom]
        restated = true` in the config file the plan also holds the rules stated twice (`--restated`), judged by
        the model CLI under the lowest of the `[enrich]` lines, the job's own budget and what the day's token
        ceiling has left."""
        import json

        from agentmd.engine.curate.groom import propose

        self._ready()
        settings = self.daemon.settings
        store = self.daemon.store
        if store is None:
            raise JobDeferred("the index is not open yet")
        contract = self.daemon.contracts.get().contract
        plan = propose(settings.vault, store.catalog, contract, now=self.scheduler.clock())
        meter.check()
        restated = self._restated(meter, plan, store.catalog, contract)
        folder = settings.state_dir / "groom"
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / f"plan-{self.scheduler.clock().strftime('%Y-%m-%d')}.json"
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(plan, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(out)
        outcome: dict[str, object] = {"proposals": len(plan["proposals"]), "plan": str(out), "stats": plan["stats"]}
        if restated is not None:
            outcome["restated"] = restated
        return outcome

    def _restated(self, meter: Meter, plan: Any, catalog: Any, contract: Any) -> dict[str, object] | None:
        """The restated check of the nightly plan, when the config asks for it: what it asked and found (the
        counts of `groom --propose --restated`), or why it asked nothing tonight."""
        import shutil

        from agentmd.engine.curate.actions import stamp
        from agentmd.engine.enrich.restated import add_to_plan
        from agentmd.engine.enrich.run import settings_from

        config = read_config(self.daemon.settings)
        table = config.get("groom")
        if not isinstance(table, Mapping) or table.get("restated") is not True:
            return None
        spec = meter.spec.budget
        max_tokens = spec.tokens
        ceiling = self.scheduler.daily_token_ceiling
        if ceiling is not None:
            left = max(0, ceiling - self.scheduler.tokens_spent_today(self.scheduler.clock()))
            max_tokens = left if max_tokens is None else min(max_tokens, left)
            if left == 0:
                return {"skipped": f"budget-ceiling: the day's {ceiling} tokens are spent; asked again next night"}
        budget, model = settings_from(
            config,
            max_calls=spec.calls,
            max_tokens=max_tokens,
            max_seconds=max(0.0, spec.wall * 0.95 - meter.elapsed()),
        )
        program = model.command[0]
        if shutil.which(program) is None:
            return {"skipped": f"the model command `{program}` is not installed or not on PATH ([enrich] program)"}
        found = add_to_plan(
            plan,
            settings=self.daemon.settings,
            catalog=catalog,
            contract=contract,
            budget=budget,
            caller=self._metered(meter, model),
            now=lambda: stamp(self.scheduler.clock()),
        )
        data = found.to_dict()
        data.pop("pairs", None)  # the plan holds them; the run record keeps the counts
        return data

    def _metered(self, meter: Meter, model: Any) -> Any:
        """The model call of a paid pass, each call and the tokens it added charged to the job's run record (the
        pass checks its own budget before each call)."""
        from agentmd.engine.enrich.model import Answer, ModelCallFailed
        from agentmd.engine.enrich.run import caller_for

        call = caller_for(model)

        def metered(prompt: str, left: float) -> Answer:
            meter.calls += 1
            try:
                answer = call(prompt, left)
            except ModelCallFailed as exc:
                meter.tokens += exc.usage.added  # a failed call may still have spent
                raise
            meter.tokens += answer.usage.added
            return answer

        return metered

    def _enrich(self, meter: Meter) -> Mapping[str, Any]:
        """The nightly enrichment: the same run as `agentmd enrich`, under the lower of the owner's `[enrich]`
        lines and the job's budget, applied through the daemon's own writer (one commit per note)."""
        from agentmd.engine.curate.steps import apply_steps
        from agentmd.engine.enrich.run import enrich, settings_from
        from agentmd.engine.git.gate import corpus_write_gate

        self._ready()
        daemon = self.daemon
        spec = meter.spec.budget
        budget, model = settings_from(
            read_config(daemon.settings), max_calls=spec.calls, max_tokens=spec.tokens, max_seconds=spec.wall * 0.95
        )
        gate = corpus_write_gate(daemon.settings.vault)
        if not gate.ok:
            raise JobFailed(f"the corpus-write gate refused ({gate.reason}): {gate.detail}")
        report = enrich(
            vault=daemon.settings.vault,
            store=daemon.store,
            contract=daemon.contracts.get().contract,
            state_dir=daemon.settings.state_dir,
            budget=budget,
            caller=self._metered(meter, model),
            model=model,
            apply=lambda steps: apply_steps(daemon.curation_writer(), steps),
        )
        counts = report.to_dict()["counts"]
        return {
            **{k.replace("-", "_"): v for k, v in counts.items()},
            "calls": report.calls,
            "tokens_added": report.usage.added,
            "cost_usd": report.usage.cost_usd,
            "stopped_by": report.stopped_by,
            "cursor": report.cursor,
            "dormant_notes": report.dormant,
            "by_cause": report.by_cause,
        }

    def _lessons(self, meter: Meter) -> Mapping[str, Any]:
        """Lessons from recurring outcomes (`agentmd lessons`), under the lower of the owner's `[enrich]` lines and
        the job's budget, each lesson written unfiled through the daemon's own writer (one commit each)."""
        from agentmd.engine.curate.steps import apply_steps
        from agentmd.engine.enrich.lessons import find_lessons
        from agentmd.engine.enrich.run import settings_from

        self._ready()
        daemon = self.daemon
        store = daemon.store
        if store is None:
            raise JobDeferred("the index is not open yet")
        spec = meter.spec.budget
        budget, model = settings_from(
            read_config(daemon.settings), max_calls=spec.calls, max_tokens=spec.tokens, max_seconds=spec.wall * 0.95
        )
        found = find_lessons(
            vault=daemon.settings.vault,
            catalog=store.catalog,
            contract=daemon.contracts.get().contract,
            state_dir=daemon.settings.state_dir,
            budget=budget,
            caller=self._metered(meter, model),
            model=model.name,
            apply=lambda steps: apply_steps(daemon.curation_writer(), steps),
            now=self.scheduler.clock,
        )
        data = found.to_dict()
        data.pop("clusters", None)
        return data

    def _maps(self, meter: Meter) -> Mapping[str, Any]:
        """The maps of content (`agentmd maps --yes`), rebuilt from the notes' facets through the daemon's own
        writer: one `origin: maps` commit when a page changed, nothing when none did; no model is asked."""
        from agentmd.engine.curate.maps import plan
        from agentmd.engine.curate.steps import apply_steps
        from agentmd.engine.git.gate import corpus_write_gate

        self._ready()
        daemon = self.daemon
        store = daemon.store
        if store is None:
            raise JobDeferred("the index is not open yet")
        step, maps = plan(daemon.settings.vault, store.catalog, daemon.contracts.get().contract)
        meter.check()
        outcome: dict[str, object] = {
            "notes": maps.notes,
            "facets": maps.values,
            "pages": len(maps.pages),
            "written": len(step.edits),
            "archived": maps.archived,
        }
        if not step.edits:
            return outcome
        if len(step.edits) > 1:
            gate = corpus_write_gate(daemon.settings.vault)
            if not gate.ok:
                raise JobFailed(f"the corpus-write gate refused the maps ({gate.reason}): {gate.detail}")
        results = apply_steps(daemon.curation_writer(), [step])
        outcome["commits"] = [sha for r in results for sha in r.commits]
        return outcome
