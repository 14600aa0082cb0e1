"""`agentmd serve`: the resident process that keeps one vault's index and git history current.

Threads, each with one job:
- the HTTP listener (started first, so `/health` and `/status` answer while a cold index builds);
- the watcher, which turns file events into debounced path hints (the speed);
- the indexer, the only writer of the index and catalog: a reconcile pass on every batch of hints, at
  start-up and whenever the `reconcile` job asks, every `reconcile_interval` seconds (the guarantee when
  events are lost);
- the committer, which commits what git reports dirty about `commit_debounce` seconds after the last
  change (at most `commit_max_wait` after the first uncommitted one) and after every periodic pass;
- the embedder (engine/daemon/embedding.py), which keeps the model warm and embeds new and changed
  chunks in small slices after each pass, so searches are hybrid once vectors exist;
- the job scheduler (engine/daemon/jobs_host.py), which runs the periodic reconcile, the self-probe, the
  repack and the morning note when due, and alerts when the status turns red.
- the health pass (engine/daemon/health.py), every `health_interval` seconds: live checks of the vault,
  the disks, the index and the watcher, merged into `/status`. Index damage, found by it or by a search,
  makes the indexer set the index aside and rebuild it from the vault while the daemon keeps serving.
When inotify refuses to watch (its limits used up), the daemon still starts and reconciles the whole
vault every FALLBACK_RECONCILE seconds instead.
One daemon per vault: an exclusive lock in the state directory refuses a second one, naming the first.
"""

from __future__ import annotations

import datetime as dt
import gc
import logging
import logging.handlers
import math
import os
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any

from agentmd.engine.curate.host import serve_plan
from agentmd.engine.curate.steps import Writer
from agentmd.engine.daemon.allowance import MassDeleteAllowance
from agentmd.engine.daemon.embedding import DenseWorker
from agentmd.engine.daemon.health import MIN_FREE_BYTES, HealthPass
from agentmd.engine.daemon.instance import InstanceLock
from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.mcp_server import mount_mcp
from agentmd.engine.daemon.operator import OPERATOR_FIELD, OPERATOR_HEADER, is_operator
from agentmd.engine.daemon.server import DEFAULT_PORT, AccessToken, HttpServer, build_app, json_routes
from agentmd.engine.daemon.status import (
    compute_status,
    with_dense,
    with_git,
    with_lease,
    with_live,
    with_recall,
    write_json,
)
from agentmd.engine.daemon.supervisor import SUPERVISOR_ENV
from agentmd.engine.daemon.upkeep import HEALTH_INTERVAL, Upkeep, status_due
from agentmd.engine.daemon.watcher import VaultWatcher
from agentmd.engine.errors import AgentmdError, IndexDamaged, UsageError
from agentmd.engine.git.committer import committer_for
from agentmd.engine.git.schedule import COMMIT_MAX_WAIT, CommitSchedule
from agentmd.engine.git.sync import DEFAULT_REMOTE, SyncError, SyncResult, sync_vault
from agentmd.engine.index.fulltext.schema import is_panic
from agentmd.engine.index.reconcile import ReconcileReport, reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.memory import Keeper, resident_bytes
from agentmd.engine.search.query import DEFAULT_MODE as SEARCH_MODE
from agentmd.engine.search.query import search
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import COMMIT_DEBOUNCE, RECONCILE_INTERVAL, Settings
from agentmd.engine.synctools import is_sync_temp
from agentmd.engine.write.capture import Capturer, CaptureRefused, CaptureRequest, sweep_temp_files
from agentmd.engine.write.phone import sweep_phone_notes
from agentmd.engine.write.probe import DEFAULT_BUDGET, ProbeResult, load_last, new_nonces, run_probe
from agentmd.rules import ContractCache

log = logging.getLogger("agentmd.daemon")

PROBE_INTERVAL = 24 * 3600.0
MAX_PROBE_BUDGET = 120.0


def settle_heap() -> None:
    """Once the index is open and built (start-up, a rebuild): collect, then set every object alive now aside
    from the cycle collector (`gc.freeze`). They are the daemon's long-lived state (modules, the catalog's
    stat keys, the index's memos: some hundred thousand objects), and a full collection walked all of them,
    every ten seconds or so under many captures, holding every thread for 100-200 ms: the slowest captures'
    extra wait. Later collections walk only what was made since."""
    gc.collect()
    gc.freeze()


STATUS_MAX_AGE = 10.0  # seconds: the age at which the indexer computes the full status again (see `status_old`)


def status_old(now: float, last_at: float, last_cost: float) -> bool:
    """Whether the indexer, between passes, computes the full status again: once it is STATUS_MAX_AGE old, and
    no sooner than the health pass's share allows (`status_due`): under many captures the full status (every
    note's review state, the notes captured since the last one read anew) takes a few hundred milliseconds of
    the interpreter, and computing it every ten seconds regardless took it past that share."""
    return now - last_at > STATUS_MAX_AGE and status_due(now, last_at, last_cost)


class Daemon(Upkeep):
    def __init__(
        self,
        settings: Settings,
        *,
        port: int = DEFAULT_PORT,
        reconcile_interval: float = RECONCILE_INTERVAL,
        commit_debounce: float = COMMIT_DEBOUNCE,
        commit_max_wait: float = COMMIT_MAX_WAIT,
        watch: bool = True,
        probe_interval: float = PROBE_INTERVAL,
        probe_budget: float = DEFAULT_BUDGET,
        clock: Callable[[], float] = time.monotonic,
        health_interval: float = HEALTH_INTERVAL,
        min_free_bytes: int = MIN_FREE_BYTES,
        listener: socket.socket | None = None,
    ) -> None:
        self.settings = settings
        # a socket already listening (`agentmd serve`'s supervisor keeps one across restarts), else `port`
        self.listener = listener
        self.port = listener.getsockname()[1] if listener is not None else port
        self.reconcile_interval = reconcile_interval
        self.commit_debounce = commit_debounce
        self.clock = clock
        self.contracts = ContractCache(settings.vault, settings.contract_path)
        self.lock = InstanceLock(settings.state_dir, settings.vault)
        self.access = AccessToken(settings.state_dir)
        self.committer = committer_for(settings, self.contracts)
        self.commit_schedule = CommitSchedule(
            commit_debounce, commit_max_wait, retry=min(30.0, max(1.0, 5 * commit_debounce)), clock=clock
        )
        self.allowance = MassDeleteAllowance(settings.state_dir)
        self.watcher = VaultWatcher(settings.vault, self._on_change, ignore=self._sync_temp) if watch else None
        self.store: Store | None = None
        self.memory = Keeper()  # gives the heap back after a burst of work (engine/memory.py)
        self.dense = DenseWorker(settings, memory=self.memory)
        self.capturer = Capturer(
            settings.vault,
            settings.state_dir,
            self.contracts,
            None,  # set once the first pass has built the index
            before_write=lambda path, origin: self.committer.note_origin(path, origin),
            after_write=lambda path, origin: self.request_commit(self.commit_debounce),
            cap_override=settings.daily_write_cap,
        )
        self.committer.vault_check = self.capturer.identity.problem
        self.capturer.group.missed = self._on_change  # notes a capture batch could not index: a pass does
        self.probe_interval = probe_interval
        self.probe_budget = probe_budget
        self._probe_aliases: set[str] = set()
        self._probe_lock = threading.Lock()
        self.server: HttpServer | None = None
        self.jobs: DaemonJobs | None = None
        self.app: Any = None  # the ASGI app being served, once started
        self.started_at = dt.datetime.now(dt.UTC)

        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._hints: set[str] = set()
        self._pass_due = True  # a full pass at start-up
        self._stale = True  # until the first pass completes
        self._refused: str | None = None
        self._last_report: ReconcileReport | None = None
        self._status: dict[str, Any] = {}
        self._status_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.passes = 0
        self.commits = 0
        self.commit_cycles = 0
        self._skips = 0  # commit cycles skipped in a row (each is retried, backing off)
        self.health_interval = health_interval
        self.health_pass = HealthPass(settings.vault, settings.state_dir, settings.cache_dir, min_free_bytes)
        self._live: dict[str, Any] = {}
        self._rebuild_due: str | None = None
        self._rebuild: dict[str, Any] = {"running": False, "count": 0}
        self._watch_error: str | None = None
        self._watch_tried = 0.0
        self._last_cycle_skipped = False

    # -- lifecycle -------------------------------------------------------------------------------

    def _instance_info(self) -> dict[str, Any]:
        """What `daemon.json` says of this daemon: pid, port, host, and the supervising `agentmd serve`."""
        info: dict[str, Any] = {
            "pid": os.getpid(),
            "port": self.port,
            "host": socket.gethostname(),
            "started": self.started_at.isoformat(timespec="seconds"),
        }
        if os.environ.get(SUPERVISOR_ENV) == str(os.getppid()):  # run by `agentmd serve`'s supervising parent
            info["supervisor"] = os.getppid()
        return info

    def start(self) -> None:
        self.access.ensure()  # before daemon.json names the port: a client that finds the port finds the token
        self.lock.acquire(self._instance_info())
        try:
            self._setup_log_file()
            log.info("starting for %s (index %s)", self.settings.vault, self.settings.cache_dir)
            mcp_routes, lifespan = mount_mcp(self)
            self.jobs = DaemonJobs(self)  # owns the periodic pass (`reconcile_interval`), the probe and the repack
            routes = json_routes(
                search=self._search_json,
                capture=self._capture_json,
                probe=self._probe_json,
                curate=self._curate_json,
                sync=self._sync_json,
                revert=self._revert_json,
            )
            routes += self.jobs.routes()
            routes += self._page_routes()
            app = build_app(
                self.health,
                self.status,
                extra_routes=[*routes, *mcp_routes],
                lifespan=lifespan,
                token=self.access.current,
            )
            self.app = app
            self.server = HttpServer(app, self.port, sock=self.listener)
            self.server.start()
            if self.port == 0:
                self.port = self.server.port
                self.lock.update(self._instance_info())
            for line in self.committer.prepare():
                log.info("%s", line)
            self.health_pass.record_vault()
            self._start_watcher()
            # only what a writer that is gone left before this start: captures already served keep theirs
            removed = sweep_temp_files(self.settings.vault, older_than=self.started_at.timestamp())
            if removed:
                log.info("removed %d capture temp file(s) left by an interrupted write", removed)
            self.dense.start()
            loops = [("agentmd-indexer", self._indexer_loop), ("agentmd-committer", self._committer_loop)]
            if self.health_interval > 0:
                loops.append(("agentmd-health", self._health_loop))
            for name, target in loops:
                t = threading.Thread(target=target, name=name, daemon=True)
                t.start()
                self._threads.append(t)
            self.jobs.start()
        except BaseException:
            self.stop()
            raise
        log.info("listening on http://127.0.0.1:%d", self.port)

    def stop(self) -> None:
        """Stop watching, let the pass and the commit in flight finish, flush the index, release the lock."""
        if self._stop.is_set():
            return
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self.watcher is not None:
            self.watcher.stop()
        if self.jobs is not None:
            self.jobs.stop()
        for t in self._threads:
            t.join(timeout=60)
        self.dense.stop()
        if self.store is not None:
            self.store.close()
        if self.server is not None:
            self.server.stop()
        self.lock.release()
        log.info("stopped")
        for handler in list(logging.getLogger("agentmd").handlers):
            if getattr(handler, "agentmd_daemon_file", False):
                logging.getLogger("agentmd").removeHandler(handler)
                handler.close()

    def run_forever(self) -> int:
        """Foreground: start, wait for SIGINT/SIGTERM, stop cleanly."""
        stop = threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            log.info("signal %d: shutting down", signum)
            stop.set()

        old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.start()
            while not stop.wait(1.0):
                if self._stop.is_set():
                    break
        finally:
            self.stop()
            for s, h in old.items():
                signal.signal(s, h)
        return 0

    def _setup_log_file(self) -> None:
        self.settings.state_dir.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            self.settings.state_dir / "agentmd.log", maxBytes=5 * 2**20, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.agentmd_daemon_file = True  # type: ignore[attr-defined]
        root = logging.getLogger("agentmd")
        root.addHandler(handler)
        if root.level == logging.NOTSET or root.level > logging.INFO:
            root.setLevel(logging.INFO)

    # -- events ----------------------------------------------------------------------------------

    def _on_change(self, paths: set[str]) -> None:
        with self._cond:
            self._hints |= paths
            self.commit_schedule.changed()
            self._cond.notify_all()

    def request_pass(self) -> None:
        with self._cond:
            self._pass_due = True
            self._cond.notify_all()

    def request_commit(self, delay: float = 0.0) -> None:
        """Ask for a commit cycle `delay` seconds from now. The threads asleep on the condition (the indexer,
        the committer) are woken only when the cycle moved sooner: a later one the committer finds when it
        wakes at the time it had, so a capture's request costs no wake-up of either."""
        with self._cond:
            if self.commit_schedule.changed(delay):
                self._cond.notify_all()

    # -- indexer ---------------------------------------------------------------------------------

    def _indexer_loop(self) -> None:
        try:
            log.info("capture path ready in %.2fs", self.capturer.warm())
        except Exception:  # a capture would then fail the same way and say why; the index still opens
            log.exception("the capture path could not be prepared")
        try:
            self.store = Store(self.settings.cache_dir)
            for notice in self.store.notices:
                log.warning("%s", notice)
        except Exception:
            log.exception("could not open the index at %s", self.settings.cache_dir)
            self._stop.set()
            return
        next_periodic = self.clock()
        while not self._stop.is_set():
            # Never call out (status, watcher stats, git) while holding the condition: the watcher's
            # flush thread takes it from inside its own lock.
            with self._cond:
                if not (self._hints or self._pass_due or self._rebuild_due or self._stop.is_set()):
                    timeout = next_periodic - self.clock()
                    if timeout <= 0:
                        self._pass_due = True
                    else:
                        self._cond.wait(min(timeout, 5.0))
                if self._stop.is_set():
                    break
                ready = bool(self._hints or self._pass_due)
                rebuild = self._rebuild_due
            if rebuild is not None:
                if self._rebuild_index(rebuild):
                    next_periodic = self.clock() + self._reconcile_every()
                continue
            if not ready:
                self._refresh_status_if_old()
                if self.allowance.pending():
                    self.request_pass()
                continue
            with self._cond:
                periodic = self._pass_due
                hints = set(self._hints)
                self._hints.clear()
                self._pass_due = False
            # file hints are checked one by one; a folder hint or "./" (overflow, vault moved) walks it all
            full = periodic or any(h.endswith("/") for h in hints)
            hints -= self.capturer.group.covered(hints)  # captured notes their own batch indexes, or indexed
            if not (full or hints):  # only captured notes: nothing for a pass to do
                self.dense.wake()  # they still need their vectors
                self._refresh_status_if_old()
                continue
            self._run_pass(None if full else hints)
            if periodic:
                next_periodic = self.clock() + self._reconcile_every()
                self.request_commit(0.0)

    def _run_pass(self, only: set[str] | None = None) -> None:
        assert self.store is not None
        allowed = self.allowance.pending() if only is None else None
        try:
            contract = self.contracts.get().contract
            report = reconcile(
                self.settings.vault,
                self.store,
                only=only,
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
                allow_mass_delete=bool(allowed),
                stop=self._stop.is_set,  # a shutdown ends a long pass at the next note, keeping what it read
            )
        except Exception as exc:
            damage = self.store.damage()
            if damage:  # a deleted cache or index folder fails deep inside Tantivy or sqlite
                log.error("reconcile failed on a damaged index: %s", damage)
                self.request_rebuild(damage)
            elif isinstance(exc, AgentmdError):
                log.error("reconcile failed: %s", exc)
            else:
                log.exception("reconcile failed")
            if allowed:
                self.allowance.answer(allowed, None, f"the pass failed: {exc}")
            return
        if report.interrupted:
            log.info(
                "the pass stopped early for the shutdown after %d notes (%.1f s); the next start finishes it",
                report.added + report.updated,
                report.seconds,
            )
        if allowed:
            log.warning("a pass allowed to remove many notes ran (agentmd reindex --allow-mass-delete)")
            self.committer.allow_mass_deletion()  # the next commit cycle commits the deletion the pass allowed
            self.allowance.answer(allowed, report.to_dict())
            self.request_commit(0.0)
        self.passes += 1
        self._last_report = report
        if report.refused:
            if self._refused != report.refused:
                log.error("reconcile refused: %s", report.refused)
            self._refused = report.refused
        elif only is None:  # only a full pass that goes through clears a refusal
            self._refused = None
        self.committer.hold(self._refused)  # commits wait while a refusal stands; status shows it red
        for err in report.errors:
            log.warning("could not index %s: %s", err["path"], err["error"])
        if report.changed:
            self.memory.after_work()
        self._refresh_status(first_pass_done=True)
        self.capturer.store = self.store
        settled, self._stale = self._stale, False
        if settled:
            settle_heap()
        self.dense.wake()
        self._sweep_phone()

    def _sweep_phone(self) -> None:
        """File phone clips whose operator-typed `instructions` the fixed grammar accepts; flag the rest."""
        try:
            actions = sweep_phone_notes(
                self.settings.vault,
                self.contracts.get().contract,
                self.capturer,
                note_origin=self.committer.note_origin,
            )
        except Exception:
            log.exception("the phone sweep failed; it runs again after the next pass")
            return
        acted = [a for a in actions if a.outcome in ("filed", "flagged")]
        for a in acted:
            log.info("phone clip %s %s: %s", a.path, a.outcome, a.detail)
        if acted:
            self.request_commit(self.commit_debounce)

    # -- committer -------------------------------------------------------------------------------

    def _committer_loop(self) -> None:
        while True:
            with self._cond:
                while not self._stop.is_set():
                    if self.commit_schedule.ready():
                        break
                    self._cond.wait(self.commit_schedule.wait_seconds())
                if self._stop.is_set():
                    break
                self.commit_schedule.take()
            try:
                if self._run_commit():
                    with self._cond:  # skipped (a lock, a user's commit in its editor): retry without a new event
                        self.commit_schedule.skipped()
            except Exception:  # the loop outlives any one cycle (a vanished vault, a broken repository)
                log.exception("the commit cycle failed; the next one runs as usual")
        try:
            self._run_commit(final=True)
        except Exception:
            log.exception("the last commit cycle failed")

    def _run_commit(self, final: bool = False) -> bool:
        """One commit cycle; True when it was skipped and should be retried."""
        self.committer.hold(self._refused)
        if self._refused:
            log.warning("commit cycle skipped: the last reconcile refused a mass deletion; nothing is committed")
            write_json(self.settings.state_dir / "commit-state.json", self.committer.state.to_dict())
            self._refresh_git_status()
            return False
        if not (self.settings.vault / ".git").exists():
            # not a repository: status reports git as degraded; there is nothing to commit into, and a
            # vault the owner keeps without git must not turn red as a commit stall
            self.commit_cycles += 1
            return False
        result = self.committer.commit_cycle()
        self.commit_cycles += 1
        self._last_cycle_skipped = bool(result.skipped)
        for w in result.warnings:
            log.warning("%s", w)
        if result.skipped or result.error:
            if result.skipped:
                log.warning("commit cycle skipped: %s", result.skipped)
            # what it would have committed still waits (a lock, a read-only object store, a full disk): try
            # again, backing off while the cause lasts, so it is committed once the cause is gone
            self._skips += 1
            self.request_commit(min(60.0, max(self.commit_debounce, 1.0) * 2 ** min(self._skips - 1, 6)))
        else:
            self._skips = 0
        if result.error:
            log.error("commit failed: %s", result.error)
        for c in result.commits:
            self.commits += 1
            log.info("committed %s (origin: %s, %d files)", c.sha[:10], c.origin, len(c.paths))
        if result.commits and self.jobs is not None and self._has_remote():
            self.jobs.sync_soon()
        write_json(self.settings.state_dir / "commit-state.json", self.committer.state.to_dict())
        self._refresh_git_status()
        return bool(result.skipped)

    # -- sync ----------------------------------------------------------------------------------

    def sync(self, remote: str = DEFAULT_REMOTE, *, clock: Callable[[], dt.datetime] | None = None) -> SyncResult:
        """One sync round with the vault's git remote, the committer held while it moves the work tree; the
        files it changed are reconciled at once (the watcher sees them too). `clock`: the jobs' clock, which
        dates the backoff after a round that could not reach the remote."""
        result = sync_vault(self.committer, self.settings.state_dir, remote=remote, clock=clock)
        if result.changed and self.store is not None:
            # what git brought is history already: a deletion in it passes the mass-deletion breaker, which
            # keeps guarding deletions git has not seen
            contract = self.contracts.get().contract
            reconcile(
                self.settings.vault,
                self.store,
                only=set(result.changed),
                link_convention=contract.link_convention,
                sync_patterns=contract.sync_tool_patterns,
                allow_mass_delete=True,
            )
            self.dense.wake()
        self._refresh_git_status()
        return result

    def _sync_temp(self, rel: str) -> bool:
        """A temp file or placeholder by the contract's own sync-tool patterns: no event for the watcher."""
        patterns = self.contracts.get().contract.sync_tool_patterns
        return bool(patterns) and is_sync_temp(rel.rstrip("/"), patterns)

    def _has_remote(self) -> bool:
        """Whether the vault's repository names a sync remote (its config file, read without running git)."""
        try:
            config = (self.settings.vault / ".git" / "config").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return f'[remote "{DEFAULT_REMOTE}"]' in config

    def _sync_json(self, data: dict[str, Any]) -> dict[str, Any]:
        remote = data.get("remote") or DEFAULT_REMOTE
        if not isinstance(remote, str):
            raise UsageError("`remote` must be the name of a git remote")
        try:
            return self.sync(remote).to_dict()
        except SyncError as exc:
            raise AgentmdError(str(exc)) from None

    def _page_routes(self) -> list[Any]:
        """The page at /ui (engine/web): status, review, search and undo for a person, through this daemon."""
        from agentmd.engine.web.actions import PageHost
        from agentmd.engine.web.routes import Page

        host = PageHost(
            settings=self.settings,
            status=self.status,
            store=lambda: self.store,
            contract=lambda: self.contracts.get().contract,
            search=self.search,
            revert=self._revert_json,
            writer=self.curation_writer,
            identity=self.committer.identity_env,
            request_commit=self.request_commit,
            token=self.access.current,
        )
        return Page(host).routes()

    def _revert_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """`agentmd undo`, `revert` and `restore` with --yes (engine/git/undo.py): written by this daemon's
        committer, the files it changed indexed at once."""
        from agentmd.engine.git.undo import Selection, apply_undo

        result = apply_undo(self.committer, Selection.from_dict(data), self.settings.state_dir, dt.datetime.now(dt.UTC))
        if result.commit and self.store is not None:
            convention = self.contracts.get().contract.link_convention
            paths = {c.path for c in result.plan.changes}
            reconcile(self.settings.vault, self.store, only=paths, link_convention=convention, allow_mass_delete=True)
            self.dense.wake()
        self._refresh_git_status()
        return result.to_dict()

    # -- the agents' door (MCP tools and the JSON routes call these) ----------------------------

    def search(self, request: SearchRequest, *, count_usage: bool = True, recall: bool = False) -> dict[str, Any]:
        """One search for an agent (`memory_search`). With `count_usage` the notes it returns each count a
        recall (engine/usage.py), written by a background thread so the answer never waits on the catalog;
        the recall hook's own search and previews pass False. With `recall` the answer also carries the
        recall hook's candidates (`recall`: walls applied, facts, one hop of links, summaries), so the
        hook's process needs one HTTP call and none of the engine's imports (engine/search/recall.py)."""
        if self.store is None:
            raise AgentmdError("the index is still opening; try again in a moment")
        contract = self.contracts.get().contract
        store = self.store
        try:
            response = search(store.index, contract, request, store.catalog, self.dense.arm, self.dense.unavailable())
        except BaseException as exc:
            # Tantivy panics where a damaged file is read (a stored document, a snippet, a count); a panic is not
            # an Exception, so it is turned into the damage it shows here, where every read of the search is below
            failure = exc if isinstance(exc, IndexDamaged) else store.index.damaged(exc) if is_panic(exc) else None
            if failure is None:
                raise
            damage = store.damage()  # a search error on sound files (checksums pass) is no reason to rebuild
            if damage is None:
                raise failure from None
            self.request_rebuild(damage)
            raise IndexDamaged(f"{failure}; the daemon is rebuilding it now: retry in a moment") from None
        if self._stale:
            response["note"] = ((response.get("note") or "") + "; the index is still being built").lstrip("; ")
        response["index_stale"] = self._stale
        if recall:
            from agentmd.engine.search.recall import gather_in_daemon

            gathered = gather_in_daemon(self.settings, self.store.index, contract, response, request.limit)
            if gathered is not None:
                response["recall"] = gathered
        if count_usage and response["results"]:
            from agentmd.engine.index import usage

            usage.record_later(self.settings.catalog_path, (r["note"] for r in response["results"]), "recall")
        return response

    def capture(self, request: CaptureRequest) -> dict[str, Any]:
        with self._probe_lock:
            is_probe = bool(self._probe_aliases.intersection(request.aliases))
        try:
            if is_probe:
                result = self.capturer.capture(
                    request, origin="self-probe", extra_fields={"probe": "self-probe"}, count=False
                )
            else:
                result = self.capturer.capture(request)
        except sqlite3.DatabaseError as exc:  # before the note was written: the twin check read a damaged catalog
            store = self.store
            damage = store.damage() if store is not None else None
            if damage is None:
                raise
            self.request_rebuild(damage)
            raise AgentmdError(
                f"{damage}; the daemon is rebuilding it from the vault: nothing was written, retry in a moment"
            ) from exc
        return result.to_dict()

    def _search_json(self, data: dict[str, Any]) -> dict[str, Any]:
        count_usage = bool(data.pop("count_usage", True))
        recall = bool(data.pop("recall", False))
        data.setdefault("mode", SEARCH_MODE)
        try:
            request = SearchRequest(**data)
        except TypeError as exc:
            raise UsageError(f"bad search request: {exc}") from None
        return self.search(request, count_usage=count_usage, recall=recall)

    def _capture_json(self, data: dict[str, Any]) -> dict[str, Any]:
        actor = data.pop("_actor", "agent")
        token = data.pop(OPERATOR_FIELD, None)
        request = CaptureRequest.from_mapping(data)
        if actor == "operator" or token is not None:
            if not is_operator(self.settings.state_dir, token):
                raise CaptureRefused(
                    "operator:token",
                    f"operator writes need the vault's operator token in the {OPERATOR_HEADER} header (the CLI's "
                    "`capture --operator` sends it); nothing was written",
                )
            return self.capturer.capture(request, actor="operator").to_dict()
        return self.capture(request)

    def _curate_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """A curation command's plan (engine/curate/host.py): applied here, so the daemon stays the one writer."""
        return serve_plan(self.settings, self.curation_writer(), data)

    def curation_writer(self) -> Writer:
        """The daemon's own committer and indexer, as curation steps (and the enrich job) apply through them."""

        def commit() -> tuple[list[str], str | None]:
            result = self.committer.commit_cycle()
            self.commit_cycles += 1
            self.commits += len(result.commits)
            return [c.sha for c in result.commits], result.error or result.skipped

        def index(paths: Any) -> None:
            with self._cond:
                self._hints |= set(paths)
                self._cond.notify_all()

        contract = lambda: self.contracts.get().contract  # noqa: E731
        return Writer(self.settings.vault, contract, self.committer.note_origin, commit, index)

    def _probe_json(self, data: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(data) - {"budget"})
        if unknown:
            raise UsageError(f"unknown field(s) for a probe: {', '.join(unknown)}")
        budget = data.get("budget", self.probe_budget)
        if (
            isinstance(budget, bool)
            or not isinstance(budget, int | float)
            or not math.isfinite(budget)
            or not 0.5 <= budget <= MAX_PROBE_BUDGET
        ):
            raise UsageError(f"`budget` must be a number of seconds from 0.5 to {MAX_PROBE_BUDGET:g}")
        return self.probe(float(budget)).to_dict()

    # -- self-probe ------------------------------------------------------------------------------

    def probe(self, budget: float | None = None, limit: float | None = None) -> ProbeResult:
        """Capture and find a synthetic note through the real MCP endpoint, within `limit` seconds at most
        (default: a few times the budget); record the result."""
        budget = self.probe_budget if budget is None else budget
        alias, body_nonce = new_nonces()
        with self._probe_lock:
            self._probe_aliases.add(alias)
        try:
            result = run_probe(self.port, alias, body_nonce, budget, self.access.current(), limit)
        finally:
            with self._probe_lock:
                self._probe_aliases.discard(alias)
        previous = load_last(self.settings.state_dir)
        if result.ok:
            old = (previous or {}).get("path") if (previous or {}).get("ok") else None
            if old and old != result.path:
                self._retire_probe_note(old)
            log.info("self-probe ok (round trip %.1f ms)", result.round_trip_ms or 0.0)
        else:
            log.error("self-probe failed: %s", result.error)
        write_json(self.settings.state_dir / "probe.json", result.to_dict())
        self.request_commit(0.0)
        self._refresh_status()
        return result

    def _retire_probe_note(self, rel: str) -> None:
        path = self.settings.vault / rel
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return
        if "probe: self-probe" not in text:  # never delete a note that is not a probe note
            log.warning("previous probe note %s no longer looks like a probe note; left in place", rel)
            return
        self.committer.note_origin(rel, "self-probe")
        path.unlink(missing_ok=True)
        self._on_change({rel})

    # -- status ----------------------------------------------------------------------------------

    def daemon_info(self) -> dict[str, Any]:
        return {
            "running": True,
            "pid": os.getpid(),
            "port": self.port,
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "passes": self.passes,
            "commits": self.commits,
            "commit_cycles": self.commit_cycles,
            "watcher": self._watcher_info(),
            "vault_problem": self.capturer.identity.problem(),
            "lease_problem": self.lock.problem(),
            "memory": {
                "resident_bytes": resident_bytes(),
                "trims": self.memory.trims,
                "given_back_bytes": self.memory.given_back,
            },
        }

    def _watcher_info(self) -> dict[str, Any]:
        if self.watcher is None:
            return {"running": False}
        info: dict[str, Any] = {**self.watcher.stats(), "unwatched_folders": self.watcher.unwatched_folders()}
        if self._watch_error is not None:
            info["error"] = self._watch_error
        return info

    def _refresh_status(self, first_pass_done: bool = False) -> None:
        if self.store is None or (self._stale and not first_pass_done):
            return
        began = self.clock()
        try:
            status = compute_status(
                self.settings,
                self.store,
                self.contracts.get(),
                daemon=self.daemon_info(),
                commit_state=self.committer.state.to_dict(),
                stale=False,
            )
        except AgentmdError as exc:
            log.warning("status could not be computed: %s", exc)
            return
        except Exception:
            log.exception("status could not be computed")
            return
        with self._status_lock:
            self._status = status
            self._status_at = self.clock()
            self._status_cost = self._status_at - began

    def _refresh_git_status(self) -> None:
        """After a commit cycle: the status's git section again, the rest as the last full status left it
        (`status.with_git`). A full status reads every note's review state; under many captures commit
        cycles come every few seconds, and the health pass recomputes it all every `health_interval` anyway.
        With no health pass running (health_interval 0) the full status is computed as before."""
        with self._status_lock:
            cached = self._status
        if not cached or self.health_interval <= 0:
            self._refresh_status()
            return
        try:
            status = with_git(
                cached,
                self.settings.vault,
                self.committer.state.to_dict(),
                state_dir=self.settings.state_dir,
                settings=self.settings,
            )
        except Exception:
            log.exception("the status's git section could not be computed")
            return
        with self._status_lock:
            if self._status is cached:  # a full status computed meanwhile is newer: keep it
                self._status = status

    def _refresh_status_if_old(self) -> None:
        if status_old(self.clock(), getattr(self, "_status_at", 0.0), getattr(self, "_status_cost", 0.0)):
            self._refresh_status()

    def health(self) -> dict[str, Any]:
        return {"ok": True, "index_stale": self._stale, "vault": str(self.settings.vault), "pid": os.getpid()}

    def status(self) -> dict[str, Any]:
        with self._status_lock:
            cached = dict(self._status)
        if not cached:  # the first pass has not finished: answer from what is known without the index
            cached = {
                "vault": str(self.settings.vault),
                "color": "yellow",
                "red": [],
                "yellow": ["index-building: the first pass has not finished"],
                "index": {"index_stale": True},
            }
        cached["daemon"] = self.daemon_info()
        cached.setdefault("index", {})["index_stale"] = self._stale
        cached["index"]["rebuild"] = dict(self._rebuild)
        cached = with_lease(with_live(cached, self._live), cached["daemon"].get("lease_problem"))
        cached = with_recall(cached, self.settings.state_dir)
        return with_dense(cached, self.dense.status(), switched_off=not self.settings.dense)
