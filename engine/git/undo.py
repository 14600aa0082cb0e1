"""Undo: the vault's git history as an undo a person can use without knowing git.

Four ways to name what to take back (`Selection`):

* `undo` (`agentmd undo [-n N]`): the last N changes made on this machine: commits whose `host:` trailer is
  this machine's, that are not merges (a sync's merge is no change of its own) and that are not themselves
  undos. A change an undo already took back is skipped, so `agentmd undo` run twice takes back the last change
  and then the one before it; it never undoes the undo. To take an undo back, revert its commit by hash.
* `revert` (`agentmd revert COMMIT…`): those commits, whatever made them (an undo's own commit too: that
  brings back what it took away). A merge or the first commit cannot be reverted.
* `origin` (`agentmd revert --origin O --since D`): every commit of that origin (`enrich`, `capture`, …)
  since D that is not a merge and not already undone: everything an agent or a night wrote.
* `restore` (`agentmd restore PATH --to DATE|COMMIT`): the note's bytes as they were at that commit (or at the
  last commit at or before that time); a note deleted since comes back.

How a revert is computed. Nothing is edited by hand: each commit C is taken back as `git revert` would, by a
three-way merge of trees with C as the base, the tree so far as ours and C's parent as theirs, newest commit
first. git 2.39 has no `merge-tree --merge-base`, so the three trees are given to `git merge-tree
--write-tree` as three throwaway commits (a base commit and two children); renames are followed as `git revert`
follows them (a note moved and then edited goes back to its old name with the edit). Where the merge
conflicts, no marker ever reaches a note:

* a note changed since on other lines, or on other frontmatter keys, is merged as a note
  (`sync_merge.merge_note`, as a sync does);
* a note whose later edit touched the same lines keeps its current text at its path, and the text the undo
  would have written becomes a conflict sibling beside it (`conflicts.sibling_name` with `undo`,
  `conflicts.conflict_text`), listed in the one list of conflicts (`agentmd conflicts`, the review queue)
  until `agentmd resolve` ends it;
* a note the undo would delete but that was edited since is kept (the plan says so: delete it by hand if it
  should go), and a file that is not a note keeps its current bytes (the plan names the commit to take the
  other version from).

How it is written. The plan is the new commit's tree; writing it is one new commit on top of HEAD (history is
never rewritten), with the message `revert: …` naming the undone commits' short hashes and subjects and the
trailers `origin: revert`, `host:` and one `reverts: <hash>` per commit (a restore says `restores: <hash>`).
The work tree, the index and HEAD move to that commit as a sync round moves them (`git read-tree -m -u`, then
`git update-ref` with HEAD's old value checked), so only the paths the undo changes are written, and git
refuses to overwrite a file changed meanwhile. Before that, the paths' origin is recorded as `revert` in the
shared origin journal: should HEAD fail to move after the files were written, the next commit cycle commits
them as `origin: revert`; when it moves, the registrations end at once. It runs with the committer paused
(`Committer.paused`): the daemon's own committer when a daemon runs (`POST /v1/revert`), else the command's.

Refusals (nothing written): the paths the undo would change have uncommitted edits (let the daemon commit them,
or commit them, then undo again), a person's git operation is in progress, the vault has no commits, or a
commit named is unknown, a merge, the first commit or not in the branch's history. The corpus-write gate is
not asked: an undo touches only its own paths and checks exactly those.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentmd.engine.errors import UsageError
from agentmd.engine.git.branches import checked, commit_at
from agentmd.engine.git.busy import operation_in_progress
from agentmd.engine.git.changes import read_status
from agentmd.engine.git.conflicts import conflict_text, record_conflicts, sibling_name
from agentmd.engine.git.lock import private_index_path
from agentmd.engine.git.runner import HEX_ID, CycleFailure, GitCli, listing, plural
from agentmd.engine.git.runner import since as git_since
from agentmd.engine.git.sync_merge import merge_note
from agentmd.engine.git.tree_move import move_tree, move_with_git
from agentmd.engine.git.undo_types import (
    FileChange,
    Selection,
    Target,
    UndoPlan,
    UndoRefused,
    UndoResult,
)
from agentmd.engine.settings import host_name

if TYPE_CHECKING:
    from agentmd.engine.git.committer import Committer

ORIGIN = "revert"
_REC, _SEP = "\x1e", "\x1f"
_FORMAT = (
    f"{_REC}%H{_SEP}%P{_SEP}%cI{_SEP}%s{_SEP}%(trailers:key=origin,valueonly,separator=%x2C)"
    f"{_SEP}%(trailers:key=host,valueonly,separator=%x2C){_SEP}%(trailers:key=reverts,valueonly,separator=%x2C)"
)
_PAGE = 500


# -- reading history --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    sha: str
    parents: tuple[str, ...]
    at: str
    subject: str
    origin: str
    host: str
    reverts: tuple[str, ...]

    def target(self) -> Target:
        return Target(self.sha, self.at, self.subject, self.origin or "manual", self.host)


def _first(value: str) -> str:
    return value.strip().split(",")[0].strip()


def _entries(git: GitCli, *args: str, revs: tuple[str, ...] = ("HEAD",)) -> Iterator[_Entry]:
    """The commits of `revs` (the branch), newest first, read a page at a time."""
    skip = 0
    while True:
        run = git.run(
            "log", f"--format={_FORMAT}", f"--max-count={_PAGE}", f"--skip={skip}", *args, *revs,
            optional_locks=False,
        )  # fmt: skip
        if run.code != 0:
            raise UndoRefused(f"could not read the vault's history: {run.why()}")
        records = [r for r in run.out.decode("utf-8", "replace").split(_REC) if r.strip()]
        for record in records:
            parts = record.rstrip("\n").split(_SEP)
            if len(parts) < 7:
                continue
            sha, parents, at, subject, origin, host, reverts = parts[:7]
            revs = tuple(r.strip() for r in reverts.split(",") if HEX_ID.fullmatch(r.strip()))
            yield _Entry(sha, tuple(parents.split()), at, subject, _first(origin), _first(host), revs)
        if len(records) < _PAGE:
            return
        skip += _PAGE


class UndoneTracker:
    """Which commits a later undo took back, learnt walking history newest first (`see` each commit in turn):
    an undo's own commit marks the commits its `reverts:` trailers name, unless it was itself reverted."""

    def __init__(self) -> None:
        self.by: dict[str, str] = {}  # an undone commit -> the commit that undid it

    def see(self, sha: str, origin: str, reverts: Iterable[str]) -> bool:
        """Whether the commit `sha` is live (not taken back by a newer commit seen before it)."""
        if sha in self.by:
            return False
        if origin == ORIGIN:
            for undone in reverts:
                self.by.setdefault(undone, sha)
        return True


def _live(entries: Iterator[_Entry]) -> Iterator[_Entry]:
    """The entries not taken back by a later undo (`UndoneTracker`)."""
    tracker = UndoneTracker()
    for entry in entries:
        if tracker.see(entry.sha, entry.origin, entry.reverts):
            yield entry


def _select(git: GitCli, selection: Selection) -> list[Target]:
    """The commits a revert takes back, newest first."""
    if selection.kind == "undo":
        here = host_name()
        found: list[Target] = []
        for e in _live(_entries(git, "--no-merges")):
            # the daemon's self-probe writes and removes a note of its own: it is nobody's change to take back
            if e.origin not in (ORIGIN, "self-probe") and e.host == here and len(e.parents) == 1:
                found.append(e.target())
                if len(found) == selection.count:
                    break
        if not found:
            raise UndoRefused(
                f"nothing to undo: no change made on this machine ({here}) is left in the vault's history that "
                "an undo has not already taken back (`agentmd log` lists the changes; `agentmd revert HASH` takes "
                "back any one of them)"
            )
        return found
    if selection.kind == "origin":
        if not selection.origin:
            raise UsageError("name the origin whose commits to revert: --origin enrich, capture, groom, …")
        args = ["--no-merges"] + ([git_since(selection.since)] if selection.since else [])
        live = [e for e in _live(_entries(git, *args)) if e.origin == selection.origin and len(e.parents) == 1]
        if not live:
            since = f" since {selection.since}" if selection.since else ""
            raise UndoRefused(f"nothing to revert: no commit of origin {selection.origin}{since} is left undone")
        return [e.target() for e in live]
    return _named(git, selection.commits)


def _named(git: GitCli, names: tuple[str, ...]) -> list[Target]:
    if not names:
        raise UsageError("name the commits to revert (hashes, as `agentmd log` prints them)")
    shas: list[str] = []
    for name in names:
        sha = commit_at(git, name)
        if sha is None:
            raise UndoRefused(f"{name} is no commit of the vault's history (`agentmd log` lists them)")
        if git.run("merge-base", "--is-ancestor", sha, "HEAD").code != 0:
            raise UndoRefused(f"{name} is not in the history of the vault's current branch")
        parents = git.run("rev-list", "--parents", "-n", "1", sha).text.split()[1:]
        if len(parents) != 1:
            what = "the vault's first commit" if not parents else "a merge (a sync's), not a change of its own"
            raise UndoRefused(f"{name} is {what}; it cannot be reverted: revert the changes it holds instead")
        shas.append(sha)
    order = git.run("rev-list", "--no-walk=sorted", *dict.fromkeys(shas)).text.split()
    by_sha = {e.sha: e for e in _entries(git, "--no-walk=sorted", revs=tuple(order))} if order else {}
    return [by_sha[s].target() for s in order if s in by_sha]


# -- computing the tree -----------------------------------------------------------------------------------


class _Builder:
    """The trees of one plan: reverts applied one after the other, conflicts decided as the docstring says."""

    def __init__(self, git: GitCli, identity: dict[str, str], now: dt.datetime) -> None:
        self.git = git
        self.identity = identity
        self.now = now
        self.conflicts: list[dict[str, str]] = []
        self.taken: set[str] = set()  # sibling names given in this plan

    def tree_of(self, rev: str) -> str:
        return checked(
            self.git.run("rev-parse", "--verify", f"{rev}^{{tree}}"), f"reading the tree of {rev[:10]}", UndoRefused
        )

    def _commit(self, tree: str, *parents: str) -> str:
        args = ["commit-tree", tree, "--no-gpg-sign", "-m", "agentmd undo: a step of a three-way merge"]
        for p in parents:
            args += ["-p", p]
        return checked(self.git.run(*args, env=self.identity), "`git commit-tree`", UndoRefused)

    def revert(self, tree: str, target: Target) -> str:
        """`tree` with `target`'s change taken back."""
        base, theirs = self.tree_of(target.sha), self.tree_of(f"{target.sha}^")
        if tree == base:
            return theirs  # nothing changed since: the parent's tree is the answer
        root = self._commit(base)
        run = self.git.run(
            "merge-tree", "--write-tree", "-z", "--no-messages",
            self._commit(tree, root), self._commit(theirs, root),
        )  # fmt: skip
        if run.code not in (0, 1):
            raise UndoRefused(f"`git merge-tree` failed: {run.why()}")
        fields = run.out.split(b"\0")
        merged = os.fsdecode(fields[0])
        if run.code == 0:
            return merged
        stages: dict[str, dict[int, tuple[str, str]]] = {}
        for raw in fields[1:]:
            if not raw:
                break
            info, _, path = raw.partition(b"\t")
            mode, oid, stage = info.decode().split()
            stages.setdefault(os.fsdecode(path), {})[int(stage)] = (mode, oid)
        return self._decide(merged, stages, target)

    def _blob(self, oid: str) -> bytes:
        run = self.git.run("cat-file", "blob", oid)
        if run.code != 0:
            raise UndoRefused(f"could not read a file of the history ({oid[:10]}): {run.why()}")
        return run.out

    def _store(self, data: bytes) -> str:
        return checked(self.git.run("hash-object", "-w", "--stdin", stdin=data), "writing a file into git", UndoRefused)

    def _decide(self, tree: str, stages: dict[str, dict[int, tuple[str, str]]], target: Target) -> str:
        lines: list[str] = []
        for path, by_stage in sorted(stages.items()):
            mine, other, common = by_stage.get(2), by_stage.get(3), by_stage.get(1)
            note = path.lower().endswith(".md")
            if common is None and mine is not None and other is not None:  # a deletion undone since: back already
                lines.append(f"{mine[0]} {mine[1]}\t{path}")
                how = "back since the undone deletion (a later change brought it back); nothing to take back"
                self.conflicts.append({"path": path, "kept": "current", "undone": target.sha, "how": how})
                continue
            if mine is not None and other is not None and common is not None and note:
                merged = merge_note(self.git, *(self._blob(v[1]) for v in (common, mine, other)))
                if merged is not None:  # a later edit of other keys or lines: merged as a note
                    lines.append(f"{mine[0]} {self._store(merged)}\t{path}")
                    continue
            if mine is not None:
                lines.append(f"{mine[0]} {mine[1]}\t{path}")  # the note keeps its current text
            if other is not None and note:
                sibling = self._sibling(tree, path)
                blob = self._store(conflict_text(self._blob(other[1]), path))
                lines.append(f"{other[0]} {blob}\t{sibling}")
                self.conflicts.append({"path": path, "sibling": sibling, "undone": target.sha})
            elif other is not None:
                how = f"the undone version is `git show {target.sha[:10]}^:{path}`"
                self.conflicts.append({"path": path, "kept": "current", "undone": target.sha, "how": how})
            elif mine is not None:
                how = "edited since the undone change; delete it yourself if it should go"
                self.conflicts.append({"path": path, "kept": "current", "undone": target.sha, "how": how})
        index = private_index_path(self.git.gitdir)
        try:
            checked(self.git.run("read-tree", tree, index=index), "reading the merged tree", UndoRefused)
            clear = "".join(f"0 {'0' * len(tree)}\t{p}\0" for p in stages).encode()
            feed = "".join(f"{line}\0" for line in lines).encode()
            checked(
                self.git.run("update-index", "-z", "--index-info", index=index, stdin=clear + feed),
                "update-index",
                UndoRefused,
            )
            return checked(self.git.run("write-tree", index=index), "`git write-tree`", UndoRefused)
        finally:
            index.unlink(missing_ok=True)

    def _sibling(self, tree: str, path: str) -> str:
        name = sibling_name(path, "undo", self.now)
        n = 1
        while name in self.taken or self.git.run("cat-file", "-e", f"{tree}:{name}").code == 0:
            n += 1
            name = sibling_name(path, "undo", self.now)[: -len(".md")] + f"-{n}.md"
        self.taken.add(name)
        return name

    def restore(self, head: str, path: str, source: str) -> str:
        """HEAD's tree with `path` as it was at `source`."""
        found = self._blob_at(source, path) or self._blob_at(source, self._name_at(path, source))
        if found is None:
            raise UndoRefused(
                f"{path} was not a file at {source[:10]}; `agentmd log {shlex.quote(path)}` lists the versions it had"
            )
        mode, oid = found
        index = private_index_path(self.git.gitdir)
        try:
            checked(self.git.run("read-tree", head, index=index), "reading HEAD's tree", UndoRefused)
            feed = f"{mode} {oid}\t{path}\0".encode()
            checked(
                self.git.run("update-index", "-z", "--index-info", index=index, stdin=feed), "update-index", UndoRefused
            )
            return checked(self.git.run("write-tree", index=index), "`git write-tree`", UndoRefused)
        finally:
            index.unlink(missing_ok=True)

    def _blob_at(self, rev: str, path: str | None) -> tuple[str, str] | None:
        """(mode, blob id) of the file `path` in `rev`'s tree, or None."""
        if not path:
            return None
        run = self.git.run("ls-tree", "-z", "--full-tree", rev, "--", path)
        entry = run.out.split(b"\0")[0] if run.code == 0 else b""
        info, _, found = entry.partition(b"\t")
        if not found or os.fsdecode(found) != path or info.split()[1:2] != [b"blob"]:
            return None
        mode, _kind, oid = info.decode().split()
        return mode, oid

    def _name_at(self, path: str, rev: str) -> str | None:
        """The name the note now at `path` had in `rev`, following its renames as `agentmd log` does."""
        run = self.git.run("log", "--follow", "-M90%", "-z", "--name-only", "--format=%x01%H", "HEAD", "--", path)
        if run.code != 0:
            return None
        for record in os.fsdecode(run.out).split("\x01")[1:]:  # `<hash>\0\n<name>\0` a commit
            sha, _, rest = record.partition("\0")
            name = rest.lstrip("\n").split("\0")[0]
            if name and self.git.run("merge-base", "--is-ancestor", sha, rev).code == 0:
                return name  # the newest change to it that `rev` holds names it as it was there
        return None


def _restore_source(git: GitCli, selection: Selection) -> Target:
    """The commit whose version of the note a restore brings back."""
    sha = commit_at(git, selection.to) if selection.to else None  # a commit first (`1234d` is a hash, not an age)
    if sha is None and selection.at:
        sha = git.run("log", "-1", "--format=%H", f"--before={selection.at}", "HEAD").text or None
        if sha is None:
            raise UndoRefused(f"the vault has no commit at or before {selection.at}")
    if sha is None:
        raise UndoRefused(
            f"--to {selection.to or ''}: neither a commit of the vault nor a time (give a hash `agentmd log` prints, "
            "a date such as 2026-11-30, a date-time or an age such as 3d)"
        )
    return next(_entries(git, "--no-walk", revs=(sha,))).target()


def _changes(git: GitCli, old: str, new: str) -> list[FileChange]:
    names = git.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
    stats = git.run("diff-tree", "-r", "-z", "--no-renames", "--numstat", old, new)
    if names.code != 0 or stats.code != 0:
        raise UndoRefused(f"could not compare the trees: {(names if names.code else stats).why()}")
    parts = names.out.split(b"\0")
    status = {os.fsdecode(parts[i + 1]): parts[i].decode()[:1] for i in range(0, len(parts) - 1, 2)}
    counts: dict[str, tuple[int | None, int | None]] = {}
    for record in stats.out.split(b"\0"):
        cols = record.split(b"\t", 2)
        if len(cols) == 3:
            added, removed = (int(c) if c.isdigit() else None for c in cols[:2])
            counts[os.fsdecode(cols[2])] = (added, removed)
    return [FileChange(p, s, *counts.get(p, (None, None))) for p, s in sorted(status.items())]


def _message(selection: Selection, targets: list[Target], conflicts: list[dict[str, str]], undone: list[Target]) -> str:
    host = host_name()
    if selection.kind == "restore":
        source = targets[0]
        summary = f"revert: restore {selection.path} as of {source.sha[:10]} ({source.at})"
        return f"{summary}\n\norigin: {ORIGIN}\nhost: {host}\nrestores: {source.sha}\n"
    if len(targets) == 1:
        summary = f"revert: {targets[0].sha[:10]} ({targets[0].subject})"
    else:
        summary = f"revert: {plural(len(targets), 'change')} ({', '.join(t.sha[:10] for t in targets[:5])}"
        summary += ", …)" if len(targets) > 5 else ")"
    body = "".join(f"{t.sha[:10]} {t.subject}\n" for t in targets)
    body += "".join(f"conflict: {c['path']} kept; the undone version is {c['sibling']}\n" for c in conflicts
                    if c.get("sibling"))  # fmt: skip
    body += "".join(f"kept whole, edited since: {t.sha[:10]}\n" for t in targets if t not in undone)
    trailers = f"origin: {ORIGIN}\nhost: {host}\n" + "".join(f"reverts: {t.sha}\n" for t in undone)
    return f"{summary}\n\n{body}\n{trailers}"


def make_plan(vault: Path, selection: Selection, identity: dict[str, str], now: dt.datetime) -> UndoPlan:
    """The undo's commit tree and what it changes; only objects are written into git, never a file."""
    git = GitCli(vault)
    head = commit_at(git, "HEAD")
    if head is None:
        raise UndoRefused("the vault's repository has no commit yet: there is nothing to undo")
    builder = _Builder(git, identity, now)
    if selection.kind == "restore":
        if not selection.path:
            raise UsageError("name the note to restore")
        source = _restore_source(git, selection)
        tree, targets = builder.restore(head, selection.path, source.sha), [source]
        taken = targets
    else:
        targets = _select(git, selection)
        tree = builder.tree_of(head)
        taken = []  # the targets whose change was taken back, at least in part
        for target in targets:
            before, tree = tree, builder.revert(tree, target)
            if tree != before:
                taken.append(target)
    plan = UndoPlan(selection, head, tree, targets, _changes(git, head, tree), builder.conflicts)
    # a change kept whole (each file of it edited since) gets no `reverts:` trailer: the log does not show it as
    # undone, and a later undo may still take it back
    plan.message = _message(selection, targets, builder.conflicts, taken)
    return plan


# -- writing it -------------------------------------------------------------------------------------------


def _refuse_dirty(git: GitCli, paths: list[str]) -> None:
    try:
        entries = read_status(git)
    except CycleFailure as exc:
        raise UndoRefused(f"cannot read the work tree's state: {exc}") from None
    dirty = sorted(
        {p for p in paths for e in entries if p == e.path or (e.path.endswith("/") and p.startswith(e.path))}
    )
    if dirty:
        raise UndoRefused(
            f"nothing was undone: {plural(len(dirty), 'path')} it would change {'has' if len(dirty) == 1 else 'have'} "
            f"uncommitted edits ({listing(dirty)}). Let the daemon commit them (a few seconds), or commit them, "
            "then run the undo again"
        )


ORIGIN_HOST = "undo"  # how a version set beside a note by an undo's move is named (`<name>.conflict-undo-<date>.md`)


PENDING_FIRST = ("undo", "origin")  # what these take back is "the last" change: what is pending comes first
PENDING_WAIT = 5.0  # seconds the daemon's undo waits for it


def apply_undo(
    committer: Committer,
    selection: Selection,
    state_dir: Path | None,
    now: dt.datetime,
    may_change: Callable[[list[str]], None] | None = None,
    pending_wait: float = 0.0,
) -> UndoResult:
    """Plan and write the undo as one new commit, with `committer` paused (see the module docstring). With
    `selection.head`, refused unless HEAD is still that commit (a plan shown, then applied twice at once,
    takes back one change); `may_change` sees the paths the undo would change and raises to refuse it.
    `pending_wait` (the daemon's): how long an undo of "the last" change waits for the writes still pending
    (registered, not yet committed) to be committed by the daemon's loop, so it takes back those."""
    git = GitCli(committer.vault)
    if pending_wait and selection.kind in PENDING_FIRST and not selection.head:
        committer.origins.drained(pending_wait)  # a capture made a moment ago is the last change, once committed
    with committer.paused():
        busy = operation_in_progress(git.gitdir)
        if busy:
            raise UndoRefused(f"nothing was undone: {busy}; run the undo again when it is over")
        identity = committer.identity_env()
        plan = make_plan(committer.vault, selection, identity, now)
        if selection.head and not (len(selection.head) >= 7 and plan.head.startswith(selection.head)):
            raise UndoRefused(
                "nothing was undone: the vault changed since the plan was shown (a new commit); look at the plan again"
            )
        if not plan.changes:
            return UndoResult(plan, None)
        paths = [c.path for c in plan.changes]
        if may_change is not None:
            may_change(paths)
        _refuse_dirty(git, paths)
        for path in paths:
            committer.note_origin(path, ORIGIN)
        moved = False
        try:
            commit = checked(
                git.run("commit-tree", plan.tree, "-p", plan.head, "--no-gpg-sign", "-F", "-", env=identity,
                        stdin=plan.message.encode("utf-8")),
                "`git commit-tree` of the undo", UndoRefused)  # fmt: skip
            reflog = plan.message.splitlines()[0]
            # The files, the index and HEAD move as a sync round moves them (engine/git/tree_move.py): each file
            # written whole and swapped in, a save made meanwhile kept, and the move journalled, so that a kill
            # before HEAD has moved is finished by the next commit cycle with this very commit
            try:
                swapped = move_tree(git, plan.head, commit, message=reflog, env=identity,
                                    their_host=lambda _path: ORIGIN_HOST, now=now)  # fmt: skip
                refused = move_with_git(git, plan.head, commit, reflog) if swapped is None else None
            except OSError as exc:
                raise UndoRefused(f"the undo's files were written but the index or HEAD could not follow ({exc}); "
                                  "the next commit cycle finishes it") from None  # fmt: skip
            if refused:
                raise UndoRefused(f"nothing was undone: {refused}; run the undo again")
            moved = True
        finally:
            if not moved:
                committer.origins.consume(paths)
        committer.origins.consume(paths)
    if state_dir is not None:
        record_conflicts(state_dir, [c for c in plan.conflicts if c.get("sibling")], committer.vault)
    return UndoResult(plan, commit)
