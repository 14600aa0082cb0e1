"""VaultWatcher against real temporary folders and a real watchdog observer.

No test sleeps for timing: each one waits on a condition with a deadline, and proves a negative ("this
temp name never appears") by writing a sentinel note afterwards and waiting for it, since events arrive
in order.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import DirDeletedEvent, FileCreatedEvent, FileMovedEvent, FileOpenedEvent

from agentmd.engine.daemon.watch_observer import count_dirs
from agentmd.engine.daemon.watcher import VAULT_HINT, VaultWatcher

TIMEOUT = 5.0


def wait_until(pred: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    """Poll `pred` with short waits on an Event until it holds or the deadline passes."""
    ticker = threading.Event()
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() >= deadline:
            return False
        ticker.wait(0.01)
    return True


class Sink:
    """The on_change callback: records every batch with its arrival time."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.batches: list[tuple[float, set[str]]] = []
        self.fail_next = 0

    def __call__(self, paths: set[str]) -> None:
        with self.cond:
            self.batches.append((time.monotonic(), set(paths)))
            self.cond.notify_all()
            if self.fail_next:
                self.fail_next -= 1
                raise RuntimeError("consumer failed")

    def mark(self) -> int:
        with self.cond:
            return len(self.batches)

    def seen(self, since: int = 0) -> set[str]:
        with self.cond:
            return set().union(*(paths for _, paths in self.batches[since:]))

    def wait_for(self, *paths: str, since: int = 0, timeout: float = TIMEOUT) -> set[str]:
        """Wait until every path appeared in a batch at index >= `since`; return everything seen since."""
        with self.cond:
            ok = self.cond.wait_for(
                lambda: set(paths) <= set().union(*(p for _, p in self.batches[since:])), timeout=timeout
            )
            got = set().union(*(p for _, p in self.batches[since:]))
        assert ok, f"timed out waiting for {sorted(set(paths) - got)}; got {sorted(got)}"
        return got


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    return vault


@pytest.fixture
def make(root: Path) -> Iterator[Callable[..., tuple[VaultWatcher, Sink]]]:
    made: list[VaultWatcher] = []

    def factory(**kwargs: object) -> tuple[VaultWatcher, Sink]:
        sink = Sink()
        watcher = VaultWatcher(root, sink, **kwargs)  # type: ignore[arg-type]
        made.append(watcher)
        watcher.start()
        return watcher, sink

    yield factory
    for watcher in made:
        watcher.stop()


def write(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- events to paths ------------------------------------------------------------------------------------------


def test_create_modify_delete(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    _, sink = make()
    note = root / "note.md"
    write(note, "one")
    sink.wait_for("note.md")
    mark = sink.mark()
    with note.open("a", encoding="utf-8") as f:
        f.write(" two")
    sink.wait_for("note.md", since=mark)
    mark = sink.mark()
    note.unlink()
    sink.wait_for("note.md", since=mark)


def test_rename_reports_both_paths(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    write(root / "old.md")
    _, sink = make()
    os.rename(root / "old.md", root / "new.md")
    got = sink.wait_for("old.md", "new.md")
    assert got == {"old.md", "new.md"}


def test_atomic_save_reports_target_only(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    write(root / "note.md", "v1")
    _, sink = make()
    for tmp in (".note.md.tmp", "note.md.tmp.123", ".note.md.tmp.4242"):
        write(root / tmp, "v2")
        os.replace(root / tmp, root / "note.md")
    write(root / "zz-sentinel.md")
    got = sink.wait_for("note.md", "zz-sentinel.md")
    assert got == {"note.md", "zz-sentinel.md"}


def test_editor_junk_never_appears(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    write(root / "note.md", "v1")
    _, sink = make()
    # vim's write sequence with backup: probe, swap, backup by rename, new file, drop backup
    write(root / "4913")
    (root / "4913").unlink()
    write(root / ".note.md.swp", "swap")
    os.rename(root / "note.md", root / "note.md~")
    write(root / "note.md", "v2")
    (root / "note.md~").unlink()
    (root / ".note.md.swp").unlink()
    # emacs and friends
    write(root / ".#note.md", "lock")
    write(root / "#note.md#", "autosave")
    write(root / "sub" / "download.pdf.crdownload")
    write(root / "sub" / "big.zip.part")
    write(root / "zz-sentinel.md")
    got = sink.wait_for("note.md", "zz-sentinel.md")
    assert got <= {"note.md", "zz-sentinel.md", "sub/"}, got


def test_dot_directories_never_appear(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    (root / ".git" / "objects").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    watcher, sink = make()
    write(root / ".obsidian" / "workspace.json", "{}")
    write(root / ".git" / "index", "idx")
    write(root / ".git" / "objects" / "ab" / "cdef0123", "blob")
    write(root / ".trash" / "old.md", "gone")
    write(root / ".tmp.driveupload" / "123", "churn")
    os.rename(root / ".obsidian" / "workspace.json", root / ".obsidian" / "workspace.json.bak")
    write(root / "zz-sentinel.md")
    got = sink.wait_for("zz-sentinel.md")
    assert got == {"zz-sentinel.md"}
    assert watcher.stats()["ignored"] > 0


def test_directory_events_give_trailing_slash_hints(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    _, sink = make()
    (root / "proj").mkdir()
    sink.wait_for("proj/")
    write(root / "proj" / "a.md")
    sink.wait_for("proj/a.md")
    mark = sink.mark()
    os.rename(root / "proj", root / "proj2")
    # a top-level folder renamed: the folder as a hint on both sides (the consumer rescans both)
    sink.wait_for("proj/", "proj2/", since=mark)
    mark = sink.mark()
    # inside a top-level folder's recursive watch, watchdog also reports each child of a renamed folder
    write(root / "proj2" / "sub" / "b.md")
    sink.wait_for("proj2/sub/b.md", since=mark)
    mark = sink.mark()
    os.rename(root / "proj2" / "sub", root / "proj2" / "sub2")
    sink.wait_for("proj2/sub/", "proj2/sub2/", "proj2/sub/b.md", "proj2/sub2/b.md", since=mark)
    mark = sink.mark()
    # mkdir -p then an immediate write: the new top-level folder's hint stands for everything in it
    write(root / "x" / "y" / "n.md")
    sink.wait_for("x/", since=mark)
    write(root / "x" / "y" / "later.md")
    sink.wait_for("x/y/later.md", since=mark)
    mark = sink.mark()
    shutil.rmtree(root / "proj2")
    sink.wait_for("proj2/", since=mark)


def test_burst_is_debounced(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    _, sink = make()
    names = [f"n{i:02d}.md" for i in range(50)]
    for i in range(200):
        write(root / names[i % 50], f"rev {i}")
    got = sink.wait_for(*names)
    assert got == set(names)
    assert len(sink.batches) <= 5, [len(p) for _, p in sink.batches]


def test_continuous_stream_still_flushes(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    # debounce 0.3 s against a write every 20 ms: only the 1 s max-latency bound can flush
    _, sink = make(debounce=0.3)
    stop = threading.Event()
    started = threading.Event()
    first_write: list[float] = []

    def stream() -> None:
        i = 0
        while not stop.is_set():
            write(root / "live.md", f"tick {i}")
            if not first_write:
                first_write.append(time.monotonic())
                started.set()
            i += 1
            stop.wait(0.02)

    writer = threading.Thread(target=stream, daemon=True)
    writer.start()
    try:
        assert started.wait(TIMEOUT)
        assert wait_until(lambda: len(sink.batches) >= 2, timeout=4.0), "stream starved the flush"
    finally:
        stop.set()
        writer.join()
    first_flush = sink.batches[0][0]
    assert first_flush - first_write[0] < 1.6
    assert sink.batches[0][1] == {"live.md"}


# -- robustness -----------------------------------------------------------------------------------------------


def test_on_change_exception_is_counted_and_later_events_arrive(
    root: Path, make: Callable[..., tuple[VaultWatcher, Sink]], caplog: pytest.LogCaptureFixture
) -> None:
    watcher, sink = make()
    sink.fail_next = 1
    write(root / "a.md")
    sink.wait_for("a.md")
    assert wait_until(lambda: watcher.stats()["handler_errors"] == 1)
    assert any(r.name == "agentmd.watcher" and r.exc_info for r in caplog.records)
    mark = sink.mark()
    write(root / "b.md")
    sink.wait_for("b.md", since=mark)
    stats = watcher.stats()
    assert stats["handler_errors"] == 1
    assert stats["running"] is True


def test_exception_in_event_path_does_not_kill_observer(
    root: Path, make: Callable[..., tuple[VaultWatcher, Sink]], monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher, sink = make()
    real = watcher._on_event

    def flaky(event: object) -> None:
        if str(getattr(event, "src_path", "")).endswith("boom.md"):
            raise ValueError("handler bug")
        real(event)  # type: ignore[arg-type]

    monkeypatch.setattr(watcher, "_on_event", flaky)
    write(root / "boom.md")
    write(root / "after.md")
    got = sink.wait_for("after.md")
    assert "boom.md" not in got
    stats = watcher.stats()
    assert stats["handler_errors"] >= 1
    assert stats["running"] is True


def test_event_mapping_for_synthetic_events(root: Path, tmp_path: Path) -> None:
    """Outside-vault paths, half-ignored moves and unfiltered event types, without an observer."""
    sink = Sink()
    watcher = VaultWatcher(root, sink, debounce=60.0, max_latency=60.0)
    handler_dispatch = watcher._on_event
    base = os.path.realpath(root)
    handler_dispatch(FileCreatedEvent(str(tmp_path / "elsewhere.md")))
    handler_dispatch(FileCreatedEvent(base + "-sibling/x.md"))  # shares the prefix, not the folder
    handler_dispatch(FileMovedEvent(f"{base}/n.md", f"{base}/.trash/n.md"))
    handler_dispatch(FileMovedEvent(f"{base}/.n.md.tmp", f"{base}/n2.md"))
    handler_dispatch(FileOpenedEvent(f"{base}/read.md"))
    handler_dispatch(DirDeletedEvent(f"{base}/old"))
    stats = watcher.stats()
    assert (stats["events"], stats["ignored"], stats["pending"]) == (3, 3, 3)
    watcher.stop()  # never started: nothing to flush, no error
    assert sink.batches == []


def test_stop_flushes_pending_changes(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    watcher, sink = make(debounce=30.0, max_latency=30.0)
    write(root / "late.md")
    assert wait_until(lambda: watcher.stats()["pending"] >= 1)
    watcher.stop()
    assert sink.seen() == {"late.md"}


def test_stop_is_idempotent_and_start_again_works(root: Path) -> None:
    sink = Sink()
    watcher = VaultWatcher(root, sink)
    watcher.stop()  # before start
    watcher.start()
    watcher.start()  # already running: no-op
    assert watcher.stats()["running"] is True
    watcher.stop()
    watcher.stop()
    assert watcher.stats()["running"] is False
    write(root / "while-stopped.md")
    watcher.start()
    try:
        assert watcher.stats()["running"] is True
        write(root / "again.md")
        got = sink.wait_for("again.md")
        assert "while-stopped.md" not in got
    finally:
        watcher.stop()
    assert watcher.stats()["running"] is False


def test_vault_removed_stops_running_and_asks_for_rescan(
    root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]
) -> None:
    write(root / "a" / "n.md")
    watcher, sink = make()
    shutil.rmtree(root)
    sink.wait_for(VAULT_HINT)
    assert wait_until(lambda: watcher.stats()["running"] is False)
    root.mkdir()  # the folder is back (remount, restore): start() replaces the dead observer
    watcher.start()
    assert watcher.stats()["running"] is True
    mark = sink.mark()
    write(root / "back.md")
    sink.wait_for("back.md", since=mark)


def test_vault_moved_away_is_noticed(
    root: Path, tmp_path: Path, make: Callable[..., tuple[VaultWatcher, Sink]]
) -> None:
    watcher, sink = make()
    os.rename(root, tmp_path / "moved")
    write(tmp_path / "moved" / "x.md")  # inotify follows the inode: events still come, for the wrong path
    sink.wait_for(VAULT_HINT)
    assert watcher.stats()["running"] is False


def test_start_on_missing_vault_raises(tmp_path: Path) -> None:
    watcher = VaultWatcher(tmp_path / "absent", Sink())
    with pytest.raises(OSError):
        watcher.start()
    assert watcher.stats()["running"] is False
    watcher.stop()


def test_queue_overflow_asks_for_full_rescan(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    from watchdog.observers.inotify_c import InotifyConstants, InotifyEvent, WatchDescriptor

    (root / "sub").mkdir()  # watchdog reports an overflow per recursive watch, i.e. per top-level folder
    watcher, sink = make()
    inotify = getattr(watcher._observer, "_inotify_fd", None)
    assert inotify is not None and hasattr(inotify, "handle_event"), (
        "watchdog's InotifyObserver no longer has _inotify_fd.handle_event: the watcher's overflow coupling broke"
    )
    # what the kernel sends when its queue overflows (wd -1); watchdog drops its pending events and rewatches
    inotify.handle_event(InotifyEvent(WatchDescriptor(-1), InotifyConstants.IN_Q_OVERFLOW, 0, b""))
    sink.wait_for(VAULT_HINT)
    assert watcher.stats()["overflows"] == 1
    mark = sink.mark()
    write(root / "after.md")  # still watching after watchdog's rebuild
    sink.wait_for("after.md", since=mark)


# -- watch accounting -----------------------------------------------------------------------------------------


def test_dir_counts_leave_out_top_level_dot_dirs(root: Path, make: Callable[..., tuple[VaultWatcher, Sink]]) -> None:
    for rel in ("a/b", "c", ".git/objects/ab", ".git/refs/heads", ".obsidian"):
        (root / rel).mkdir(parents=True)
    (root / "link").symlink_to(root / "a")  # not followed, not watched
    watcher, sink = make()
    stats = watcher.stats()
    # root, a, a/b, c; the top-level dot folders (.git, .obsidian) are not watched at all
    assert (stats["watched_dirs"], stats["note_dirs"]) == (4, 4)
    if stats["watches_held"] != -1:
        assert stats["watches_held"] == stats["watched_dirs"]  # the count is what inotify really holds
    assert stats["unwatched_dirs"] == 0
    (root / "d").mkdir()
    sink.wait_for("d/")
    assert wait_until(lambda: watcher.stats()["watched_dirs"] == 5)


def test_watch_limit_reports_unwatched_and_warns(
    root: Path, make: Callable[..., tuple[VaultWatcher, Sink]], caplog: pytest.LogCaptureFixture
) -> None:
    for i in range(9):
        (root / f"d{i}").mkdir()
    assert count_dirs(str(root)) == (10, 10)
    caplog.set_level(logging.WARNING, logger="agentmd.watcher")
    watcher, _ = make(watch_limit=3)
    stats = watcher.stats()
    assert stats["watch_limit"] == 3
    assert stats["watched_dirs"] == 10
    assert stats["unwatched_dirs"] >= 7
    warnings = [r for r in caplog.records if r.name == "agentmd.watcher" and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "fs.inotify.max_user_watches" in message
    assert f"about {stats['unwatched_dirs']} of the 10 folders" in message
