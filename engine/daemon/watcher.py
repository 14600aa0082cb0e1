"""File-system watcher: turns inotify events under a vault into debounced sets of vault-relative path hints.

This module and `watch_observer` are the only ones that import watchdog; every dependence on watchdog's
internals is in `watch_observer`. What the consumer gets, via `on_change(paths)`:

- vault-relative POSIX paths of files that were created, written, deleted or renamed (a rename gives both
  the old and the new path; an atomic save ``.tmp`` -> ``note.md`` gives ``note.md`` only);
- ``"dir/"`` (trailing slash) when a directory was created, deleted or renamed: rescan that subtree;
- ``VAULT_HINT`` (``"./"``) when the whole vault must be rescanned: the kernel queue overflowed (watchdog
  drops the pending events and rebuilds its watches) or the vault folder itself was deleted or moved.

Hints are hints, not a journal. Events can be lost (queue overflow, directories beyond the inotify watch
limit, file systems such as FUSE or network mounts that emit nothing), so the daemon's periodic reconcile
pass remains the guarantee; the watcher only makes it fast.

Paths for which `is_ignored` is true (dot directories such as ``.git/`` or ``.obsidian/``, dotfiles, editor
swap, backup and temporary files) never reach `on_change`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from agentmd.engine.daemon.watch_observer import (
    ACCEPTED_EVENTS,
    EVENT_FILTER,
    MOVED_EVENTS,
    OVERFLOW_LOGGER,
    EventHandler,
    OverflowHook,
    count_dirs,
    observer_watches,
    read_watch_limit,
    unwatched_folders,
    user_watches_in_use,
)
from agentmd.engine.daemon.watch_paths import is_ignored

log = logging.getLogger("agentmd.watcher")

VAULT_HINT = "./"
"""Hint meaning "rescan the whole vault" (joined to the vault path it names the vault itself)."""

MAX_LATENCY = 1.0
"""Default upper bound, in seconds, between the first pending event and its flush."""

_JOIN_TIMEOUT = 10.0


class VaultWatcher:
    """Watches `vault` recursively and calls `on_change(paths)` with debounced batches of path hints.

    `on_change` runs on the watcher's own flush thread, one batch at a time. A batch is flushed once no
    event arrived for `debounce` seconds, and at the latest `max_latency` seconds after its first event, so
    a constant stream of writes cannot starve it. Exceptions from the event path or from `on_change` are
    logged to ``agentmd.watcher``, counted in ``handler_errors`` and otherwise ignored; a batch whose
    `on_change` raised is not retried (the periodic reconcile picks it up). `clock` is used for the debounce
    arithmetic only; the flush thread waits in real seconds.

    `watch_limit` overrides ``fs.inotify.max_user_watches`` (read from /proc) for the unwatched estimate.
    """

    def __init__(
        self,
        vault: Path,
        on_change: Callable[[set[str]], None],
        *,
        debounce: float = 0.15,
        max_latency: float = MAX_LATENCY,
        clock: Callable[[], float] = time.monotonic,
        watch_limit: int | None = None,
        ignore: Callable[[str], bool] | None = None,
    ) -> None:
        """`ignore(rel)`: paths to drop besides `is_ignored`'s (the contract's own sync-tool temp files)."""
        if debounce < 0:
            raise ValueError("debounce must be >= 0")
        if max_latency <= 0:
            raise ValueError("max_latency must be > 0")
        self.vault = Path(vault)
        self.debounce = debounce
        self.max_latency = max_latency
        self._on_change = on_change
        self._clock = clock
        self._limit_override = watch_limit
        self._ignore = ignore

        self._lifecycle = threading.Lock()  # serialises start() and stop()
        self._cond = threading.Condition(threading.Lock())  # guards everything below
        self._root = os.path.realpath(self.vault)
        self._prefix = self._root.rstrip(os.sep) + os.sep
        self._pending: set[str] = set()
        self._first_at = 0.0
        self._last_at = 0.0
        self._dirs_dirty = False
        self._observer: BaseObserver | None = None
        self._handler: EventHandler | None = None
        self._tops: dict[str, ObservedWatch] = {}  # top-level folder name -> its recursive watch
        self._unwatched_tops: list[str] = []  # top-level folders inotify refused to watch
        self._flusher: threading.Thread | None = None
        self._flusher_stop: threading.Event | None = None
        self._hook: OverflowHook | None = None
        self._root_id: tuple[int, int] = (0, 0)
        self._root_lost = False

        self._events = 0
        self._ignored = 0
        self._handler_errors = 0
        self._flushes = 0
        self._overflows = 0
        self._watched_dirs = 0
        self._note_dirs = 0
        self._watch_limit = 0
        self._watches_in_use = -1
        self._watches_held = -1
        self._unwatched = 0

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching. A no-op while running; allowed again after `stop()`.

        When a previous start is no longer running (vault folder removed, observer thread dead), its
        remains are stopped (pending hints flushed) and watching starts afresh. Raises OSError when the vault
        is not a directory or inotify refuses the root watch or an instance.
        """
        with self._lifecycle:
            if self._observer is not None:
                if self._is_running():
                    return
                self._stop_locked()
            root = os.path.realpath(self.vault)
            if not os.path.isdir(root):
                raise NotADirectoryError(f"vault folder not found: {self.vault}")
            st = os.stat(root)
            in_use = user_watches_in_use()  # before our own watches exist
            limit = self._limit_override if self._limit_override is not None else read_watch_limit()
            with self._cond:
                self._root = root
                self._prefix = root.rstrip(os.sep) + os.sep
                self._watch_limit = max(0, limit)
                self._watches_in_use = -1 if in_use is None else in_use
                self._unwatched = 0
                self._root_id = (st.st_dev, st.st_ino)
                self._root_lost = False

            hook = OverflowHook(root, self._on_overflow)
            logging.getLogger(OVERFLOW_LOGGER).addHandler(hook)
            observer: BaseObserver | None = None
            try:
                observer = Observer()
                # The root alone, then each top-level folder recursively: dot folders at the top (.git,
                # .obsidian, .trash) are never watched, so git's own churn never reaches inotify or us.
                # Looked up on every event (not bound once), so the current methods always run.
                handler = EventHandler(
                    lambda event: self._on_event(event),
                    lambda event: self._record_error("watch event %r could not be handled", event),
                )
                self._handler = handler
                self._tops = {}
                self._unwatched_tops = []
                observer.schedule(handler, root, recursive=False, event_filter=EVENT_FILTER)
                # Started before the folders are scheduled, so a folder beyond the inotify watch limit fails
                # alone (its emitter starts, and fails, inside `schedule`) instead of failing the whole start.
                observer.start()
                with os.scandir(root) as entries:
                    for entry in entries:
                        if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                            self._watch_top(observer, entry.name)
            except BaseException:
                logging.getLogger(OVERFLOW_LOGGER).removeHandler(hook)
                if observer is not None:
                    with contextlib.suppress(Exception):
                        observer.stop()
                raise
            stop_flag = threading.Event()
            flusher = threading.Thread(
                target=self._flush_loop, args=(stop_flag,), name="agentmd-watcher-flush", daemon=True
            )
            self._observer, self._flusher, self._flusher_stop, self._hook = observer, flusher, stop_flag, hook
            flusher.start()
            self._update_dirs(observer)
            log.info("watching %s (%d folders)", root, self._watched_dirs)

    def stop(self) -> None:
        """Stop the observer, flush what is pending to `on_change`, and join both threads. Idempotent."""
        with self._lifecycle:
            self._stop_locked()

    def _stop_locked(self) -> None:
        """The body of `stop()`; the caller holds `_lifecycle`."""
        observer, self._observer = self._observer, None
        flusher, self._flusher = self._flusher, None
        stop_flag, self._flusher_stop = self._flusher_stop, None
        hook, self._hook = self._hook, None
        if hook is not None:
            logging.getLogger(OVERFLOW_LOGGER).removeHandler(hook)
        if observer is not None:
            try:
                observer.stop()
                observer.join(_JOIN_TIMEOUT)
            except Exception:
                log.exception("stopping the file-system observer failed")
        if stop_flag is not None:
            with self._cond:
                stop_flag.set()
                self._cond.notify_all()
        if flusher is not None and flusher is not threading.current_thread():
            flusher.join(_JOIN_TIMEOUT)
            if flusher.is_alive():
                log.warning("watcher flush thread still busy in on_change after %.0f s", _JOIN_TIMEOUT)

    def unwatched_folders(self) -> list[str]:
        """Folders without an inotify watch (the watch limit), as the kernel reports this watcher's watches,
        or the top-level folders it refused when those cannot be read: their changes wait for a pass."""
        with self._cond:
            refused = sorted(self._unwatched_tops)
            busy = self._unwatched > 0
        measured = unwatched_folders(self._root, self._observer) if busy and self._observer is not None else None
        return refused if measured is None else measured

    def stats(self) -> dict[str, int | bool]:
        """Counters and watch accounting; see the module docstring and `_update_dirs` for the meanings.

        events: accepted events; ignored: events whose every path was ignored or outside the vault;
        handler_errors; flushes (`on_change` calls); overflows (kernel queue overflows seen); watched_dirs:
        directories a recursive watch needs (dot directories included, as watchdog watches them too);
        note_dirs: the non-dot ones; watch_limit (0 = unknown); watches_in_use: this user's watches held
        before start (-1 = unknown); watches_held: watches this watcher really holds (-1 = unknown);
        unwatched_dirs; pending; running.
        """
        with self._cond:
            out: dict[str, int | bool] = {
                "events": self._events,
                "ignored": self._ignored,
                "handler_errors": self._handler_errors,
                "flushes": self._flushes,
                "overflows": self._overflows,
                "watched_dirs": self._watched_dirs,
                "note_dirs": self._note_dirs,
                "watch_limit": self._watch_limit,
                "watches_in_use": self._watches_in_use,
                "watches_held": self._watches_held,
                "unwatched_dirs": self._unwatched,
                "pending": len(self._pending),
            }
        out["running"] = self._is_running()
        return out

    def _is_running(self) -> bool:
        observer, flusher = self._observer, self._flusher
        if observer is None or flusher is None or not observer.is_alive() or not flusher.is_alive():
            return False
        try:
            emitters = list(observer.emitters)
        except RuntimeError:  # the set changed while we copied it
            return True
        # The emitter stops itself when the vault folder is deleted; the observer thread lives on.
        return bool(emitters) and all(e.is_alive() for e in emitters) and self._root_intact()

    def _root_intact(self) -> bool:
        """False once the vault path is gone or names another folder (the watched one was moved away).

        inotify watches inodes: after the vault folder is renamed, events keep coming for the moved folder,
        and watchdog ignores IN_MOVE_SELF, so a stat of the path is the only way to notice.
        """
        if self._root_lost:
            return False
        try:
            st = os.stat(self._root)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._root_id

    # -- event path (observer thread) -----------------------------------------------------------------

    def _watch_top(self, observer: BaseObserver, name: str) -> None:
        path = os.path.join(self._root, name)
        if name in self._tops or self._handler is None or not os.path.isdir(path) or os.path.islink(path):
            return
        try:
            self._tops[name] = observer.schedule(self._handler, path, recursive=True, event_filter=EVENT_FILTER)
        except OSError as exc:
            log.warning("could not watch %s (%s); changes there wait for the periodic reconcile", path, exc)
            if name not in self._unwatched_tops:
                self._unwatched_tops.append(name)

    def _unwatch_top(self, observer: BaseObserver, name: str) -> None:
        watch = self._tops.pop(name, None)
        if name in self._unwatched_tops:
            self._unwatched_tops.remove(name)
        if watch is not None:
            with contextlib.suppress(Exception):
                observer.unschedule(watch)

    def _track_top_level(self, event: FileSystemEvent) -> None:
        """Keep one recursive watch per top-level folder as folders come and go."""
        observer = self._observer
        if observer is None or not event.is_directory:
            return
        src = self._relative(event.src_path)
        dest = self._relative(event.dest_path) if isinstance(event, MOVED_EVENTS) and event.dest_path else None
        gone = isinstance(event, MOVED_EVENTS) or getattr(event, "event_type", "") == "deleted"
        if src and "/" not in src and not src.startswith(".") and gone:
            self._unwatch_top(observer, src)
        created = getattr(event, "event_type", "") == "created"
        target = dest if isinstance(event, MOVED_EVENTS) else (src if created else None)
        if target and "/" not in target and not target.startswith("."):
            self._watch_top(observer, target)

    def _relative(self, raw: bytes | str) -> str | None:
        """Vault-relative POSIX path, "" for the root itself, None when outside the vault."""
        path = os.fsdecode(raw)
        if path == self._root:
            return ""
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix) :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")

    def _on_event(self, event: FileSystemEvent) -> None:
        if not isinstance(event, ACCEPTED_EVENTS):
            with self._cond:
                self._ignored += 1
            return
        try:
            self._track_top_level(event)
        except Exception:
            log.exception("could not update the folder watches after %r", event)
        raws = [event.src_path]
        if isinstance(event, MOVED_EVENTS):
            raws.append(event.dest_path)
        paths: list[str] = []
        for raw in raws:
            if not raw:
                continue
            rel = self._relative(raw)
            if rel is None:
                continue
            if rel == "":
                if event.is_directory:  # the vault folder itself was deleted
                    log.warning("the vault folder %s was removed; watching has stopped", self._root)
                    self._root_lost = True
                    paths.append(VAULT_HINT)
                continue
            if is_ignored(rel) or (self._ignore is not None and self._ignore(rel)):
                continue
            paths.append(rel + "/" if event.is_directory else rel)
        self._add(paths, dirs=event.is_directory)

    def _add(self, paths: list[str], *, dirs: bool) -> None:
        with self._cond:
            if not paths:
                self._ignored += 1
                return
            self._events += 1
            now = self._clock()
            if not self._pending:
                self._first_at = now
                self._cond.notify_all()  # later events only push the deadline out: no need to wake the flusher
            self._last_at = now
            self._pending.update(paths)
            self._dirs_dirty |= dirs

    def _on_overflow(self) -> None:
        log.warning("inotify queue overflowed: file events were lost; asking for a full rescan of the vault")
        with self._cond:
            self._overflows += 1
        self._add([VAULT_HINT], dirs=True)  # watchdog rebuilt its watches: recount them too

    def _record_error(self, msg: str, *args: object) -> None:
        log.exception(msg, *args)
        with self._cond:
            self._handler_errors += 1

    # -- flush thread ---------------------------------------------------------------------------------

    def _flush_loop(self, stop_flag: threading.Event) -> None:
        while True:
            with self._cond:
                while True:
                    if self._pending:
                        now = self._clock()
                        due = min(self._last_at + self.debounce, self._first_at + self.max_latency)
                        if stop_flag.is_set() or now >= due:
                            batch, self._pending = self._pending, set()
                            recount, self._dirs_dirty = self._dirs_dirty, False
                            self._flushes += 1
                            break
                        self._cond.wait(due - now)
                    elif stop_flag.is_set():
                        return
                    else:
                        self._cond.wait()
            if not self._root_lost and not self._root_intact():
                self._root_lost = True
                log.warning("the vault folder %s was moved or replaced; changes are no longer watched", self._root)
                batch.add(VAULT_HINT)
            try:
                self._on_change(batch)
            except Exception:
                self._record_error("on_change failed for %d path(s); the next reconcile pass covers them", len(batch))
            if recount and not stop_flag.is_set():
                try:
                    self._update_dirs(self._observer)
                except Exception:
                    self._record_error("recounting the vault's folders failed")

    # -- watch accounting -----------------------------------------------------------------------------

    def _update_dirs(self, observer: BaseObserver | None) -> None:
        """Recount directories and estimate how many lack an inotify watch; warn when that number grows.

        unwatched = max(estimate, measured):
        - estimate: directories beyond what the limit leaves free, i.e. watched_dirs - (watch_limit -
          watches_in_use), where watches_in_use is this user's total read from /proc before start (0 if
          unreadable; no estimate at all when the limit is unknown);
        - measured: watched_dirs - watches_held, the watches this observer's inotify instance really holds
          (watchdog skips directories it could not watch without a word).
        Both can be off by a few while folders are being created or deleted.
        """
        total, notes = count_dirs(self._root)
        held = observer_watches(observer) if observer is not None else None
        with self._cond:
            limit, in_use = self._watch_limit, max(0, self._watches_in_use)
            estimate = max(0, total - max(0, limit - in_use)) if limit > 0 else 0
            measured = max(0, total - held) if held is not None else 0
            unwatched = max(estimate, measured)
            previous = self._unwatched
            self._watched_dirs, self._note_dirs = total, notes
            self._watches_held = -1 if held is None else held
            self._unwatched = unwatched
        if unwatched > previous:
            suggested = max(2 * limit, in_use + total + 8192)
            log.warning(
                "inotify watch limit: about %d of the %d folders under %s are not watched (fs.inotify."
                "max_user_watches = %d, %d watches already in use); changes there wait for the periodic "
                "reconcile. Raise the limit, e.g. `sysctl -w fs.inotify.max_user_watches=%d` (persist it in "
                "/etc/sysctl.d/).",
                unwatched,
                total,
                self._root,
                limit,
                in_use,
                suggested,
            )
        elif previous and not unwatched:
            log.info("every folder under %s is watched again", self._root)
