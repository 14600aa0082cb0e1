"""`.git/index.lock`: taking it, publishing an index while holding it, and telling whose a lock is.

agentmd takes the lock the way git does, by creating the file exclusively, and writes a marker into it:
`held by agentmd (pid N, host H, boot B)`. The marker stays until the lock is released: the new index is
written as a private file and renamed over `.git/index`, never into the lock, so an ENOSPC or EIO at any
step leaves a lock that still names us and that `release` removes. A lock that is not ours (empty, as a
running git command leaves it, or any other content) is never removed: the committer waits for it with
backoff, then skips the cycle and says whose lock it is. Our own lock left by a crash is removed at
daemon start, and only when its marker names this host and this boot and a process that no longer exists
(`remove_own_stale_lock`); the private index copies a crashed agentmd left in `.git/` are swept at the
same time."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

from agentmd.engine.failpoints import failpoint
from agentmd.engine.fsutil import fsync_dir_quietly
from agentmd.engine.git.runner import CycleFailure, GitCli

LOCK_MARKER_RE = re.compile(r"held by agentmd \(pid (\d+), host (.+), boot ([^()\s]+)\)\n")
STRAY_TEMP_AGE_SECONDS = 6 * 3600.0
_TEMP_INDEX_PREFIX = "index.agentmd-"
# private indexes: the committer's (`index.agentmd-<pid>-<hex>`), a sync merge's and a rewrite replay's
# (`agentmd-sync-index-<pid>`, `agentmd-replay-index-<pid>`)
_TEMP_NAME_RE = re.compile(r"index\.agentmd-(\d+)-[0-9a-f]+(?:\.lock)?|agentmd-(?:sync|replay)-index-(\d+)(?:\.lock)?")


def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def _marker() -> bytes:
    return f"held by agentmd (pid {os.getpid()}, host {socket.gethostname()}, boot {boot_id()})\n".encode()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a real pid: treat as alive, i.e. never ours to remove
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but belongs to someone else, or cannot be probed
    return True


def describe_lock(content: bytes) -> str:
    if not content:
        return "an empty lock (what a running git command leaves)"
    m = LOCK_MARKER_RE.fullmatch(content.decode("utf-8", "replace"))
    if m is None:
        return "a process other than agentmd"
    pid, host, boot = int(m.group(1)), m.group(2), m.group(3)
    if host != socket.gethostname() or boot != boot_id():
        return f"agentmd pid {pid} on host {host} (boot {boot[:8]}), not this machine or boot"
    state = "running" if pid_alive(pid) else "no longer running; `agentmd serve` removes it at start"
    return f"agentmd pid {pid} ({state})"


class IndexLock:
    """`.git/index.lock`, created exclusively and holding our marker until it is released.

    The lock is made, checked and removed relative to a descriptor of the `.git` folder it was made in, so a
    vault folder renamed or swapped while the lock is held (a drive unmounted and mounted elsewhere) still has
    its own lock removed, not a file of the same name in whatever folder now has the old path."""

    def __init__(self, path: Path, fd: int, marker: bytes, dir_fd: int | None = None) -> None:
        self.path = path
        self.fd: int | None = fd
        self.marker = marker
        self.ino = os.fstat(fd).st_ino
        self._dir_fd = dir_fd

    @classmethod
    def try_create(cls, path: Path) -> IndexLock | None:
        """Take the lock with our marker already in it: the marker is written to a private file first, which
        is then hard-linked as the lock (a link, like git's own O_EXCL create, fails when the lock exists).
        A process killed at any moment leaves either no lock or one that names it, never an empty lock,
        which would read as a running git command's and block every later cycle."""
        marker = _marker()
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        staged = f"{_TEMP_INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(6)}.lock"  # swept after a crash
        try:
            fd = os.open(staged, os.O_CREAT | os.O_EXCL | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o666, dir_fd=dir_fd)
        except BaseException:
            os.close(dir_fd)
            raise
        linked = False
        try:
            view = memoryview(marker)
            while view:
                view = view[os.write(fd, view) :]
            failpoint("index-lock-staged")
            with contextlib.suppress(FileExistsError):
                os.link(staged, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                linked = True
        finally:
            with contextlib.suppress(OSError):
                os.unlink(staged, dir_fd=dir_fd)
            if not linked:
                os.close(fd)
                os.close(dir_fd)
        if not linked:
            return None
        return cls(path, fd, marker, dir_fd)

    def still_ours(self) -> bool:
        try:
            if self._dir_fd is None:
                return os.stat(self.path).st_ino == self.ino
            return os.stat(self.path.name, dir_fd=self._dir_fd, follow_symlinks=False).st_ino == self.ino
        except OSError:
            return False

    def publish(self, source: Path, target: Path) -> None:
        """Rename the finished private index `source` over `target` while the lock is held.

        The lock file itself is never rewritten: it keeps our marker from creation to release, so a failure
        at any step (ENOSPC, EIO) leaves a lock that `release`, or the next daemon start, knows as ours. The
        private index is renamed as git wrote it, so `.git/index` keeps the mtime git gave it when it
        recorded the entries' stat data: git's racily-clean check compares entry mtimes against exactly
        that time (a fresh mtime here would make a same-second, same-size edit look clean forever).
        """
        if not self.still_ours():
            raise CycleFailure(
                f"{self.path} was removed or replaced by another process while agentmd held it; "
                f"{target} was not updated. Run `git status` and `git reset` if the index looks wrong"
            )
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            with contextlib.suppress(OSError):
                os.fchmod(fd, os.stat(target).st_mode & 0o777)
            os.fsync(fd)
        finally:
            os.close(fd)
        failpoint("index-publish")
        os.replace(source, target)
        fsync_dir_quietly(target.parent)

    def release(self) -> None:
        """Close and remove the lock, but only while it still is the file we created with our marker."""
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = None
        try:
            if self.still_ours():
                with contextlib.suppress(OSError):
                    if self._read() == self.marker:
                        if self._dir_fd is None:
                            os.unlink(self.path)
                        else:
                            os.unlink(self.path.name, dir_fd=self._dir_fd)
        finally:
            if self._dir_fd is not None:
                os.close(self._dir_fd)
                self._dir_fd = None

    def _read(self) -> bytes:
        if self._dir_fd is None:
            return self.path.read_bytes()
        fd = os.open(self.path.name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0), dir_fd=self._dir_fd)
        try:
            return os.read(fd, 4096)
        finally:
            os.close(fd)


def _lock_age(path: Path) -> float | None:
    try:
        return max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return None


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def private_index_path(gitdir: Path) -> Path:
    """A fresh name in `.git/` for a private index copy of this process (swept after a crash)."""
    return gitdir / f"{_TEMP_INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"


def index_damaged(data: bytes) -> str | None:
    """Why the bytes of an index file are not one git can read (a torn write, a sync client's half copy, a
    stray editor), or None. git checks the same: the `DIRC` signature, then the checksum of all that precedes
    the trailing hash (SHA-1, or SHA-256 in a repository made so; all zeros when `index.skipHash` is set)."""
    if len(data) < 12 + 20 or data[:4] != b"DIRC":
        return "it does not start as a git index does"
    for size, algorithm in ((20, hashlib.sha1), (32, hashlib.sha256)):
        trailer = data[-size:]
        if len(data) >= 12 + size and (trailer == bytes(size) or algorithm(data[:-size]).digest() == trailer):
            return None
    return "its checksum does not match its contents"


def _publish_copy(index: Path, git: GitCli, lock: IndexLock) -> None:
    """A copy of a rebuilt private index put in place of the vault's (missing or damaged) one."""
    fixed = private_index_path(git.gitdir)
    shutil.copy2(index, fixed)
    lock.publish(fixed, git.index)


def make_private_index(git: GitCli, tmp_index: Path, *, has_head: bool, lock: IndexLock) -> str | None:
    """Copy `.git/index` to `tmp_index` (a new file), keeping its mtime.

    git trusts an entry whose stat data matches the file only when the entry's mtime is older than the
    index file's own mtime; an entry as new as the index is "racily clean" and git compares its content.
    A copy with a fresh mtime would turn every racily clean entry into a trusted one, and an edit that
    kept the size within the second of the last commit would never be seen. Hence the copy takes the
    original's timestamps. Without an index (deleted, lost to a sync client) it starts from HEAD, as
    `git reset` would, and so it does from a damaged one (`index_damaged`), which is kept beside it as
    `index.damaged` and named in what it returns (None otherwise); the rebuilt index replaces the damaged
    one at once, under `lock`, whatever the caller does next, so that git works in the vault again.
    """
    try:
        src = os.open(git.index, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        src = None
    except OSError as exc:
        raise CycleFailure(f"cannot read {git.index} ({exc.strerror or exc})") from exc
    if src is None:
        if has_head:
            run = git.run("read-tree", "HEAD", index=tmp_index)
            if run.code != 0:
                raise CycleFailure(f"the index is missing and `git read-tree HEAD` failed: {run.why()}")
            _publish_copy(tmp_index, git, lock)
        return None
    try:
        st = os.fstat(src)
        chunks = []
        while chunk := os.read(src, 1 << 20):
            chunks.append(chunk)
    except OSError as exc:
        raise CycleFailure(f"cannot read {git.index} ({exc.strerror or exc})") from exc
    finally:
        os.close(src)
    damaged = index_damaged(b"".join(chunks))
    if damaged is not None and has_head:
        kept = git.gitdir / "index.damaged"
        kept.write_bytes(b"".join(chunks))
        run = git.run("read-tree", "HEAD", index=tmp_index)
        if run.code != 0:
            raise CycleFailure(f"{git.index} is damaged ({damaged}) and `git read-tree HEAD` failed: {run.why()}")
        _publish_copy(tmp_index, git, lock)
        return (
            f"git's index {git.index} was damaged ({damaged}); it is rebuilt from the last commit (the damaged "
            f"file is kept as {kept}), and the vault's files are committed as they are"
        )
    fd = os.open(tmp_index, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(fd)
    return None


def acquire(
    path: Path,
    wait: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> IndexLock | str:
    """Take the lock at `path`, waiting up to `wait` seconds with backoff; a message when we could not."""
    start = clock()
    delay = 0.01
    for _ in range(100_000):
        lock = IndexLock.try_create(path)
        if lock is not None:
            return lock
        waited = clock() - start
        if waited >= wait:
            break
        sleep(min(delay, max(wait - waited, 0.001)))
        delay = min(delay * 2, 0.5)
    content = _read_or_empty(path)
    age = _lock_age(path)
    age_text = f"{age:.0f} s old" if age is not None else "gone by now"
    return (
        f"{path} is held by {describe_lock(content)}, {age_text}; waited {clock() - start:.1f} s and "
        "skipped this cycle (the next cycle retries). agentmd never removes it: if no git command is running, "
        "delete it by hand"
    )


def remove_own_stale_lock(gitdir: Path) -> str | None:
    """Remove `.git/index.lock` only when a dead agentmd of this host and boot left it; a line saying what
    was found, None when there was no lock."""
    path = gitdir / "index.lock"
    try:
        before = os.stat(path)
        content = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot read {path} ({exc.strerror or exc}); it is left alone"
    m = LOCK_MARKER_RE.fullmatch(content.decode("utf-8", "replace"))
    age = max(0.0, time.time() - before.st_mtime)
    if m is None:
        return f"{path} exists ({describe_lock(content)}, age {age:.0f} s); agentmd did not write it and leaves it"
    pid, host, boot = int(m.group(1)), m.group(2), m.group(3)
    if host != socket.gethostname() or boot != boot_id() or pid == os.getpid() or pid_alive(pid):
        return f"{path} is held by {describe_lock(content)} (age {age:.0f} s); it is left alone"
    with contextlib.suppress(FileNotFoundError):
        after = os.stat(path)
        if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
            return f"{path} changed while it was being checked; it is left alone"
        os.unlink(path)
    return f"removed a stale index.lock left by a dead agentmd (pid {pid})"


def sweep_private_indexes(gitdir: Path) -> list[str]:
    """Delete private index copies left in `.git/` by an agentmd that is gone (or that are very old)."""
    lines = []
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(gitdir):
            m = _TEMP_NAME_RE.fullmatch(entry.name)
            pid = int(m.group(1) or m.group(2)) if m is not None else os.getpid()
            if pid == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if not pid_alive(pid) or now - entry.stat().st_mtime > STRAY_TEMP_AGE_SECONDS:
                    os.unlink(entry.path)
                    lines.append(f"removed a temporary file left by an earlier agentmd: .git/{entry.name}")
    return lines
