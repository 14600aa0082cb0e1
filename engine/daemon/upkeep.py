"""The daemon's upkeep while it serves: the health pass, the rebuild of a damaged or deleted index, and
watching that degrades instead of failing when inotify's limits are used up.

`Upkeep` is a part of `Daemon` (engine/daemon/service.py), kept here so each module stays readable; it
uses the daemon's own fields, declared below for the type checker.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable

from agentmd.engine.daemon.health import HealthPass, HealthReport, Rebuild
from agentmd.engine.daemon.watch_observer import inotify_problem
from agentmd.engine.daemon.watcher import VaultWatcher
from agentmd.engine.git.committer import Committer
from agentmd.engine.index.store import Store, catalog_problem, set_aside_catalog, set_aside_index
from agentmd.engine.settings import Settings
from agentmd.engine.write.capture import Capturer

log = logging.getLogger("agentmd.daemon")

HEALTH_INTERVAL = 5.0
FALLBACK_RECONCILE = 30.0  # the periodic pass while part of the vault is not watched
WATCH_RETRY = 60.0


# The full status may take at most this share of the daemon's time when the health pass recomputes it. It is
# Python work that holds the interpreter's lock (at 100,000 notes about 1.8 s, most of it the review queue), and
# searches answered meanwhile slow down several times over: at a tenth of the time, the slowest hundredth of
# a 100,000-note benchmark's name searches took 180 ms instead of 60 (bench/scale_bench.py). The live checks are
# not part of it: they run at every health pass.
STATUS_SHARE = 0.02


def status_due(now: float, last_at: float | None, last_cost: float) -> bool:
    """Whether the health pass computes the full status again: always when there is none yet, otherwise once
    the time since the last one is at least its cost over STATUS_SHARE (a status that took 0.1 s may be
    computed again after 5 s, one that took 2 s after 100 s)."""
    return last_at is None or now - last_at >= last_cost / STATUS_SHARE


class Upkeep:
    settings: Settings
    store: Store | None
    capturer: Capturer
    committer: Committer
    watcher: VaultWatcher | None
    health_pass: HealthPass
    health_interval: float
    reconcile_interval: float
    clock: Callable[[], float]
    _cond: threading.Condition
    _stop: threading.Event
    _stale: bool
    _refused: str | None
    _live: HealthReport | None
    _rebuild_due: str | None
    _rebuild: Rebuild
    _watch_error: str | None
    _watch_tried: float
    _last_cycle_skipped: bool
    _threads: list[threading.Thread]

    def _run_pass(self, only: set[str] | None = None) -> bool:
        raise NotImplementedError

    def _refresh_status(self, first_pass_done: bool = False) -> None:
        raise NotImplementedError

    def _reconcile_every(self) -> float:
        """The periodic pass's interval: shorter while inotify leaves part of the vault unwatched."""
        degraded = self._watch_error is not None
        if not degraded and self.watcher is not None:
            degraded = int(self.watcher.stats().get("unwatched_dirs", 0) or 0) > 0
        return min(self.reconcile_interval, FALLBACK_RECONCILE) if degraded else self.reconcile_interval

    def request_rebuild(self, reason: str) -> None:
        """The index is damaged or gone: have the indexer set it aside and rebuild it from the vault."""
        with self._cond:
            if self._rebuild_due is None and not self._rebuild["running"]:
                self._rebuild_due = reason
                self._cond.notify_all()

    def _rebuild_index(self, reason: str) -> bool:
        """On the indexer thread: swap in a fresh index and catalog, then fill them with a full pass. Captures
        wait on the store lock during the swap; searches answer from the new index as it fills."""
        log.error("index damaged (%s): setting it aside and rebuilding it from the vault", reason)
        self._rebuild["running"] = True
        self._rebuild["reason"] = reason
        self._rebuild["started_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        old = self.store
        started = time.monotonic()
        try:
            with self.capturer.swap.swapping():  # captures in flight finish on the old store, new ones wait
                if old is not None:
                    with old.lock:
                        old.retire()  # searches and the health pass may still be reading its catalog
                moved = set_aside_index(self.settings.cache_dir)
                if catalog_problem(self.settings.catalog_path) or (old is not None and old.catalog.damaged):
                    kept = set_aside_catalog(self.settings.cache_dir)
                    if kept is not None:  # (None: the catalog was gone with its folder, nothing to keep)
                        log.warning("the damaged catalog was kept as %s", kept)
                store = Store(self.settings.cache_dir)
                self.capturer.store = store
        except Exception as exc:
            log.error("the index could not be rebuilt yet (%s); the health pass asks again", exc)
            with self._cond:
                self._rebuild_due = None
            self._rebuild["running"] = False
            return False
        if moved is not None:
            log.warning("the damaged index was kept as %s", moved)
        with self._cond:
            self._rebuild_due = None
        self._stale = True
        self.store = store
        self.capturer.store = store
        self._run_pass(None)
        self._rebuild["running"] = False
        self._rebuild["count"] += 1
        self._rebuild["seconds"] = round(time.monotonic() - started, 2)
        self._rebuild["finished_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        log.info("index rebuilt after damage in %.1f s", self._rebuild["seconds"])
        self.health_check()
        return True

    def _start_watcher(self) -> None:
        """Start watching; when inotify refuses (its limits used up), serve anyway and reconcile more often."""
        if self.watcher is None:
            return
        self._watch_tried = self.clock()
        try:
            self.watcher.start()
        except OSError as exc:
            self._watch_error = inotify_problem(exc)
            log.error(
                "the vault is not watched: %s; reconciling every %.0f s instead", self._watch_error, FALLBACK_RECONCILE
            )
            return
        if self._watch_error is not None:
            log.info("watching the vault again")
        self._watch_error = None

    def _health_loop(self) -> None:
        while not self._stop.wait(self.health_interval):
            try:
                self.health_check()
            except Exception:
                log.exception("the health pass failed; it runs again in %.0f s", self.health_interval)

    def health_check(self) -> HealthReport:
        """One health pass: the live checks (engine/daemon/health.py), a rebuild asked for when the index
        is damaged or gone, and a fresh status."""
        if self._watch_error is not None and self.clock() - self._watch_tried >= WATCH_RETRY:
            self._start_watcher()
        store = self.store
        damage = None
        if store is not None and not self._rebuild["running"]:
            damage = store.damage()
            if damage:
                self.request_rebuild(damage)
        watcher: dict[str, object] | None = None
        if self.watcher is not None:
            watcher = {**self.watcher.stats(), "fallback_interval_s": FALLBACK_RECONCILE}
        live = self.health_pass.run(
            index_damage=damage,
            rebuild=self._rebuild,
            watcher=watcher,
            watch_error=self._watch_error,
            refused=self._refused,
            commit_state=self.committer.state,
            last_cycle_skipped=self._last_cycle_skipped,
            dead_threads=tuple(t.name for t in self._threads if not t.is_alive()) if not self._stop.is_set() else (),
        )
        self._live = live
        # the live checks reach every status answer at once (`status()` merges them); the full status, which
        # reads every note's review state (about 1.8 s of CPU at 100,000 notes), is computed again only as
        # often as keeps it to a small share of the daemon's time
        if status_due(self.clock(), getattr(self, "_status_at", None), getattr(self, "_status_cost", 0.0)):
            self._refresh_status()
        return live
