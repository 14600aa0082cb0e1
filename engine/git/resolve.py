"""Ending one conflict a sync left, by the person's choice: `agentmd resolve PATH --keep mine|theirs|both`
and the page's resolve button."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from agentmd.engine.git.conflicts import conflict_pairs, holds_own_version, still_conflict, unmarked
from agentmd.engine.git.rescue import RescueError, keep_rescue
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync import SyncError
from agentmd.engine.git.sync_merge import merge_favouring
from agentmd.engine.settings import host_name

KEEP = ("mine", "theirs", "both")


def resolve_conflict(vault: Path, state_dir: Path, path: str, keep: str) -> tuple[str, str, list[str]]:
    """End one conflict a sync left: `path` names the sibling (or the note, when it has one sibling).
    `mine` keeps the note's text where the two versions conflict, `theirs` the sibling's, and either keeps what
    only the other version changed (a three-way merge from the versions' common ancestor, read from the merge
    that set the sibling aside; without one, the chosen version whole), then deletes the sibling; `both` keeps
    the sibling as a note of its own. Where the sibling holds this machine's own version (another
    machine's merge set it aside), `mine` and `theirs` name it the other way round: mine is this machine's
    text. `path` may also name a file-sync tool's conflict copy
    (`Note.sync-conflict-….md`, `Note (1).md` … beside `Note.md`, engine/synctools.py): `mine` deletes the
    copy, `theirs` puts its text in the note, `both` keeps it as `Note (kept copy).md`, indexed as a note.
    The origin of every path written is recorded first (the shared journal), so the commit that takes them
    says `origin: resolve`. The tip before the choice is kept as a rescue ref (`agentmd.engine.git.rescue`).
    Returns (note, sibling, paths changed)."""
    from agentmd.engine.fsutil import atomic_write
    from agentmd.engine.git.origins import JOURNAL_NAME, OriginBook

    if keep not in KEEP:
        raise SyncError(f"--keep takes {', '.join(KEEP)}, not {keep!r}")
    found = [p for p in conflict_pairs(vault, state_dir) if path in p]
    if not found and (copy := _sync_tool_copy(vault, path)) is not None:
        found = [copy]
    if not found:
        raise SyncError(f"{path} is no conflict a sync left (`agentmd conflicts` lists them)")
    if len(found) > 1:
        names = ", ".join(s for _, s in found)
        raise SyncError(f"{path} has {len(found)} conflict siblings: name the one to resolve ({names})")
    note, sibling = found[0]
    if keep != "both" and holds_own_version(vault, sibling):  # "mine" is this machine's text, wherever a merge put it
        keep = "theirs" if keep == "mine" else "mine"
    git = GitCli(vault)
    head = git.run("rev-parse", "--verify", "-q", "HEAD").text or None
    if head is not None:
        try:
            keep_rescue(git, head, host_name(), dt.datetime.now(dt.UTC), why=f"before resolve {keep} of {note}")
        except RescueError as exc:
            raise SyncError(f"nothing was resolved: {exc}") from None
    book = OriginBook(state_dir / JOURNAL_NAME)
    text = (vault / sibling).read_text(encoding="utf-8")
    plain = unmarked(text)
    if keep == "both" and not still_conflict(vault / sibling):  # a file-sync tool's copy: a name of its own
        kept = _free_name(vault, note)
        book.note(sibling, "resolve")
        book.note(kept, "resolve")
        atomic_write(vault / kept, plain)
        (vault / sibling).unlink()
        return note, kept, [sibling, kept]
    if keep == "both":
        book.note(sibling, "resolve")
        atomic_write(vault / sibling, plain)
        return note, sibling, [sibling]
    current = (vault / note).read_text(encoding="utf-8") if (vault / note).is_file() else None
    if current is None and keep == "theirs":  # a second note at the old name would be a duplicate
        raise SyncError(
            f"{note} is no longer there (renamed or deleted since the sync); nothing was resolved. Keep the sibling "
            f"as a note of its own (`--keep both`), or copy what you want from it into the note and drop it "
            f"(`--keep mine` deletes {sibling})"
        )
    book.note(sibling, "resolve")
    base = _base_text(git, note, sibling)
    chosen = plain if keep == "theirs" else current
    if current is not None and base is not None:
        merged = merge_favouring(git, base, current, plain, favour="ours" if keep == "mine" else "theirs")
        chosen = merged if merged is not None else chosen
    changed = [sibling]
    if chosen is not None and chosen != current:
        book.note(note, "resolve")
        atomic_write(vault / note, chosen)
        changed.insert(0, note)
    (vault / sibling).unlink()
    return note, sibling, changed


def _base_text(git: GitCli, note: str, sibling: str) -> str | None:
    """The note as it was where the two versions of a conflict parted: in the merge base of the two parents of
    the merge commit that made the sibling, the merge neither of whose parents holds it (a later merge of a
    branch made before it also brings the sibling in, from one parent, and `git log -m` lists that one as adding
    it as well). "" when the note did not exist there; None when no such merge is found (a sibling not committed
    yet, a history rewritten since)."""
    added = git.run("log", "-m", "--diff-filter=A", "--format=%H %P", "--", sibling)
    parents: list[str] = []
    for line in dict.fromkeys(added.text.splitlines() if added.code == 0 else []):  # once per parent: one each
        _sha, *those = line.split()
        if len(those) == 2 and not any(git.run("cat-file", "-e", f"{p}:{sibling}").code == 0 for p in those):
            parents = those
            break
    if len(parents) != 2:
        return None
    base = git.run("merge-base", *parents)
    if base.code != 0 or not base.text:
        return None
    shown = git.run("show", f"{base.text}:{note}")
    if shown.code != 0:
        return ""
    try:
        return shown.out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _sync_tool_copy(vault: Path, path: str) -> tuple[str, str] | None:
    """(original, copy) when `path` is a file-sync tool's conflict copy beside its original
    (engine/synctools.py), or the original of exactly one such copy; else None."""
    from agentmd.engine.synctools import ambiguous_copy, conflict_copy

    def exists(rel: str) -> bool:
        return (vault / rel).is_file()

    def read(rel: str) -> bytes | None:
        try:
            return (vault / rel).read_bytes()
        except OSError:
            return None

    if exists(path):
        found = ambiguous_copy(path, exists, read) or conflict_copy(path)
        if found is not None and exists(found.original):
            return found.original, path
    return None


def _free_name(vault: Path, note: str) -> str:
    """A name beside `note` for a copy kept as a note of its own: `Note (kept copy).md`, then `(kept copy 2)`…"""
    stem, dot, ext = note.rpartition(".")
    stem, ext = (stem, dot + ext) if dot else (note, "")
    for n in range(1, 1000):
        name = f"{stem} (kept copy{'' if n == 1 else f' {n}'}){ext}"
        if not (vault / name).exists():
            return name
    raise SyncError(f"no free name for a kept copy beside {note}; rename the copy by hand")
