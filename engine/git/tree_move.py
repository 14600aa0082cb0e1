"""Moving the work tree from HEAD to a descendant commit without ever overwriting an editor's save.

`git merge --ff-only` checks that a file is unchanged and then rewrites it: a save landing between the two
(milliseconds, while an editor writes into a folder a sync round moves) is overwritten, and nothing keeps it.
This module moves each changed file itself, so that whatever was at the path is always in hand afterwards:

- the new version is written to a file in the move's own folder in the git folder (`agentmd-tree-move/`, named
  by the entry it is for), then swapped with the file at the path in one step (`renameat2(RENAME_EXCHANGE)`):
  the file that was there lands at that name, whole, whatever moment a save happened;
- that file is compared with the version the move expected to replace (HEAD's). The same: it is dropped.
  Different: it is a save made meanwhile, and it is kept. A note is merged with the incoming version as a sync
  merges two machines' edits (`sync_merge.merge_note`: frontmatter key by key, body line by line) and the result
  written at the path; where they really conflict the save goes back to the path and the incoming version
  becomes a conflict sibling beside it (`<name>.conflict-<their host>-<date>.md`, `status: conflict`). A file
  that is not a note keeps the save (the incoming version stays in history);
- a file the move deletes is first renamed aside and compared the same way: a save made meanwhile is put back
  (deleted on one side, edited on the other: the edit survives);
- an editor that writes in place may hold the file open across the swap, and its write then lands in the file
  now at the temp name (an empty file read there is one truncated mid-save). So a swapped-out file that differs
  is read again until two reads a moment apart agree, and one that matched is kept at its temp name until the
  end of the round, read once more after a pause, and handled as a save if it changed meanwhile.

Then the index takes the new tree (`git read-tree -m`, which keeps what it knows of the unchanged files) and HEAD
moves (`git update-ref`, checked against the old value). A journal in the git folder names the move from before
the first file changes until HEAD has moved: a process killed in between leaves it, and `finish_unfinished`
(run by the committer before any cycle, and by the next round) completes the same move, so the files written
never read as the person's own edits of the old commit. Every step is idempotent: a file already holding the
new version is left alone. A save found at a path stays in the move's folder until the move is over, so a
process killed while bringing it in leaves it there: `finish_unfinished` brings in every file of that folder
that holds neither the old nor the new version of its entry, as the round would have.

Where the swap is not available (not Linux, or a file system without it) or the move holds something this
module does not write (a submodule, a folder where a file goes), `move_tree` returns None and the caller
falls back to `git merge --ff-only`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import datetime as dt
import errno
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.failpoints import failpoint
from agentmd.engine.fsutil import temp_name
from agentmd.engine.git.conflicts import conflict_text, sibling_name
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync_merge import merge_note

log = logging.getLogger("agentmd.sync")

JOURNAL = "agentmd-tree-move.json"
HOLD = "agentmd-tree-move"  # the move's files, in the git folder: the new versions on their way, the saves found
_AT_FDCWD = -100
_NOREPLACE = 1
_EXCHANGE = 2
_ZERO = "0" * 40
_WRITABLE = {"100644", "100755", "120000"}
_STILL = 0.02  # a swapped-out file that differs is read again this far apart until two reads agree
_STILL_MAX = 1.0
_LATE = 0.05  # the pause before the files set aside in a round are read once more
_LATE_PASSES = 3
_SAVE_ROUNDS = 20  # saves made while a note is put in place, brought in one after another, at most


def _load_renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _load_renameat2()


def _rename2(src: Path, dst: Path, flags: int) -> None:
    if _RENAMEAT2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available", str(dst))
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(dst))


@dataclass
class Entry:
    path: str
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str

    @property
    def deleted(self) -> bool:
        return self.new_oid == _ZERO


@dataclass
class MoveResult:
    paths: list[str]
    kept: list[dict[str, str]] = field(default_factory=list)  # saves found mid-move: {"path", "kept"[, "sibling"]}


class _Fallback(AgentmdError):
    """The move holds something this module does not write; git's own merge does it."""


def _entries(git: GitCli, old: str, new: str) -> list[Entry]:
    run = git.run("diff", "--raw", "-z", "--no-renames", "--no-abbrev", old, new)
    if run.code != 0:
        raise _Fallback(run.why())
    fields = run.out.split(b"\0")
    out = []
    for head, raw in zip(fields[0::2], fields[1::2], strict=False):
        if not head:
            break
        old_mode, new_mode, old_oid, new_oid, _status = head.decode().lstrip(":").split()
        out.append(Entry(os.fsdecode(raw), old_mode, new_mode, old_oid, new_oid))
    return out


def _blobs(git: GitCli, oids: set[str]) -> dict[str, bytes]:
    """The contents of `oids`, read by one `git cat-file --batch`."""
    wanted = sorted(o for o in oids if o != _ZERO)
    if not wanted:
        return {}
    run = git.run("cat-file", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode())
    if run.code != 0:
        raise _Fallback(run.why())
    data, at, out = run.out, 0, {}
    for oid in wanted:
        end = data.index(b"\n", at)
        name, kind, size = data[at:end].decode().split()
        if kind != "blob" or name != oid:
            raise _Fallback(f"{oid} is a {kind}, not a file")
        out[oid] = data[end + 1 : end + 1 + int(size)]
        at = end + 1 + int(size) + 1
    return out


@dataclass
class _Parked:
    """A file swapped out of `entry`'s path that held what the round expected, kept until the round's end."""

    entry: Entry
    aside: Path
    seen: bytes | None
    at_path: bytes | None  # what the round put at the path; None where it deleted the file


def _still(path: Path) -> bytes | None:
    """What is at `path` once writes to it have stopped (a writer that held it open may be mid-save)."""
    data, deadline = _read(path), time.monotonic() + _STILL_MAX
    while True:
        time.sleep(_STILL)
        again = _read(path)
        if again == data or time.monotonic() > deadline:
            return again
        data = again


def _read(path: Path) -> bytes | None:
    """What is at `path`: a file's bytes, a symbolic link's target; None when nothing (or a folder) is."""
    try:
        if path.is_symlink():
            return os.fsencode(os.readlink(path))
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


class _Mover:
    def __init__(self, git: GitCli, entries: list[Entry], their_host: Callable[[str], str], now: dt.datetime) -> None:
        self.git = git
        self.vault = git.vault
        self.entries = entries
        self.their_host = their_host
        self.now = now
        self.blobs = _blobs(git, {e.old_oid for e in entries} | {e.new_oid for e in entries})
        self.hold = git.gitdir / HOLD
        self.number = {e.path: i for i, e in enumerate(entries)}
        self.kept: list[dict[str, str]] = []
        self.parked: list[_Parked] = []
        self._made = 0

    def _temp(self, data: bytes | None, mode: str, entry: Entry | None) -> Path:
        """A new file in the move's folder holding `data` (none made when None), named by `entry`'s number in
        the move (`s` for a sibling, which is no entry's), so a killed process's leftovers say whose they are."""
        self.hold.mkdir(exist_ok=True)
        self._made += 1
        owner = str(self.number[entry.path]) if entry is not None else "s"
        tmp = self.hold / f"{owner}.{os.getpid()}.{self._made}"
        if data is None:
            return tmp
        if mode == "120000":
            os.symlink(os.fsdecode(data), tmp)
        else:
            tmp.write_bytes(data)
            if mode == "100755":
                os.chmod(tmp, 0o755)
        return tmp

    def _put(
        self, target: Path, data: bytes, mode: str, expect: bytes | None, entry: Entry | None = None
    ) -> bytes | None:
        """Put `data` at `target`; what was there, when it was neither absent nor `expect` (a save). What was
        there and matched stays at its temp name until the round ends (`_late_saves`) when `entry` is given; a
        save stays there until the move is over (`finish_unfinished` brings it in should the process die)."""
        tmp = self._temp(data, mode, entry)
        keep_aside = False
        try:
            try:
                _rename2(tmp, target, _NOREPLACE)
                return None
            except FileExistsError:
                pass
            if target.is_dir() and not target.is_symlink():
                raise IsADirectoryError(errno.EISDIR, "a folder stands where the synced file goes", str(target))
            _rename2(tmp, target, _EXCHANGE)  # what was at the path is now at tmp, whole
            prior = _read(tmp)
            if prior not in (expect, data):
                prior = _still(tmp)
            if prior in (expect, data):
                if entry is not None:
                    self.parked.append(_Parked(entry, tmp, prior, data))
                    keep_aside = True
                return None
            keep_aside = entry is not None
            failpoint("sync-save-found")  # the save is in the move's folder only, until it is brought in
            return prior
        finally:
            if not keep_aside:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)

    def apply(self) -> list[str]:
        for e in self.entries:
            if not {e.old_mode, e.new_mode} <= _WRITABLE | {"000000"}:
                raise _Fallback(f"{e.path} is a {e.new_mode if e.new_mode != '000000' else e.old_mode} entry")
        for e in self.entries:
            target = self.vault / e.path
            old = self.blobs.get(e.old_oid)
            if e.deleted:
                self._delete(e, target, old)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            new = self.blobs[e.new_oid]
            saved = self._put(target, new, e.new_mode, old, e)
            if saved is not None:
                self._keep(e, target, saved, old, new)
        self._late_saves()
        self._prune_folders()
        return [e.path for e in self.entries]

    def _late_saves(self) -> None:
        """Read the files set aside once more after a pause: a writer that held one open across the swap wrote
        into it, and that write is a save made meanwhile like any other."""
        for _ in range(_LATE_PASSES):
            parked, self.parked = self.parked, []
            if not parked:
                return
            time.sleep(_LATE)
            for p in parked:
                late = _still(p.aside) if _read(p.aside) != p.seen else None
                if late is None or late == p.seen:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(p.aside)
                    continue
                target = self.vault / p.entry.path
                if p.at_path is None:
                    self._restore(p.entry, target, p.aside)
                    continue
                os.unlink(p.aside)
                self._keep(p.entry, target, late, self.blobs.get(p.entry.old_oid), p.at_path)
        for p in self.parked:  # saved over and over: what is at the path is the latest, the aside an older one
            with contextlib.suppress(FileNotFoundError):
                os.unlink(p.aside)
        self.parked = []

    def _delete(self, e: Entry, target: Path, old: bytes | None) -> None:
        aside = self._temp(None, e.old_mode, e)
        try:
            os.rename(target, aside)
        except FileNotFoundError:
            return  # already gone (a move finished before a crash, or deleted here too)
        prior = _read(aside)
        if prior == old:
            self.parked.append(_Parked(e, aside, prior, None))
            return
        self._restore(e, target, aside)

    def _restore(self, e: Entry, target: Path, aside: Path) -> None:
        """A save made while the round deleted the note: the edit survives the deletion."""
        try:
            _rename2(aside, target, _NOREPLACE)
        except FileExistsError:
            os.unlink(aside)  # something newer is already back at the path
            return
        self.kept.append({"path": e.path, "kept": "the edit"})
        log.warning("sync: %s was saved while the round deleted it; the save is kept", e.path)

    def _keep(self, e: Entry, target: Path, saved: bytes, old: bytes | None, new: bytes) -> None:
        """A save found at `target` while `new` went in: merge it with `new`, or keep both. A writer may go on
        saving while this runs (a log appended to every few milliseconds): each file swapped out of the path is
        a save made on what the path held, and it is brought into what goes there next (`_settle`)."""
        note = e.path.lower().endswith(".md") and e.new_mode != "120000"
        merged = merge_note(self.git, old, saved, new) if note and old is not None else None
        if not note:
            newer = self._put(target, saved, e.new_mode, new, e)  # the save goes back to the path
            if newer is not None:
                self._put(target, newer, e.new_mode, saved, e)  # saved again meanwhile: the latest save stays
            self.kept.append({"path": e.path, "kept": "ours"})
            log.warning("sync: %s was saved while the round rewrote it; the save is kept", e.path)
            return
        self._settle(e, target, new, saved if merged is None else merged)
        if merged is not None:
            self.kept.append({"path": e.path, "kept": "merged"})
            log.warning("sync: %s was saved while the round rewrote it; the save and the round merged", e.path)
            return
        sibling = self._sibling(e, new)
        log.warning("sync: %s was saved while the round rewrote it; the incoming version is %s", e.path, sibling)

    def _settle(self, e: Entry, target: Path, placed: bytes, want: bytes) -> None:
        """Put `want` at `target`, which holds `placed`; while what comes out is a save made meanwhile, bring it in
        and put the result there in turn: what the save appended to `placed` is appended to `want`; a save that
        rewrote the file whole stays at the path, and `want` goes beside it as a sibling unless the save holds
        every line of it. Nothing that was at the path is dropped."""
        for _ in range(_SAVE_ROUNDS):
            later = self._put(target, want, e.new_mode, placed, e)
            if later is None:
                return
            if later.startswith(placed):  # appended to what was there: the same bytes go after what is there now
                placed, want = want, want + later[len(placed) :]
                continue
            # rewritten whole, from a copy read before or after the swap: nobody knows which, so no merge can be
            # trusted; the latest save takes the path, and what went in goes beside it unless the save holds it
            if not set(want.splitlines()) <= set(later.splitlines()):
                self._sibling(e, want)
            placed, want = want, later
        self._sibling(e, want)  # saved and saved again past every round: the path keeps the latest save
        log.warning("sync: %s kept being saved while the round rewrote it; the round's version is beside it", e.path)

    def _sibling(self, e: Entry, data: bytes) -> str:
        """A conflict sibling of the note `e` holding `data`, listed in what the round kept; its path."""
        sibling = sibling_name(e.path, self.their_host(e.path), self.now)
        stem, n = sibling[: -len(".md")], 1
        while (self.vault / sibling).exists():
            n += 1
            sibling = f"{stem}-{n}.md"
        self._put(self.vault / sibling, conflict_text(data, e.path), "100644", None)
        self.kept.append({"path": e.path, "sibling": sibling})
        return sibling

    def leftovers(self) -> list[tuple[Entry, Path]]:
        """The files a killed move left in its folder, with the entry each is for (siblings' are not kept)."""
        out = []
        for f in sorted(self.hold.iterdir()) if self.hold.is_dir() else []:
            owner = f.name.split(".", 1)[0]
            if owner.isdigit() and int(owner) < len(self.entries):
                out.append((self.entries[int(owner)], f))
            else:
                f.unlink(missing_ok=True)
        return out

    def bring_in(self, e: Entry, aside: Path) -> None:
        """A file a killed move left: the entry's old or new version is dropped; anything else is a save found
        at the path, brought in as the round would have (merged, kept beside, or put back over a deletion)."""
        data = _read(aside)
        old, new = self.blobs.get(e.old_oid), self.blobs.get(e.new_oid)
        if data is None or data in (old, new):
            aside.unlink(missing_ok=True)
            return
        target = self.vault / e.path
        if e.deleted:
            self._restore(e, target, aside)
            return
        current = _read(target)
        placed = current if current is not None else new
        if placed is None:  # nothing at the path and no version to put there: the save goes back to the path
            self._restore(e, target, aside)
            return
        aside.unlink()
        self._keep(e, target, data, old, placed)
        log.warning("sync: %s: a save a stopped process had set aside is brought in", e.path)

    def done(self) -> None:
        """The move is over: its folder goes (a save in it was brought in)."""
        shutil.rmtree(self.hold, ignore_errors=True)

    def _prune_folders(self) -> None:
        """Remove the folders the deletions left empty, as git does."""
        for e in self.entries:
            if not e.deleted:
                continue
            folder = (self.vault / e.path).parent
            while folder != self.vault:
                try:
                    folder.rmdir()
                except OSError:
                    break
                folder = folder.parent


def _journal(git: GitCli) -> Path:
    return git.gitdir / JOURNAL


def _write_journal(git: GitCli, old: str, new: str, message: str) -> None:
    path = _journal(git)
    tmp = path.with_name(JOURNAL + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"old": old, "new": new, "message": message}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(git.gitdir, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def record_move(git: GitCli, old: str, new: str, message: str) -> None:
    """Name a move of the work tree, the index and HEAD from `old` to `new` that another writer (an undo) is
    about to make its own way: a process killed before `clear_move` leaves it for `finish_unfinished`."""
    _write_journal(git, old, new, message)


def clear_move(git: GitCli) -> None:
    """The move `record_move` named is over (made, or given up before anything changed)."""
    _journal(git).unlink(missing_ok=True)


def move_with_git(git: GitCli, old: str, new: str, message: str) -> str | None:
    """The move where files cannot be swapped in one step (`exchange_available` is false): git writes them
    (`read-tree -m -u`), journalled as `move_tree` is, so a kill before HEAD moves is finished by
    `finish_unfinished`. None when moved; why nothing was moved when git would overwrite a change made meanwhile.
    Raises OSError when the files moved but HEAD could not."""
    record_move(git, old, new, message)
    git.run("update-index", "-q", "--refresh")  # stat data only, so a touched file is not taken as edited
    move = git.run("read-tree", "-m", "-u", old, new)
    if move.code != 0:
        clear_move(git)
        return f"git would not write the files without overwriting a change made meanwhile ({move.why()})"
    failpoint("tree-moved-by-git")
    ref = git.run("update-ref", "-m", message, "HEAD", new, old)
    clear_move(git)
    if ref.code != 0:
        raise OSError(errno.EIO, f"HEAD could not move to {new[:10]}: {ref.why()}")
    return None


def _index_and_head(git: GitCli, old: str, new: str, message: str, env: dict[str, str]) -> None:
    """The index entries of the paths that differ between `old` and `new` set to `new`'s, every other entry as
    it was (the person's own staging of paths the move leaves alone stays theirs), then HEAD from `old` to
    `new`. Setting them is the same whether or not an earlier, killed round set some already."""
    diff = git.run("diff-tree", "-r", "-z", "--no-renames", old, new)
    if diff.code != 0:
        raise OSError(errno.EIO, f"the synced commit's changes could not be read: {diff.why()}")
    fields = diff.out.split(b"\0")
    lines = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        _old_mode, mode, _old_oid, oid, status = meta[1:].decode().split()
        gone = status.startswith("D")
        lines.append((f"0 {'0' * len(oid)}" if gone else f"{mode} {oid}").encode() + b"\t" + path)
    if lines:
        info = git.run("update-index", "-z", "--index-info", stdin=b"\0".join(lines) + b"\0")
        if info.code != 0:
            raise OSError(errno.EIO, f"the index could not take the synced tree: {info.why()}")
    git.run("update-index", "-q", "--refresh")  # stat data for the files written (exit 1 lists none: ignored)
    failpoint("sync-index-moved")
    ref = git.run("update-ref", "-m", message, "HEAD", new, old, env=env)
    if ref.code != 0:
        raise OSError(errno.EIO, f"HEAD could not move to the synced commit: {ref.why()}")


def exchange_available(vault: Path) -> bool:
    """Whether the file system under `vault` swaps two names in one step (tried on two files in the move's
    folder, where the move makes its files)."""
    if _RENAMEAT2 is None:
        return False
    scratch = vault / ".git" / HOLD
    try:
        scratch.mkdir(exist_ok=True)
        a, b = scratch / temp_name("probe-a"), scratch / temp_name("probe-b")
        a.write_bytes(b"a")
        b.write_bytes(b"b")
        try:
            _rename2(a, b, _EXCHANGE)
            return b.read_bytes() == b"a"
        finally:
            for p in (a, b):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(p)
    except OSError:
        return False


def move_tree(
    git: GitCli,
    old: str,
    new: str,
    *,
    message: str,
    env: dict[str, str],
    their_host: Callable[[str], str],
    now: dt.datetime,
) -> MoveResult | None:
    """Move the work tree, the index and HEAD from `old` to its descendant `new` (module docstring); None
    when this module cannot (the caller lets git do it), before anything changed."""
    if not exchange_available(git.vault):
        return None
    try:
        mover = _Mover(git, _entries(git, old, new), their_host, now)
        for e in mover.entries:
            target = git.vault / e.path
            if target.is_dir() and not target.is_symlink():
                raise _Fallback(f"{e.path} is a folder here")
    except _Fallback as why:
        log.info("sync: the work tree moves through git (%s)", why)
        return None
    mover.done()  # files a finished move left (HEAD had moved: every save in them was brought in)
    _write_journal(git, old, new, message)
    paths = mover.apply()
    failpoint("sync-tree-written")
    _index_and_head(git, old, new, message, env)
    _journal(git).unlink(missing_ok=True)
    mover.done()
    return MoveResult(paths, mover.kept)


def finish_unfinished(git: GitCli, env: dict[str, str] | None = None) -> MoveResult | None:
    """Complete a move a killed process left (its journal is in the git folder); None when there was none."""
    path = _journal(git)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        old, new, message = str(data["old"]), str(data["new"]), str(data["message"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        path.unlink(missing_ok=True)  # unreadable: written only whole, so never a move's
        return None
    head = git.run("rev-parse", "--verify", "-q", "HEAD").text
    if head != old:  # HEAD moved: the move was complete but for the journal (or something else moved it)
        path.unlink(missing_ok=True)
        shutil.rmtree(git.gitdir / HOLD, ignore_errors=True)
        return None
    try:
        mover = _Mover(git, _entries(git, old, new), lambda _p: "remote", dt.datetime.now(dt.UTC))
        left = mover.leftovers()  # read before the move makes files of its own there
        paths = mover.apply()
        for entry, aside in left:
            mover.bring_in(entry, aside)
        _index_and_head(git, old, new, message, env or {})
    except (OSError, _Fallback) as exc:
        # The journal stays, so the next cycle tries again (a git lock a killed process left is gone by then, once
        # someone removes it; until then no cycle commits, as the lock stops them too). Should a cycle commit the
        # files all the same, HEAD moves and the journal is dropped: nothing is lost either way.
        log.error("the move of the work tree to %s (%s) that a stopped process left could not finish yet: %s",
                  new[:10], message, exc)  # fmt: skip
        return None
    path.unlink(missing_ok=True)
    mover.done()
    log.warning("finished the move of the work tree to %s (%s) that a stopped process left", new[:10], message)
    return MoveResult(paths, mover.kept)
