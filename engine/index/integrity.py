"""Damage detection for the Tantivy index folder, without ever reading a segment through its memory map.

Tantivy reads segment files through `mmap`. The installed binding (tantivy-py 0.27) offers no other
directory for an index on disk: a path means `MmapDirectory`, no path means RAM. When a mapped file is
truncated by someone else, the next read of a page past the new end kills the whole process with SIGBUS,
and no Python handler can turn that into an exception. Garbled bytes do not kill the process but make
Tantivy panic or answer nonsense. So the index is checked from outside the map:

- every segment file ends with a footer: a JSON object holding a CRC-32 of everything before it, its
  length as a little-endian u32 and the magic number 1337. `verify_file` reads a file with ordinary
  `read()` calls (a short read is an error, never a signal) and checks all three;
- segment files are written once and never change, so a file whose size, inode or mtime differs from
  the one that was verified is damage, or at least must be verified again before it is read.

`IndexGuard` keeps the verified (size, mtime, inode) of every file the current `meta.json` names and
answers `check()` with the first problem found, or None. `check()` costs one `stat` per segment file
(and re-reads `meta.json` only when it changed), so it runs before every read of the index. The reads of
one search (a dozen, back to back) and of searches in quick succession share one look: a check less than
`min_interval` after the last one answers from it (the index uses `CHECK_INTERVAL`, a quarter of a second;
about 25 stats a look cost 0.1 to 0.3 ms, several times a search). A file truncated between a look and a
read can still kill the process, a window of at most that interval instead of the index's whole life. A
reload looks again at once (`refresh`). The daemon's health pass runs `check` too, and `verify_all`
re-reads everything.

The keys verified are also kept across processes in a small record beside the folder (`record`, written when
the index closes): the next open checksums only the files whose size, mtime or inode differ from it, the same
trust `check` gives a file between two looks. Without it every open read the whole index (a few hundred
megabytes at 100,000 notes: a third of a second with the files cached, seconds from a cold disk), on every
daemon start and every command that opens the index.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path

FOOTER_MAGIC = 1337
META = "meta.json"
_CHUNK = 1 << 20
Key = tuple[int, int, int]  # size, mtime_ns, inode
CHECK_INTERVAL = 0.25  # seconds one look at the folder answers for (see the module docstring)


def verify_file(path: Path) -> str | None:
    """None when the file's footer and checksum are right, else what is wrong (read without mmap)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 8:
                return f"{path.name} is truncated ({size} bytes)"
            f.seek(size - 8)
            length, magic = struct.unpack("<II", f.read(8))
            if magic != FOOTER_MAGIC or length + 8 > size:
                return f"{path.name} has no valid footer (truncated or overwritten)"
            body_end = size - 8 - length
            f.seek(body_end)
            footer = f.read(length)
            try:
                expected = int(json.loads(footer)["crc"])
            except (ValueError, KeyError, TypeError):
                return f"{path.name} has an unreadable footer"
            f.seek(0)
            crc, left = 0, body_end
            while left > 0:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    return f"{path.name} ended early while being read"
                crc = zlib.crc32(chunk, crc)
                left -= len(chunk)
    except OSError as exc:
        return f"{path.name} could not be read ({exc.strerror or exc})"
    if crc != expected:
        return f"{path.name} fails its checksum (garbled)"
    return None


def _segment_ids(directory: Path) -> set[str] | None:
    """Segment ids (hex, no dashes) that `meta.json` names; None when it cannot be read."""
    try:
        meta = json.loads((directory / META).read_text(encoding="utf-8"))
        return {str(s["segment_id"]).replace("-", "") for s in meta.get("segments", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _key(st: os.stat_result) -> Key:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class IndexGuard:
    """The verified state of one index folder; `check()` says whether it still holds."""

    def __init__(
        self,
        directory: Path,
        *,
        min_interval: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        record: Path | None = None,
    ) -> None:
        self.directory = directory
        self.record = record  # where the verified keys are kept for the next process (see the module docstring)
        self.min_interval = min_interval  # back-to-back reads share a check
        self.damage: str | None = None  # once set, stays set: the folder is rebuilt, not trusted again
        self._files: dict[str, Key] = {}
        self._meta: Key | None = None
        self._clock = clock
        self._checked_at: float | None = None
        self._lock = threading.Lock()
        self._folder = str(directory)  # plain strings: a look stats every file, and Path joins cost more
        self._meta_path = os.path.join(self._folder, META)

    def mark(self, problem: str) -> None:
        with self._lock:
            if self.damage is None:
                self.damage = problem

    def refresh(self) -> str | None:
        """Verify every file the current `meta.json` names and remember their state (after a commit). At the
        first look, a file the record says was verified with the same key is not read again."""
        with self._lock:
            if self._meta is None and not self._files:
                self._files = self._recorded()
            problem = self._sync(force=True)
            self._checked_at = self._clock()
            return problem

    def check(self) -> str | None:
        """The first sign of damage, or None. Cheap: stats, plus a checksum of files that changed; within
        `min_interval` of the last look, that look's answer."""
        with self._lock:
            if self.damage is not None:
                return self.damage
            now = self._clock()
            if self._checked_at is not None and now - self._checked_at < self.min_interval:
                return None
            problem = self._sync(force=False)
            self._checked_at = now
            return problem

    def remember(self) -> None:
        """Write the keys of the files verified so far to the record, for the next process's first look. Not
        when damage was seen, or without a record; a record that cannot be written is left out (the next open
        reads every file, as without one)."""
        if self.record is None or not os.path.isdir(self._folder):  # a folder deleted or set aside: no record
            return
        with self._lock:
            if self.damage is not None or self._meta is None:
                return
            files = {name: list(key) for name, key in self._files.items()}
        part = self.record.with_name(f"{self.record.name}.{os.getpid()}.part")
        try:
            part.write_text(json.dumps({"folder": self._folder, "files": files}), encoding="utf-8")
            os.replace(part, self.record)
        except OSError:
            part.unlink(missing_ok=True)

    def _recorded(self) -> dict[str, Key]:
        """The keys the record holds for this folder; none when there is no record or it is unreadable."""
        if self.record is None:
            return {}
        try:
            data = json.loads(self.record.read_text(encoding="utf-8"))
            if data.get("folder") != self._folder:
                return {}
            return {str(n): (int(k[0]), int(k[1]), int(k[2])) for n, k in dict(data["files"]).items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return {}

    def verify_all(self) -> str | None:
        """Re-read and checksum every segment file (the slow, thorough check)."""
        with self._lock:
            if self.damage is not None:
                return self.damage
            for name in sorted(self._files):
                problem = verify_file(self.directory / name)
                if problem is not None and self._merged_away(name):
                    continue  # the next look follows the new meta
                if problem is not None:
                    self.damage = problem
                    return problem
            return None

    def _sync(self, force: bool) -> str | None:
        d = self.directory
        folder = self._folder
        try:
            meta_key = _key(os.stat(self._meta_path))
        except FileNotFoundError:
            self.damage = "the index folder was deleted" if not d.exists() else "the index's meta.json is missing"
            return self.damage
        except OSError as exc:
            self.damage = f"the index folder cannot be read ({exc.strerror or exc})"
            return self.damage
        if force or meta_key != self._meta:
            ids = _segment_ids(d)
            if ids is None:
                self.damage = "the index's meta.json is unreadable"
                return self.damage
            try:
                names = [n for n in os.listdir(d) if n.split(".", 1)[0] in ids]
            except OSError as exc:
                self.damage = f"the index folder cannot be listed ({exc.strerror or exc})"
                return self.damage
            files: dict[str, Key] = {}
            for name in names:
                known = self._files.get(name)
                try:
                    key = _key(os.stat(d / name))
                except OSError:
                    continue  # replaced by a merge since the listing; the next meta names its successor
                if known != key:
                    problem = verify_file(d / name)
                    if problem is not None and not os.path.exists(d / name):
                        continue  # merged away between the stat and the read: the next meta names its successor
                    if problem is not None:
                        self.damage = problem
                        return problem
                files[name] = key
            self._files, self._meta = files, meta_key
            return None
        for name, key in self._files.items():
            try:
                now = _key(os.stat(f"{folder}/{name}"))
            except FileNotFoundError:
                if self._meta_moved():  # a merge replaced it since the last look: follow the new meta
                    return self._sync(force=True)
                self.damage = f"{name} was deleted from the index folder"
                return self.damage
            except OSError as exc:
                self.damage = f"{name} cannot be read ({exc.strerror or exc})"
                return self.damage
            if now == key:
                continue
            if now[0] != key[0]:
                self.damage = f"{name} changed size ({key[0]} -> {now[0]} bytes): truncated or overwritten"
                return self.damage
            problem = verify_file(d / name)
            if problem is not None and self._merged_away(name):
                return self._sync(force=True)
            if problem is not None:
                self.damage = problem
                return problem
            self._files[name] = now
        return None

    def _merged_away(self, name: str) -> bool:
        """Whether segment file `name`, which failed a read, is gone because a merge replaced it (Tantivy deletes
        a segment's files only after a newer meta.json stops naming them), not because it was damaged."""
        return not os.path.exists(self.directory / name) and self._meta_moved()

    def _meta_moved(self) -> bool:
        try:
            return _key(os.stat(self._meta_path)) != self._meta
        except OSError:
            return False
