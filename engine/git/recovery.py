"""Finishing a commit cycle that a crash interrupted between publishing the index and moving HEAD.

Before the committer publishes a new index it records its intent in `commit-intent.json` in the state
folder, fsynced: HEAD's old value, the new commit, and for each of its paths the index entry it staged
(`<mode> <oid>`, or null for a removal). The record is deleted once HEAD has moved. A record still there at
the next cycle means the cycle never finished: if HEAD is the new commit, it did finish after all;
otherwise every path whose index entry is still exactly what agentmd staged, and differs from HEAD, is
reset to HEAD in the index. Those notes become plain unstaged changes again and the same cycle commits
them, under the origins kept in the origin journal. An entry the user has staged since (anything that is
not agentmd's entry) is theirs and stays as it is.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from agentmd.engine.fsutil import atomic_write, read_json
from agentmd.engine.git.lock import IndexLock, make_private_index, private_index_path
from agentmd.engine.git.runner import CycleFailure, GitCli, listing, plural

INTENT_NAME = "commit-intent.json"


def index_entries(git: GitCli, index: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """`<mode> <oid>` of each path's stage-0 entry in `index` (None when it has none)."""
    wanted = set(paths)
    run = git.run("ls-files", "--stage", "-z", index=index)
    if run.code != 0:
        raise CycleFailure(f"`git ls-files --stage` failed: {run.why()}")
    found: dict[str, str | None] = dict.fromkeys(wanted)
    for record in run.out.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = os.fsdecode(raw)
        if path in wanted:
            mode, oid, stage = os.fsdecode(meta).split()
            if stage == "0":
                found[path] = f"{mode} {oid}"
    return found


def tree_entries(git: GitCli, commit: str | None, paths: Iterable[str]) -> dict[str, str | None]:
    wanted = set(paths)
    found: dict[str, str | None] = dict.fromkeys(wanted)
    if commit is None:
        return found
    run = git.run("ls-tree", "-r", "-z", "--full-tree", commit)
    if run.code != 0:
        raise CycleFailure(f"`git ls-tree` of {commit[:12]} failed: {run.why()}")
    for record in run.out.split(b"\0"):
        meta, _, raw = record.partition(b"\t")
        path = os.fsdecode(raw)
        if path in wanted:
            mode, _kind, oid = os.fsdecode(meta).split()
            found[path] = f"{mode} {oid}"
    return found


def write_intent(path: Path, base: str | None, new: str, entries: dict[str, str | None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"base": base, "new": new, "entries": entries}, sort_keys=True), mode=0o600)


def clear_intent(path: Path) -> None:
    """Not synced: a record that outlives its commit finds HEAD at its new value, or its entries committed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def head_of(git: GitCli) -> str | None:
    run = git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return run.text if run.code == 0 and run.text else None


def recover(git: GitCli, intent: Path, lock: IndexLock) -> list[str]:
    """Undo agentmd's half of an interrupted cycle (see the module docstring); lines saying what was done."""
    record = read_json(intent)
    if record is None:
        if intent.exists():
            clear_intent(intent)
            return [f"removed an unreadable commit record {intent}"]
        return []
    raw = record.get("entries")
    entries = {str(k): (str(v) if v is not None else None) for k, v in raw.items()} if isinstance(raw, dict) else {}
    head = head_of(git)
    if head is not None and head == record.get("new"):
        clear_intent(intent)
        return []
    now = index_entries(git, git.index, entries)
    committed = tree_entries(git, head, entries)
    ours = sorted(p for p, staged in entries.items() if now.get(p) == staged and staged != committed.get(p))
    if ours:
        problem = unstage(git, lock, ours, head)
        if problem:
            raise CycleFailure(f"could not finish the commit interrupted by a crash: {problem}")
    clear_intent(intent)
    if not ours:
        return []
    return [
        f"a crash interrupted a commit after the index was updated: reset {plural(len(ours), 'path')} agentmd had "
        f"staged ({listing(ours, 5)}) to unstaged changes, to be committed now"
    ]


def unstage(git: GitCli, lock: IndexLock, paths: list[str], head: str | None) -> str | None:
    """Reset `paths` in the real index to `head` under the held `lock`; None when done, else what went wrong."""
    tmp_index = private_index_path(git.gitdir)
    try:
        make_private_index(git, tmp_index, has_head=head is not None, lock=lock)
        spec = b"".join(os.fsencode(p) + b"\0" for p in paths)
        how = ["reset", "--quiet", head] if head else ["rm", "--cached", "--quiet", "--ignore-unmatch"]
        run = git.run(*how, "--pathspec-from-file=-", "--pathspec-file-nul", index=tmp_index, stdin=spec)
        if run.code not in (0, 1):
            return f"unstaging them failed ({run.why()}); run `git reset -q -- <paths>`"
        lock.publish(tmp_index, git.index)
        return None
    except (CycleFailure, OSError) as exc:
        return f"unstaging them failed ({exc}); run `git reset -q -- <paths>`"
    finally:
        for name in (tmp_index, Path(f"{tmp_index}.lock")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
