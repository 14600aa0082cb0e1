"""The daemon's events and the status it reports: file hints and requests for a pass or a commit cycle (the
indexer and the committer wait on them), `daemon_info`, `/health` and `/status`.

`DaemonState` is a part of `Daemon` (engine/daemon/service.py), kept here so each module stays readable; it
uses the daemon's own fields, declared below for the type checker.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentmd.engine.daemon.embedding import DenseWorker
from agentmd.engine.daemon.health import index_damaged_line, index_rebuilding_line
from agentmd.engine.daemon.instance import InstanceLock
from agentmd.engine.daemon.status import compute_status, with_dense, with_git, with_lease, with_live, with_recall
from agentmd.engine.daemon.upkeep import Upkeep, status_due
from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.schedule import CommitSchedule
from agentmd.engine.memory import Keeper, resident_bytes
from agentmd.rules import ContractCache

if TYPE_CHECKING:
    from agentmd.engine.daemon.status_types import DaemonInfo, Status

log = logging.getLogger("agentmd.daemon")

STATUS_MAX_AGE = 10.0  # seconds: the age at which the indexer computes the full status again (see `status_old`)


def status_old(now: float, last_at: float, last_cost: float) -> bool:
    """Whether the indexer, between passes, computes the full status again: once it is STATUS_MAX_AGE old, and
    no sooner than the health pass's share allows (`status_due`): under many captures the full status (every
    note's review state, the notes captured since the last one read anew) takes a few hundred milliseconds of
    the interpreter, and computing it every ten seconds regardless took it past that share."""
    return now - last_at > STATUS_MAX_AGE and status_due(now, last_at, last_cost)


class DaemonState(Upkeep):
    port: int
    started_at: dt.datetime
    wall_clock: Callable[[], dt.datetime]
    contracts: ContractCache
    lock: InstanceLock
    memory: Keeper
    dense: DenseWorker
    commit_schedule: CommitSchedule
    passes: int
    commits: int
    commit_cycles: int
    _hints: set[str]
    _pass_due: bool
    _status: Status | None
    _status_lock: threading.Lock
    _git_marks: int
    opened_with: int
    store_opened: threading.Event  # set once the index is open, or could not be

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

    # -- status ----------------------------------------------------------------------------------

    def daemon_info(self) -> DaemonInfo:
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

    def _watcher_info(self) -> dict[str, object]:
        if self.watcher is None:
            return {"running": False}
        info: dict[str, object] = {**self.watcher.stats(), "unwatched_folders": self.watcher.unwatched_folders()}
        if self._watch_error is not None:
            info["error"] = self._watch_error
        return info

    def _refresh_status(self, first_pass_done: bool = False) -> None:
        if self.store is None or (self._stale and not first_pass_done):
            return
        began = self.clock()
        with self._status_lock:
            marks = self._git_marks
        try:
            status = compute_status(
                self.settings,
                self.store,
                self.contracts.get(),
                daemon=self.daemon_info(),
                commit_state=self.committer.state,
                stale=False,
                now=self.wall_clock(),
            )
        except AgentmdError as exc:
            log.warning("status could not be computed: %s", exc)
            return
        except Exception:
            log.exception("status could not be computed")
            return
        with self._status_lock:
            moved = self._git_marks != marks
        if moved:  # a commit cycle or a sync round ended while it was computed: its sections are read again
            status = self._with_git_now(status) or status
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
            self._git_marks += 1
            cached = self._status
        if not cached or self.health_interval <= 0:
            self._refresh_status()
            return
        status = self._with_git_now(cached)
        with self._status_lock:
            if status is not None and self._status is cached:  # a full status stored meanwhile read them after
                self._status = status  # this refresh began (see `_refresh_status`): keep it

    def _with_git_now(self, status: Status) -> Status | None:
        """`status` with its git, probe, jobs and sync sections read now, or None when they could not be."""
        try:
            return with_git(
                status,
                self.settings.vault,
                self.committer.state,
                state_dir=self.settings.state_dir,
                settings=self.settings,
            )
        except Exception:
            log.exception("the status's git section could not be computed")
            return None

    def _refresh_status_if_old(self) -> None:
        if status_old(self.clock(), getattr(self, "_status_at", 0.0), getattr(self, "_status_cost", 0.0)):
            self._refresh_status()

    def health(self) -> dict[str, object]:
        return {"ok": True, "index_stale": self._stale, "vault": str(self.settings.vault), "pid": os.getpid()}

    def _start_line(self) -> str:
        """Status's line while the first pass runs: an index being built, or one already built being checked."""
        if self.store is None:
            return "index-building: the index is being opened"
        if not self.opened_with:
            return "index-building: the first pass has not finished"
        return (
            f"index-checking: the start-up pass is comparing the vault with the index ({self.opened_with} notes); "
            "searches answer from the index meanwhile, and a note changed or deleted while the daemon was down "
            "shows as it was until the pass reaches it"
        )

    def _with_damage_now(self, status: Status) -> Status:
        """The index's damage as it is when status is asked (a few stats), not only as the last health pass
        saw it: red at once while the index is gone, waits for its rebuild or is being rebuilt, and the
        rebuild asked for now."""
        store = self.store
        if self._rebuild["running"]:
            line = index_rebuilding_line(self._rebuild.get("reason"))
        elif self._rebuild_due is not None:
            line = index_damaged_line(self._rebuild_due)
        elif store is not None and (damage := store.damage()):
            self.request_rebuild(damage)
            line = index_damaged_line(damage)
        else:
            return status
        red = status.get("red", [])
        if not any(r.startswith(("index-damaged:", "index-rebuilding:")) for r in red):
            status["red"] = [*red, line]
        status["color"] = "red"
        return status

    def status(self) -> Status:
        with self._status_lock:
            last = self._status
        cached: Status
        if last:
            cached = {**last}
        else:  # the first pass has not finished: answer from what is known without reading the index's notes
            cached = {
                "vault": str(self.settings.vault),
                "color": "yellow",
                "red": [],
                "yellow": [self._start_line()],
                "index": {"index_stale": True, "documents": self.opened_with if self.store is not None else None},
            }
        cached["daemon"] = self.daemon_info()
        index = cached.setdefault("index", {})
        index["index_stale"] = self._stale
        index["start_pass"] = "done" if last else "running"
        index["rebuild"] = {**self._rebuild}
        cached = with_lease(with_live(cached, self._live), cached["daemon"].get("lease_problem"))
        cached = self._with_damage_now(cached)
        cached = with_recall(cached, self.settings.state_dir)
        return with_dense(cached, self.dense.status(), switched_off=not self.settings.dense)
