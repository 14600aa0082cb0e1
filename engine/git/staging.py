"""A commit cycle's commit objects, built in private indexes: no ref moves here (engine/git/committer.py).

Each origin group is staged with `git add` into `tmp_index` (a copy of the real index, which becomes the
published index). A file that changed while `git add` read it (`Settling.changed_while_staged`) gets its
committed entry back and waits for a later cycle, so no commit holds a copy torn mid-write. The commit trees
hold HEAD plus our paths only: straight from `tmp_index` when nobody had anything staged, otherwise from
`tree_index`, rebuilt from the parent commit and given exactly the entries `git add` produced, so the user's
staged entries never reach our commits. A group's `written` paths are staged from the bytes their writer wrote
(`git hash-object -w`, then `update-index --cacheinfo`) rather than from the file, which someone has saved over
since: the writer's commit holds the writer's bytes, and the later `local-edit` group commits the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentmd.engine.git.origins import commit_message
from agentmd.engine.git.runner import HEX_ID, CycleFailure, GitCli, plural, printable
from agentmd.engine.git.settle import Settling

__all__ = ["Commit", "Group", "Indexes", "make_commits", "reflog"]


@dataclass(frozen=True)
class Group:
    """The paths one commit takes under one origin; `written` maps some of them to the bytes to commit
    instead of what their file holds now."""

    origin: str
    paths: list[str]
    written: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Commit:
    sha: str
    origin: str
    paths: tuple[str, ...]
    written: frozenset[str] = frozenset()  # the paths committed from their writer's bytes, not from the file


@dataclass(frozen=True)
class Indexes:
    tmp: Path  # the copy of the real index that receives our paths and is published
    tree: Path  # HEAD plus exactly our entries, when the user has something staged
    user_staged: bool


def make_commits(
    git: GitCli,
    groups: list[Group],
    base: str | None,
    indexes: Indexes,
    *,
    settling: Settling,
    identity: dict[str, str],
    initial: bool,
) -> list[Commit]:
    """One commit object per origin group, chained on `base`."""
    vault = git.vault
    parent = base
    parent_tree = _tree_of(git, base) if base else None
    if indexes.user_staged and base:
        run = git.run("read-tree", base, index=indexes.tree)
        if run.code != 0:
            raise CycleFailure(f"`git read-tree HEAD` into a private index failed: {run.why()}")
    commits: list[Commit] = []
    for group in groups:
        origin = group.origin
        from_files = [p for p in group.paths if p not in group.written]
        paths = _add(git, from_files, indexes.tmp) if from_files else []
        moved = settling.changed_while_staged(vault, paths)
        if moved:
            _put_back(git, moved, indexes.tmp, base)
            paths = [p for p in paths if p not in moved]
        if group.written:
            _stage_bytes(git, group.written, indexes.tmp)
            paths = sorted([*paths, *group.written])
        if not paths:
            continue
        if indexes.user_staged:
            _copy_entries(git, paths, indexes.tmp, indexes.tree, parent)
        run = git.run("write-tree", index=indexes.tree if indexes.user_staged else indexes.tmp)
        if run.code != 0:
            raise CycleFailure(f"`git write-tree` failed: {run.why()}")
        tree = run.text
        if tree == parent_tree:
            continue  # the files went back to their committed content before we read them
        args = ["commit-tree", tree, "--no-gpg-sign", "-F", "-"]
        if parent:
            args[2:2] = ["-p", parent]
        message = commit_message(origin, paths, initial=initial)
        run = git.run(*args, env=identity, stdin=message.encode("utf-8"))
        if run.code != 0 or not HEX_ID.fullmatch(run.text):
            raise CycleFailure(f"`git commit-tree` ({origin}, {plural(len(paths), 'path')}) failed: {run.why()}")
        commits.append(Commit(run.text, origin, tuple(paths), frozenset(group.written)))
        parent, parent_tree = run.text, tree
    return commits


def _spec(paths: Sequence[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


def _add(git: GitCli, paths: list[str], index: Path) -> list[str]:
    """`git add` the paths into `index`; the ones it staged (a new file that vanished meanwhile is left out)."""
    run = git.run("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", index=index, stdin=_spec(paths))
    if run.code != 0 and "did not match any files" in run.why():
        # A new file vanished between `git status` and `git add` (an editor's temp file, a sync
        # client's staging copy): leave it out and add the rest; the next cycle sees the new state.
        present = [p for p in paths if os.path.lexists(os.path.join(git.vault, p))]
        tracked = git.run("ls-files", "-z", "--", *[p for p in paths if p not in present], index=index)
        keep = set(present)
        if tracked.code == 0:
            keep |= {os.fsdecode(x) for x in tracked.out.split(b"\0") if x}
        paths = [p for p in paths if p in keep]
        if not paths:
            return []
        run = git.run("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", index=index, stdin=_spec(paths))
    if run.code != 0:
        raise CycleFailure(f"`git add` of {plural(len(paths), 'path')} failed: {run.why()}")
    return paths


def _stage_bytes(git: GitCli, written: dict[str, bytes], index: Path) -> None:
    """Stage each path's given bytes into `index`, as `git add` would have staged a file holding them (the
    path's attributes and filters apply), as a regular file."""
    lines = []
    for path, data in sorted(written.items()):
        run = git.run("hash-object", "-w", "--stdin", f"--path={path}", stdin=data)
        if run.code != 0 or not HEX_ID.fullmatch(run.text):
            raise CycleFailure(f"`git hash-object` of the bytes written to {printable(path)} failed: {run.why()}")
        lines.append(f"100644 {run.text}\t".encode() + os.fsencode(path))
    run = git.run("update-index", "-z", "--add", "--index-info", index=index, stdin=b"\0".join(lines) + b"\0")
    if run.code != 0:
        raise CycleFailure(f"`git update-index --index-info` failed: {run.why()}")


def _put_back(git: GitCli, paths: list[str], index: Path, base: str | None) -> None:
    """Give `paths` in `index` their entries from `base` again (none: not in the index). A path the cycle
    stages had no entry of the user's own, so this is the entry it had before `git add`."""
    how = ["reset", "--quiet", base] if base else ["rm", "--cached", "--quiet", "--ignore-unmatch"]
    run = git.run(*how, "--pathspec-from-file=-", "--pathspec-file-nul", index=index, stdin=_spec(paths))
    if run.code != 0:
        raise CycleFailure(f"putting back {plural(len(paths), 'path')} changed while staged failed: {run.why()}")


def _tree_of(git: GitCli, commit: str) -> str:
    run = git.run("rev-parse", "--verify", f"{commit}^{{tree}}")
    if run.code != 0:
        raise CycleFailure(f"cannot read the tree of HEAD {commit[:12]}: {run.why()}")
    return run.text


def _copy_entries(git: GitCli, paths: list[str], source: Path, target: Path, parent: str | None) -> None:
    """Give `target` exactly the entries `source` holds for `paths` (absent there means removed)."""
    run = git.run("ls-files", "--stage", "-z", index=source)
    if run.code != 0:
        raise CycleFailure(f"`git ls-files` of the private index failed: {run.why()}")
    wanted = set(paths)
    lines: list[bytes] = []
    for record in run.out.split(b"\0"):
        raw_path = record.partition(b"\t")[2]
        if raw_path and os.fsdecode(raw_path) in wanted:
            wanted.discard(os.fsdecode(raw_path))
            lines.append(record)
    if parent:  # mode 0 removes the entry: the path was deleted in the worktree
        zero = "0" * len(parent)
        lines.extend(f"0 {zero}\t".encode() + os.fsencode(p) for p in sorted(wanted))
    if not lines:
        return
    run = git.run("update-index", "-z", "--index-info", index=target, stdin=b"\0".join(lines) + b"\0")
    if run.code != 0:
        raise CycleFailure(f"`git update-index --index-info` failed: {run.why()}")


def reflog(commits: Sequence[Commit], base: str | None) -> str:
    kind = "commit (initial)" if base is None else "commit"
    if len(commits) == 1:
        return f"{kind}: {commit_message(commits[0].origin, commits[0].paths).splitlines()[0]}"
    return f"{kind}: agentmd, {len(commits)} commits ({', '.join(c.origin for c in commits)})"
