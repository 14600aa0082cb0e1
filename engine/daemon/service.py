"""`agentmd serve`: the resident process that keeps one vault's index and git history current.

Threads, each with one job:
- the HTTP listener (started first, so `/health` and `/status` answer while a cold index builds);
- the watcher, which turns file events into debounced path hints (the speed);
- the indexer, the only writer of the index and catalog: a reconcile pass on every batch of hints, at
  start-up and whenever the `reconcile` job asks, every `reconcile_interval` seconds (the guarantee when
  events are lost). At start it opens the index, and searches answer from it from then on, while it starts
  the watcher and runs the start-up pass (status says `index-checking`, yellow, until that pass ends): a note
  changed or deleted while the daemon was down shows as it was until the pass reaches it, seconds at
  100,000 notes (engine/daemon/loops.py);
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

`Daemon` is made of parts kept in their own modules: its events and status (engine/daemon/state.py), its door
for the agents, the routes and the page (engine/daemon/door.py), the indexer and committer threads
(engine/daemon/loops.py) and its upkeep (engine/daemon/upkeep.py); this module holds its fields, starting and
stopping.
"""

from __future__ import annotations

import datetime as dt
import logging
import logging.handlers
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentmd.engine.daemon.allowance import MassDeleteAllowance
from agentmd.engine.daemon.embedding import DenseWorker
from agentmd.engine.daemon.health import MIN_FREE_BYTES, HealthPass, HealthReport, Rebuild
from agentmd.engine.daemon.instance import InstanceLock, StateUnwritable
from agentmd.engine.daemon.jobs_host import DaemonJobs
from agentmd.engine.daemon.loops import Loops
from agentmd.engine.daemon.mcp_server import mount_mcp
from agentmd.engine.daemon.server import DEFAULT_PORT, AccessToken, HttpServer, build_app, json_routes
from agentmd.engine.daemon.supervisor import SUPERVISOR_ENV
from agentmd.engine.daemon.upkeep import HEALTH_INTERVAL
from agentmd.engine.daemon.watcher import VaultWatcher
from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.committer import committer_for
from agentmd.engine.git.schedule import COMMIT_MAX_WAIT, CommitSchedule
from agentmd.engine.index.reconcile import ReconcileReport
from agentmd.engine.index.store import Store, no_room
from agentmd.engine.memory import Keeper
from agentmd.engine.settings import COMMIT_DEBOUNCE, COMMIT_SETTLE, RECONCILE_INTERVAL, Settings
from agentmd.engine.write.capture import Capturer
from agentmd.engine.write.probe import DEFAULT_BUDGET
from agentmd.rules import ContractCache

if TYPE_CHECKING:
    from agentmd.engine.daemon.status_types import Status

log = logging.getLogger("agentmd.daemon")

PROBE_INTERVAL = 24 * 3600.0


class Daemon(Loops):
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
        wall_clock: Callable[[], dt.datetime] | None = None,
        health_interval: float = HEALTH_INTERVAL,
        min_free_bytes: int = MIN_FREE_BYTES,
        listener: socket.socket | None = None,
        before_first_pass: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        # called on the indexer's thread once the index is open, before the start-up pass (tests hold it there)
        self.before_first_pass = before_first_pass
        self.opened_with = 0  # notes the catalog held when the index opened (0: a first build)
        # a socket already listening (`agentmd serve`'s supervisor keeps one across restarts), else `port`
        self.listener = listener
        self.port = listener.getsockname()[1] if listener is not None else port
        self.reconcile_interval = reconcile_interval
        self.commit_debounce = commit_debounce
        self.clock = clock
        # the time the status reads (queue ages, the queue baseline a first run records); the real one unless given
        self.wall_clock = wall_clock or (lambda: dt.datetime.now(dt.UTC))
        self.contracts = ContractCache(settings.vault, settings.contract_path)
        self.lock = InstanceLock(settings.state_dir, settings.vault)
        self.access = AccessToken(settings.state_dir)
        self.committer = committer_for(settings, self.contracts, settle=COMMIT_SETTLE)  # later cycles follow
        self.commit_schedule = CommitSchedule(
            commit_debounce, commit_max_wait, retry=min(30.0, max(1.0, 5 * commit_debounce)), clock=clock
        )
        self.allowance = MassDeleteAllowance(settings.state_dir)
        self.watcher = VaultWatcher(settings.vault, self._on_change, ignore=self._sync_temp) if watch else None
        self.store: Store | None = None
        self.store_opened = threading.Event()  # set once the index is open (or could not be): searches wait on it
        self.fatal = None  # why the daemon stopped on its own (the index could not be opened)
        self.memory = Keeper()  # gives the heap back after a burst of work (engine/memory.py)
        self.dense = DenseWorker(settings, memory=self.memory)
        self.capturer = Capturer(
            settings.vault,
            settings.state_dir,
            self.contracts,
            None,  # set once the first pass has built the index
            before_write=self.committer.note_origin,
            withdraw=lambda path: self.committer.withdraw_origin(path),
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
        self.first_pass_ran = threading.Event()  # set once the start-up pass has run, gone through or not
        self._stale = True  # until the first pass completes
        self._refused: str | None = None
        self._last_report: ReconcileReport | None = None
        self._status: Status | None = None
        self._status_lock = threading.Lock()
        self._git_marks = 0  # git sections refreshed so far: a full status computed across one reads them again
        self._threads: list[threading.Thread] = []
        self.passes = 0
        self.commits = 0
        self.commit_cycles = 0
        self._skips = 0  # commit cycles skipped in a row (each is retried, backing off)
        self._state_write_problem: str | None = None  # why the commit state could not be recorded, once logged
        self.health_interval = health_interval
        self.health_pass = HealthPass(settings.vault, settings.state_dir, settings.cache_dir, min_free_bytes)
        self._live: HealthReport | None = None
        self._rebuild_due: str | None = None
        self._rebuild: Rebuild = {"running": False, "count": 0}
        self._watch_error: str | None = None
        self._watch_tried = 0.0
        self._last_cycle_skipped = False

    # -- lifecycle -------------------------------------------------------------------------------

    def _instance_info(self) -> dict[str, object]:
        """What `daemon.json` says of this daemon: pid, port, host, and the supervising `agentmd serve`."""
        info: dict[str, object] = {
            "pid": os.getpid(),
            "port": self.port,
            "host": socket.gethostname(),
            "started": self.started_at.isoformat(timespec="seconds"),
        }
        if os.environ.get(SUPERVISOR_ENV) == str(os.getppid()):  # run by `agentmd serve`'s supervising parent
            info["supervisor"] = os.getppid()
        return info

    def start(self) -> None:
        try:
            self.access.ensure()  # before daemon.json names the port: a client that finds the port finds the token
            self.lock.acquire(self._instance_info())
        except OSError as exc:
            if not no_room(exc):
                raise
            raise StateUnwritable(
                f"the state folder {self.settings.state_dir} cannot be written ({exc.strerror or exc}): free some "
                "space on its disk (or make it writable), or point $XDG_STATE_HOME at a folder on another disk, "
                "and start again; the vault's notes are untouched"
            ) from None
        try:
            self._setup_log_file()
            log.info("starting for %s (index %s)", self.settings.vault, self.settings.cache_dir)
            mcp_routes, lifespan = mount_mcp(self)
            self.jobs = DaemonJobs(self)  # owns the periodic pass (`reconcile_interval`), the probe and the repack
            routes = json_routes(
                search=self._search_json,
                injected=self._injected_json,
                recall=self._recall_json,
                guard=self._guard_json,
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
                page_key=self.page_key,
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
            # the watcher starts on the indexer's thread, once the index is open and before the start-up pass
            # (engine/daemon/loops.py): its folder walk grows with the vault, and searches need not wait for it
            self.dense.start(after=self.first_pass_ran)
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
        try:  # a start meanwhile waits for this one to finish stopping instead of refusing
            self.lock.update({**self._instance_info(), "stopping": True})
        except OSError as exc:
            log.warning("could not mark the daemon as stopping: %s", exc)
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
        """Foreground: start, wait for SIGINT/SIGTERM, stop cleanly. A daemon that stopped on its own (its
        index could not be opened) raises AgentmdError with the reason, so `serve` exits failing and says why."""
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
        if self.fatal is not None:
            raise AgentmdError(f"agentmd serve stopped: {self.fatal}")
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
