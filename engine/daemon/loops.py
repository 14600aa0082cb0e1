"""The daemon's two working threads: the indexer (a reconcile pass on every batch of hints, at start-up, when
the periodic pass is due, and the rebuild of a damaged index) and the committer (a commit cycle when the
commit schedule says one is due, retried with a back-off while it is skipped).

`Loops` is a part of `Daemon` (engine/daemon/service.py), kept here so each module stays readable; it uses the
daemon's own fields, declared below for the type checker.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
import threading
from collections.abc import Callable

from agentmd.engine.daemon.allowance import MassDeleteAllowance
from agentmd.engine.daemon.door import Door
from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import write_json
from agentmd.engine.git.health import AWAITS_FIRST_SYNC, COMMIT_STATE
from agentmd.engine.index.reconcile import ReconcileReport, reconcile
from agentmd.engine.index.store import CacheUnwritable, Store
from agentmd.engine.write.phone import sweep_phone_notes
from agentmd.engine.write.tempfiles import sweep_temp_files

log = logging.getLogger("agentmd.daemon")
FAILED_PASS_RETRY = 15.0  # seconds before the whole vault is read again after a pass that failed


def settle_heap() -> None:
    """Once the index is open and built (start-up, a rebuild): collect, then set every object alive now aside
    from the cycle collector (`gc.freeze`). They are the daemon's long-lived state (modules, the catalog's
    stat keys, the index's memos: some hundred thousand objects), and a full collection walked all of them,
    every ten seconds or so under many captures, holding every thread for 100-200 ms: the slowest captures'
    extra wait. Later collections walk only what was made since."""
    gc.collect()
    gc.freeze()


class Loops(Door):
    allowance: MassDeleteAllowance
    commit_debounce: float
    before_first_pass: Callable[[], None] | None
    first_pass_ran: threading.Event
    _last_report: ReconcileReport | None
    _skips: int
    _state_write_problem: str | None
    fatal: str | None  # why the daemon stopped on its own (engine/daemon/service.py's `run_forever` says it)

    # -- indexer ---------------------------------------------------------------------------------

    def _indexer_loop(self) -> None:
        # The index first: searches and status answer from it as soon as it is open, while the watcher starts
        # and the start-up pass (a stat of every note, compared with the catalog) runs below. Nothing else that
        # grows with the vault comes before it: the watcher's walk of the folders follows it (still before the
        # pass, so no edit falls between the two), the leftover temp files are swept after the pass, and the
        # vectors load on the dense arm's own thread once the pass has run.
        began = self.clock()
        try:
            store = Store(self.settings.cache_dir)
            for notice in store.notices:
                log.warning("%s", notice)
        except CacheUnwritable as exc:  # a full or read-only disk: said in one line, and the daemon exits failing
            log.error("%s", exc)
            self.fatal = str(exc)
            self._stop.set()
            self.store_opened.set()
            return
        except Exception as exc:
            log.exception("could not open the index at %s", self.settings.cache_dir)
            self.fatal = f"could not open the index at {self.settings.cache_dir} ({type(exc).__name__}: {exc})"
            self._stop.set()
            self.store_opened.set()
            return
        try:
            self.opened_with = store.index.doc_count()
        except Exception:  # damaged since it was opened: the first pass finds it and asks for the rebuild
            self.opened_with = 0
        self.store = store
        self.store_opened.set()
        log.info("index open in %.2fs (%d notes); searches answer from it now", self.clock() - began, self.opened_with)
        try:
            self._start_watcher()  # inotify refusing is handled there; anything else must not end this thread
        except Exception as exc:
            log.exception("the watcher could not start")
            self._watch_error = f"the watcher could not start ({type(exc).__name__}: {exc})"
        try:
            log.info("capture path ready in %.2fs", self.capturer.warm())
        except Exception:  # a capture would then fail the same way and say why; the index still opens
            log.exception("the capture path could not be prepared")
        if self.before_first_pass is not None:
            self.before_first_pass()
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
                self.first_pass_ran.set()
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
            if not self._run_pass(None if full else hints):  # a full disk, a lock: whole pass again soon
                next_periodic = min(next_periodic, self.clock() + FAILED_PASS_RETRY)
            self.first_pass_ran.set()  # the dense arm loads from now on (engine/daemon/embedding.py)
            if periodic:
                next_periodic = self.clock() + self._reconcile_every()
                self.request_commit(0.0)

    def _run_pass(self, only: set[str] | None = None) -> bool:
        """One reconcile pass (over `only`, else the whole vault); False when it failed."""
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
            if isinstance(exc, sqlite3.DatabaseError):
                self.store.catalog.noted(exc)  # a corrupt catalog is damage, as a deleted one is
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
            return False
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
            if self._refused and self.jobs is not None and self._has_remote():
                self.jobs.sync_soon(0.0)  # the rounds it held sync now
            self._refused = None
        elif self._refused:  # a few paths went through (the notes coming back?): a full pass now says if it ends
            self.request_pass()
        self.committer.hold(self._refused)  # commits wait while a refusal stands; status shows it red
        for err in report.errors:
            log.warning("could not index %s: %s", err["path"], err["error"])
        if report.changed:
            self.memory.after_work()
        self._refresh_status(first_pass_done=True)
        self.capturer.store = self.store
        settled, self._stale = self._stale, False
        if settled:
            self._sweep_capture_temps()
            settle_heap()
        self.dense.wake()
        self._sweep_phone()
        return True

    def _sweep_capture_temps(self) -> None:
        """Remove the capture temp files a writer that is gone left before this start (a walk of the vault's
        folders, so after the start-up pass rather than before it: the files are hidden and never indexed);
        captures served since keep theirs."""
        try:
            removed = sweep_temp_files(self.settings.vault, older_than=self.started_at.timestamp())
        except OSError as exc:
            log.warning("the capture temp files could not be swept: %s", exc)
            return
        if removed:
            log.info("removed %d capture temp file(s) left by an interrupted write", removed)

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
                waited = self.commit_schedule.take()
            try:
                if self._run_commit(waited=waited):
                    with self._cond:  # skipped (a lock, a user's commit in its editor): retry without a new event
                        self.commit_schedule.skipped()
            except Exception:  # the loop outlives any one cycle (a vanished vault, a broken repository)
                log.exception("the commit cycle failed; the next one runs as usual")
        try:
            self._run_commit(final=True)
        except Exception:
            log.exception("the last commit cycle failed")

    def _run_commit(self, final: bool = False, waited: float = 0.0) -> bool:
        """One commit cycle (`waited`: seconds since the first change it takes was seen); True when it was
        skipped and should be retried."""
        self.committer.hold(self._refused)
        if self._refused:
            log.warning("commit cycle skipped: the last reconcile refused a mass deletion; nothing is committed")
            self._save_commit_state()
            self._refresh_git_status()
            return False
        if not (self.settings.vault / ".git").exists():
            # not a repository: status reports git as degraded; there is nothing to commit into, and a
            # vault the owner keeps without git must not turn red as a commit stall
            self.commit_cycles += 1
            return False
        result = self.committer.commit_cycle(
            final=final, waited=waited
        )  # the last one at a stop leaves no file waiting
        self.commit_cycles += 1
        self._last_cycle_skipped = bool(result.skipped)
        for w in result.warnings:
            log.warning("%s", w)
        if result.deferred:  # still being written (engine/git/settle.py): a cycle once they may have settled
            log.debug("left %d file(s) still being written for a later cycle", len(result.deferred))
            self.request_commit(result.retry_in or 0.0)
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
        elif result.skipped == AWAITS_FIRST_SYNC and self.jobs is not None:  # a clone with no commit: sync now
            self.jobs.sync_soon(0.0)
        self._save_commit_state()
        self._refresh_git_status()
        return bool(result.skipped)

    def _save_commit_state(self) -> None:
        """Record the cycles' accounting for `status`. A state disk that cannot take it (full, read-only) is
        logged once per cause; the commits go on, and status reports the disk from its own check."""
        try:
            write_json(self.settings.state_dir / COMMIT_STATE, self.committer.state.to_dict())
        except OSError as exc:
            why = exc.strerror or str(exc)
            if why != self._state_write_problem:
                log.warning(
                    "could not record the commit cycles' state in %s (%s); commits go on", self.settings.state_dir, why
                )
            self._state_write_problem = why
        else:
            self._state_write_problem = None
