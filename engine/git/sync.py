"""One sync round with a git remote: the same memory on every machine, with git as the distributed engine.

A round, run while the committer is held (no cycle starts meanwhile):

1. what is pending in the vault is committed first, so the round works on commits only;
2. `git fetch` the remote's branch;
3. the remote's commit and ours are compared through their merge base:
   - the same commit: nothing to do;
   - ours behind: fast-forward. Each changed file is swapped into place in one step and what it replaced is
     checked, so an editor's save made at any moment of the move is kept: merged with the incoming version,
     or beside it as a conflict sibling (`agentmd.engine.git.tree_move`); then the index and HEAD move. Where
     files cannot be swapped, one `git merge --ff-only` moves all three;
   - ours ahead: push;
   - both moved: a merge computed before the work tree is touched (`git merge-tree --write-tree`); where
     it conflicts, no marker ever reaches a note:
       * a note changed on both sides is merged as a note (`agentmd.engine.git.sync_merge`): frontmatter key
         by key, the body line by line, so edits of different keys never conflict, even on neighbouring
         lines;
       * both sides added the same path as agent captures (two machines captured one title): two notes,
         theirs at the next free name beside ours (`<stem>-2.md`), named in the round's `renamed`;
       * both sides changed the same key or the same lines of a note (or a person added it on both):
         ours stays at the path and theirs becomes a sibling note beside it,
         `<name>.conflict-<their host>-<date>.md`, marked `status: conflict` with `conflict_of:` naming the
         note, for the review queue;
       * deleted on one side and edited on the other: the edit survives;
       * a file that is not a note (`.obsidian/*.json`): ours wins; theirs stays in history (the merge's
         second parent), and the round names it with the commit to take it from (`status` shows it for a
         week);
     the merge is committed with both parents (`origin: sync`), then the work tree moves to it;
   HEAD only ever moves to a commit that contains it; were it ever about to move elsewhere, the old tip is
   first kept as a rescue ref (`agentmd.engine.git.rescue`);
4. push, fast-forward only, never forced; a push the remote rejects (it moved meanwhile) starts the round
   again, a few times at most.

Credentials are git's own (ssh agent, credential helper): agentmd stores none and git never prompts.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from agentmd.engine.failpoints import failpoint
from agentmd.engine.git.branches import DEFAULT_REMOTE as DEFAULT_REMOTE
from agentmd.engine.git.branches import (
    SyncError,
    SyncWaits,
    adopt_remote_branch,
    checked,
    commit_at,
    current_branch,
    lost_race,
    plain_pull_merges,
    remote_failure,
    remote_heads,
    remote_url,
    their_branch,
)
from agentmd.engine.git.busy import git_operation
from agentmd.engine.git.conflicts import CONFLICT_STATUS as CONFLICT_STATUS  # where it was before
from agentmd.engine.git.conflicts import KEPT_CONFLICTS as KEPT_CONFLICTS
from agentmd.engine.git.conflicts import (
    conflict_text,
    notes_with_markers,
    sibling_name,
)
from agentmd.engine.git.rescue import RescueError, guard_move, prune_rescues
from agentmd.engine.git.rewrite import (
    branch_held,
    holds,
    last_synced,
    record_synced,
    removed_by_rewrite,
    replay_base,
    rewritten_here,
    rewritten_remote,
)
from agentmd.engine.git.runner import HEX_ID, GitCli, listing
from agentmd.engine.git.sync_merge import free_name, is_capture, merge_note
from agentmd.engine.git.tree_move import finish_unfinished, move_tree
from agentmd.engine.settings import host_name

ATTEMPTS = 3  # rounds tried when the remote moves between our fetch and our push


class SyncJson(TypedDict):
    """A sync round as `/v1/sync` and `agentmd sync --json` print it."""

    outcome: str
    head: str | None
    remote: str
    branch: str | None
    fetched: str | None
    conflicts: list[dict[str, str]]
    renamed: list[dict[str, str]]
    changed: list[str]
    attempts: int
    saves_kept: list[dict[str, str]]
    adopted: str | None
    writing: list[str]
    rescue: str | None
    removed: list[str]
    rewritten: list[str]


@dataclass
class SyncResult:
    outcome: str  # "up-to-date", "pushed", "fast-forward", "merged", "rewrite-taken", "nothing-to-sync"
    head: str | None = None
    remote: str = DEFAULT_REMOTE
    branch: str | None = None
    fetched: str | None = None
    conflicts: list[dict[str, str]] = field(default_factory=list)  # {"path", "sibling"} or {"path", "kept"}
    renamed: list[dict[str, str]] = field(default_factory=list)  # {"path", "renamed"}: captures on both sides
    changed: list[str] = field(default_factory=list)  # paths the round changed in the work tree
    attempts: int = 1
    saves_kept: list[dict[str, str]] = field(default_factory=list)  # saves made while the work tree moved
    adopted: str | None = None  # a clone with no commit yet checked out this remote branch first
    writing: list[str] = field(default_factory=list)  # files still being written: committed and synced next round
    rescue: str | None = None  # the ref keeping the old history, when the round's move left it behind
    removed: list[str] = field(default_factory=list)  # a rewrite taken: the files it took away here
    rewritten: list[str] = field(default_factory=list)  # ... and those whose text it changed

    def to_dict(self) -> SyncJson:
        return {
            "outcome": self.outcome,
            "head": self.head,
            "remote": self.remote,
            "branch": self.branch,
            "fetched": self.fetched,
            "conflicts": self.conflicts,
            "renamed": self.renamed,
            "changed": self.changed,
            "attempts": self.attempts,
            "saves_kept": self.saves_kept,
            "adopted": self.adopted,
            "writing": self.writing,
            "rescue": self.rescue,
            "removed": self.removed,
            "rewritten": self.rewritten,
        }


HELD_HOW = "put the notes back, or run `agentmd reindex --allow-mass-delete` if the deletion is deliberate"
LOST_TRAILER = "set-aside"  # a sync merge's trailer: `<commit> <path>`, the other machine's version it did not keep


# what `git merge-tree` names a file that met a folder of the same name on the other side: `<path>~<commit>`
_FOLDER_CLASH = re.compile(r"(.+)~[0-9a-f]{7,64}")


def _clash_name(path: str, who: str, now: dt.datetime) -> str:
    """A readable name for the file moved out of a folder's way: `<name>.conflict-<who>-<date>[.<ext>]`."""
    if path.lower().endswith(".md"):
        return sibling_name(path, who, now)
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    moved = sibling_name(f"{folder}/{stem}" if folder else stem, who, now)[: -len(".md")]
    return f"{moved}{dot}{ext}"


class Round:
    """One sync round over a vault whose committer is held by the caller."""

    def __init__(
        self,
        vault: Path,
        *,
        remote: str = DEFAULT_REMOTE,
        identity: dict[str, str] | None = None,
        on_conflicts: Callable[[list[dict[str, str]]], None] | None = None,
        accept_rewrite: bool = False,
    ) -> None:
        """`on_conflicts` hears of a merge's conflicts before the work tree moves to it, so they are recorded
        even when the push after it fails, a later attempt of the round takes over, or the process dies.
        `accept_rewrite`: take a remote branch rewritten since the last sync (engine/git/rewrite.py)."""
        self.accept_rewrite = accept_rewrite
        self.git = GitCli(vault)
        self.vault = vault
        self.remote = remote
        self.identity = identity or {}
        self.on_conflicts = on_conflicts
        self.host = host_name()
        self.now = dt.datetime.now(dt.UTC)
        self.kept_saves: list[dict[str, str]] = []  # saves found at a path while the work tree moved
        self.rescue: str | None = None  # the rescue ref a move of this round made (the old history it left)
        self.adopted: str | None = None  # the remote's branch a clone with no commit checked out first

    def run(self) -> SyncResult:
        if remote_url(self.git, self.remote) is None:
            raise SyncError(f"the vault has no remote {self.remote!r}: add one with `agentmd remote add URL`")
        unfinished = git_operation(self.git.gitdir)
        if unfinished:  # merging the remote on top of it would leave its markers and MERGE_HEAD behind
            raise SyncError(f"nothing was synced: {unfinished}; the next round syncs")
        branch = current_branch(self.git)
        prune_rescues(self.git, self.now)
        conflicts: list[dict[str, str]] = []
        changed: list[str] = []
        for attempt in range(1, ATTEMPTS + 1):
            result = self._once(branch)
            result.attempts = attempt
            conflicts += result.conflicts  # an attempt whose push was refused merged and moved the tree all the same
            changed += [p for p in result.changed if p not in changed]
            if result.outcome != "retry":
                result.conflicts, result.changed = conflicts, changed
                result.saves_kept = self.kept_saves
                self._track(current_branch(self.git), result.branch or branch)
                if result.head is not None and result.branch is not None:
                    record_synced(self.git, result.branch, result.head)  # the remote's tip, in step with it
                return result
        raise SyncError(f"the remote kept moving during {ATTEMPTS} rounds; the next sync tries again")

    def _track(self, branch: str, there: str) -> None:
        """Make the remote's branch the upstream of the vault's, when the person's git has none, so that their own
        `git pull` and `git status` know where the vault syncs to, and their plain `git pull` merges as a round
        does (a clone made with `git clone` has neither)."""
        if not self.git.run("config", "--get", f"branch.{branch}.merge").text:
            self.git.run("config", f"branch.{branch}.remote", self.remote)
            self.git.run("config", f"branch.{branch}.merge", f"refs/heads/{there}")
        plain_pull_merges(self.git)

    def _once(self, branch: str) -> SyncResult:
        finish_unfinished(self.git, self.identity)  # a round killed while it moved the work tree
        ours = commit_at(self.git, "HEAD")
        there = their_branch(self.git, self.remote, branch)
        if ours is None:
            if there == branch and not remote_heads(self.git, self.remote):
                raise SyncError("the vault's repository has no commit yet; run `agentmd init-git` first")
            ours = adopt_remote_branch(self.git, self.remote, there, self.host, self.now, self.on_conflicts)
            self.adopted = there
        fetch = self.git.run("fetch", "--quiet", "--no-tags", self.remote, f"refs/heads/{there}")
        theirs: str | None = None
        if fetch.code == 0:
            theirs = commit_at(self.git, "FETCH_HEAD")
        elif "couldn't find remote ref" not in fetch.err:  # an empty remote has no branch yet: push creates it
            raise remote_failure(f"`git fetch {self.remote}`", fetch, self.remote)
        result = SyncResult("up-to-date", ours, self.remote, there, theirs)
        if theirs == ours:
            return result
        synced = last_synced(self.git, there) if theirs is not None else None
        if (
            synced is not None
            and theirs is not None
            and synced != theirs
            and not holds(self.git, theirs, synced)
            and not holds(self.git, theirs, ours)  # built on this machine's own history: only behind it
        ):
            if not self.accept_rewrite:
                raise rewritten_remote(self.remote, there, synced)
            return self._take_rewrite(ours, theirs, synced, result)
        if (
            synced is not None
            and synced == theirs
            and not holds(self.git, ours, synced)
            and branch_held(self.git, branch, synced)  # a branch that never held it only lags: it merges it in
        ):
            raise rewritten_here(self.remote, there, synced)
        if theirs is not None:
            base = self.git.run("merge-base", ours, theirs).text or None
            if base is None:
                raise SyncError(
                    f"the remote {self.remote}'s branch {there!r} shares no history with this vault: it holds another "
                    f"repository, or this vault was started on its own. Check the URL (`agentmd remote show`); to "
                    f"join this machine to a vault already on the remote, clone it (`git clone URL`) and move this "
                    f"vault's notes into the clone"
                )
            lost = self._lost_here(ours, theirs, base)
            if lost and self.on_conflicts is not None:
                self.on_conflicts(lost)
            if base == ours:  # behind: the remote has all we have and more
                result.changed = self._move_tree(ours, theirs)
                result.outcome, result.head = "fast-forward", theirs
                return result
            if base != theirs:  # both moved
                merged, conflicts = self._merge(ours, theirs, base)
                if conflicts and self.on_conflicts is not None:
                    self.on_conflicts(conflicts)
                result.changed = self._move_tree(ours, merged)
                result.outcome, result.head = "merged", merged
                result.conflicts = [c for c in conflicts if "renamed" not in c]
                result.renamed = [c for c in conflicts if "renamed" in c]
                ours = merged
        if self._push(there, ours):
            result.outcome = "pushed" if result.outcome == "up-to-date" else result.outcome
            return result
        result.outcome = "retry"
        return result

    def _lost_here(self, ours: str, theirs: str, base: str | None) -> list[dict[str, str]]:
        """The versions of this machine that another machine's merges, arriving now, set aside: a file that is not a
        note changed on both (theirs kept there), or a deletion made here over which the edit there was kept. Read
        from those merges' `LOST_TRAILER`s naming a commit this machine had; one entry each, for status."""
        if base is None:
            return []
        run = self.git.run("log", "--merges", f"--format=%(trailers:key={LOST_TRAILER},valueonly,separator=%x1f)",
                           f"{ours}..{theirs}")  # fmt: skip
        out: list[dict[str, str]] = []
        for value in (v for line in run.text.splitlines() if run.code == 0 for v in line.split("\x1f")):
            sha, _, path = value.strip().partition(" ")
            if not HEX_ID.fullmatch(sha) or not path:
                continue
            if self.git.run("merge-base", "--is-ancestor", sha, ours).code == 0:  # the version set aside was ours
                at = self.now.isoformat(timespec="seconds")
                deleted = self.git.run("cat-file", "-e", f"{sha}:{path}").code != 0
                kept = self.git.run("rev-parse", "--verify", "-q", f"{theirs}:{path}").text  # the version left
                here = "deleted" if deleted else "changed"
                out.append({"path": path, "kept": "theirs", "ours": sha, "at": at, "here": here, "blob": kept})
        return out

    # -- the work tree ---------------------------------------------------------------------------

    def _move_tree(self, old: str, new: str) -> list[str]:
        """Move HEAD, the index and the work tree from `old` to `new`; the paths that changed. Refused (nothing
        moved) when a file changed since `old` would be overwritten, and waits (nothing moved) while the person has
        staged a change of a path the move changes: moving it would drop their staging unseen."""
        changed = self.git.run("diff", "--name-only", "-z", old, new)
        paths = [os.fsdecode(p) for p in changed.out.split(b"\0") if p] if changed.code == 0 else []
        staged = self.git.run("diff", "--cached", "--name-only", "--no-renames", "-z", old)
        both = sorted({os.fsdecode(p) for p in staged.out.split(b"\0") if p} & set(paths)) if staged.code == 0 else []
        if both:
            raise SyncWaits(
                f"nothing was brought in: you staged changes to {listing(both, 5)}, which the incoming commits change "
                "too; commit them (`git commit`) or unstage them (`git restore --staged -- PATH`), and the next round "
                "syncs"
            )
        try:
            self.rescue = guard_move(self.git, old, new, self.host, self.now) or self.rescue
        except RescueError as exc:
            raise SyncError(f"the work tree was not moved: {exc}") from None
        moved = move_tree(
            self.git, old, new, message=f"sync: {self.remote}", env=self.identity, their_host=self._host_of(new),
            now=self.now,
        )  # fmt: skip
        if moved is not None:
            siblings = [k for k in moved.kept if "sibling" in k]
            if siblings and self.on_conflicts is not None:
                self.on_conflicts(siblings)
            self.kept_saves += moved.kept
        else:
            self._merge_ff(new)
        failpoint("sync-tree-moved")
        if commit_at(self.git, "HEAD") != new:
            raise SyncError(f"the vault's HEAD did not move to the synced commit {new[:10]}; the next round retries")
        return paths

    def _merge_ff(self, new: str) -> None:
        """The move by git itself, where `tree_move` cannot swap files: one git process moves the work tree,
        the index and HEAD together, so a daemon killed meanwhile never leaves the index ahead of HEAD (which
        reads as the person's own staging, never committed); a save landing within git's check-then-write of
        that file can be overwritten."""
        move = self.git.run(
            "merge", "--ff-only", "--no-autostash", "--no-verify-signatures", "--quiet", new,
            env={**self.identity, "GIT_REFLOG_ACTION": f"sync: {self.remote}"},
        )  # fmt: skip
        if move.code != 0:
            raise SyncError(
                f"the work tree could not move to the synced commit without overwriting a change made meanwhile "
                f"({move.why()}); the change is kept and the next round syncs it"
            )

    def _host_of(self, commit: str) -> Callable[[str], str]:
        """The machine that last changed a path up to `commit` (its `host:` trailer), for a sibling's name."""

        def host(path: str) -> str:
            fmt = "--format=%(trailers:key=host,valueonly)"
            run = self.git.run("log", "-1", "--no-merges", fmt, commit, "--", path)
            return run.text if run.code == 0 and run.text else "remote"

        return host

    # -- merging ---------------------------------------------------------------------------------

    def _take_rewrite(self, ours: str, theirs: str, synced: str, result: SyncResult) -> SyncResult:
        """Move to the remote's rewritten history, this machine's commits since `synced` replayed on it."""
        new, conflicts = theirs, list[dict[str, str]]()
        if not holds(self.git, synced, ours):  # commits made here since: their changes, as one commit on theirs
            purged = removed_by_rewrite(self.git, synced, theirs)  # stays purged, whatever was done to it here
            mine, other = replay_base(self.git, synced, ours, theirs, self.identity, purged)
            new, conflicts = self._merge(mine, other, None, parents=(theirs,), named=theirs)
            changed_here = self.git.run("diff", "--name-only", "-z", synced, ours, "--", *purged).out if purged else b""
            conflicts += [
                {"path": os.fsdecode(p), "kept": "the rewrite's deletion", "ours": ours}
                for p in changed_here.split(b"\0")
                if p
            ]
            if conflicts and self.on_conflicts is not None:
                self.on_conflicts(conflicts)
        gone = self.git.run("diff", "--name-status", "--no-renames", "-z", ours, new)
        fields = [os.fsdecode(f) for f in gone.out.split(b"\0")] if gone.code == 0 else []
        for kind, path in zip(fields[0::2], fields[1::2], strict=False):
            if kind == "D":
                result.removed.append(path)
            elif kind == "M":
                result.rewritten.append(path)
        result.changed = self._move_tree(ours, new)  # the old tip is kept as a rescue ref first
        result.rescue = self.rescue
        result.outcome, result.head, result.conflicts = "rewrite-taken", new, conflicts
        if new != theirs and not self._push(result.branch or "", new):
            result.outcome = "retry"
        return result

    def _merge(
        self, ours: str, theirs: str, base: str | None, *, parents: tuple[str, ...] = (), named: str = ""
    ) -> tuple[str, list[dict[str, str]]]:
        """The merge commit of `ours` and `theirs`, conflicts resolved as the module docstring says; its parents
        are the two, or `parents` (a replay on a rewritten history, whose remote commit is `named`)."""
        run = self.git.run("merge-tree", "--write-tree", "-z", "--no-messages", ours, theirs)
        if run.code not in (0, 1):
            raise SyncError(f"`git merge-tree` failed: {run.why()}")
        fields = run.out.split(b"\0")
        tree = os.fsdecode(fields[0])
        conflicts: list[dict[str, str]] = []
        if run.code == 1:
            stages: dict[str, dict[int, tuple[str, str]]] = {}
            for raw in fields[1:]:
                if not raw:
                    break  # the conflicted-file list ends with an empty field
                info, _, path = raw.partition(b"\t")
                mode, oid, stage = info.decode().split()
                stages.setdefault(os.fsdecode(path), {})[int(stage)] = (mode, oid)
            tree, conflicts = self.resolve(tree, stages, theirs, ours)
        for c in conflicts if named else []:  # a replay's made-up commits are nothing to show: the remote's is
            if c.get("theirs") == theirs:
                c["theirs"] = named
        message = self.merge_message(named or theirs, conflicts)
        if parents:
            message = message.replace("sync: merge", "sync: this machine's changes replayed on the rewritten", 1)
        linked = [a for p in (parents or (ours, theirs)) for a in ("-p", p)]
        commit = self.git.run("commit-tree", tree, *linked, stdin=message.encode(), env=self.identity)
        return checked(commit, "`git commit-tree` of the merge"), conflicts

    def _blob_at(self, treeish: str, path: str) -> str | None:
        run = self.git.run("rev-parse", "--verify", "--quiet", f"{treeish}:{path}")
        return run.text if run.code == 0 and HEX_ID.fullmatch(run.text) else None

    def resolve(
        self, tree: str, stages: dict[str, dict[int, tuple[str, str]]], theirs: str, ours: str
    ) -> tuple[str, list[dict[str, str]]]:
        """The merged tree with every conflicted path decided (see the module docstring); what was decided."""
        index = self.git.gitdir / f"agentmd-sync-index-{os.getpid()}"
        env = {**self.identity}
        try:
            checked(self.git.run("read-tree", tree, index=index), "reading the merged tree")
            lines: list[str] = []
            decided: list[dict[str, str]] = []
            taken: set[str] = set()  # names given in this merge, beside those in the merged tree
            for path, by_stage in sorted(stages.items()):
                mine, other, common = by_stage.get(2), by_stage.get(3), by_stage.get(1)
                note = path.lower().endswith(".md")
                if mine is not None and other is not None and note and common is not None:
                    merged = self._merge_note(common[1], mine[1], other[1])
                    if merged is not None:  # merged as a note: no conflict
                        lines.append(f"{mine[0]} {merged}\t{path}")
                        continue
                if mine is not None and other is not None and note and common is None and self._captures(mine, other):
                    new = free_name(path, taken | self._names_beside(tree, path))
                    taken.add(new)
                    lines += [f"{mine[0]} {mine[1]}\t{path}", f"{other[0]} {other[1]}\t{new}"]
                    decided.append({"path": path, "renamed": new})
                elif mine is not None and other is not None and note:
                    sibling = self._sibling(path, theirs)
                    blob = self._conflict_note(other[1], path)
                    lines += [f"{mine[0]} {mine[1]}\t{path}", f"{other[0]} {blob}\t{sibling}"]
                    decided.append({"path": path, "sibling": sibling})
                elif mine is not None and other is not None:  # not a note: ours wins, theirs stays in history
                    lines.append(f"{mine[0]} {mine[1]}\t{path}")
                    at = self.now.isoformat(timespec="seconds")
                    decided.append({"path": path, "kept": "ours", "theirs": theirs, "at": at, "blob": mine[1]})
                else:  # deleted on one side, edited on the other: the edit survives
                    mode, oid = mine or other or ("", "")
                    clash = _FOLDER_CLASH.fullmatch(path) if common is None else None
                    if oid and clash:  # a file where the other side made a folder: git named it `<path>~<commit>`
                        base = clash.group(1)
                        who = self.host if mine is not None else self._host_of(theirs)(base)
                        new = _clash_name(base, who, self.now)
                        beside = {t.lower() for t in taken | self._names_beside(tree, base)}
                        stem, n = new, 1
                        while new.lower() in beside:
                            n += 1
                            new = f"{stem}-{n}"
                        taken.add(new)
                        lines.append(f"{mode} {oid}\t{new}")
                        decided.append({"path": base, "kept": "the folder", "moved": new,
                                        "at": self.now.isoformat(timespec="seconds")})  # fmt: skip
                        continue
                    if oid:
                        # that side's own file: where one note was renamed on both sides, each its own way, git
                        # gives both new names the content merged with conflict markers as their only stage
                        oid = self._blob_at(ours if mine else theirs, path) or oid
                        lines.append(f"{mode} {oid}\t{path}")
                        if common is None:  # a name one side gave (a note renamed on both, a file in a renamed folder)
                            decided.append(
                                {"path": path, "kept": "this name", "at": self.now.isoformat(timespec="seconds")}
                            )
                        elif mine is not None:  # their deletion lost: the edit is ours
                            decided.append({"path": path, "kept": "the edit", "theirs": theirs})
                        else:  # our deletion lost to their edit: said here, as a merge elsewhere would say it
                            at = self.now.isoformat(timespec="seconds")
                            decided.append({"path": path, "kept": "theirs", "ours": ours, "at": at, "here": "deleted",
                                            "blob": oid})  # fmt: skip
            feed = "".join(f"{line}\0" for line in lines).encode()
            # drop the conflicted entries first (stages 1-3 and the marker blob), then set the decided ones
            clear = "".join(f"0 {'0' * len(tree)}\t{p}\0" for p in stages).encode()
            checked(self.git.run("update-index", "-z", "--index-info", index=index, stdin=clear + feed), "update-index")
            return checked(self.git.run("write-tree", index=index, env=env), "`git write-tree`"), decided
        finally:
            index.unlink(missing_ok=True)

    def _merge_note(self, base: str, mine: str, other: str) -> str | None:
        """The blob of a note merged from its three versions (`sync_merge.merge_note`); None on a real conflict."""
        blobs = [self.git.run("cat-file", "blob", oid) for oid in (base, mine, other)]
        if any(b.code != 0 for b in blobs):
            return None
        merged = merge_note(self.git, *(b.out for b in blobs))
        if merged is None:
            return None
        return checked(self.git.run("hash-object", "-w", "--stdin", stdin=merged), "writing the merged note")

    def _captures(self, mine: tuple[str, str], other: tuple[str, str]) -> bool:
        """Whether both versions of a note added on both sides are agent captures (`sync_merge.is_capture`)."""
        blobs = [self.git.run("cat-file", "blob", oid) for _mode, oid in (mine, other)]
        return all(b.code == 0 and is_capture(b.out) for b in blobs)

    def _names_beside(self, tree: str, path: str) -> set[str]:
        """The paths in `path`'s folder of the merged tree."""
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        run = self.git.run("ls-tree", "-z", "--name-only", tree, *([folder] if folder else []))
        return {os.fsdecode(p) for p in run.out.split(b"\0") if p} if run.code == 0 else set()

    def _sibling(self, path: str, theirs: str) -> str:
        """`<name>.conflict-<their host>-<date>.md` beside `path`, named after the machine that wrote theirs."""
        run = self.git.run("log", "-1", "--format=%(trailers:key=host,valueonly)", theirs, "--", path)
        name = sibling_name(path, run.text if run.code == 0 else "", self.now)
        stem, n = name[: -len(".md")], 1
        while any(self.git.run("cat-file", "-e", f"{rev}:{name}").code == 0 for rev in ("HEAD", theirs)):
            n += 1  # a round that merged twice within a second, or the other side's sibling of the same name
            name = f"{stem}-{n}.md"
        return name

    def _conflict_note(self, oid: str, path: str) -> str:
        """The blob of theirs, marked as a conflict sibling in its frontmatter (`conflicts.conflict_text`)."""
        text = conflict_text(self.git.run("cat-file", "blob", oid).out, path)
        return checked(self.git.run("hash-object", "-w", "--stdin", stdin=text), "writing the sibling")

    def merge_message(self, theirs: str, conflicts: list[dict[str, str]]) -> str:
        summary = f"sync: merge {self.remote} ({theirs[:10]})"
        sides = [c for c in conflicts if "sibling" in c]
        renamed = [c for c in conflicts if "renamed" in c]
        if sides:
            summary += f", {len(sides)} conflict(s) kept side by side"
        if renamed:
            summary += f", {len(renamed)} note(s) captured on both machines kept as two"
        body = "".join(f"{c['path']}: the other machine's capture is now {c['renamed']}\n" for c in renamed)
        # the other machine's version that this merge set aside, where that machine finds it (`lost_here`)
        lost = [c for c in conflicts if c.get("theirs") and c.get("kept") in ("ours", "the edit")]
        body += "".join(f"{c['path']}: this machine's version kept over the other's\n" for c in lost)
        trailers = f"origin: sync\nhost: {self.host}\n"
        trailers += "".join(f"{LOST_TRAILER}: {c['theirs']} {c['path']}\n" for c in lost)
        return f"{summary}\n\n{body}\n{trailers}" if body else f"{summary}\n\n{trailers}"

    # -- pushing ---------------------------------------------------------------------------------

    def _marked(self, head: str) -> list[str]:
        """The notes `head` changed from what the remote has that hold conflict markers."""
        there = commit_at(self.git, "FETCH_HEAD")
        return notes_with_markers(self.git, head, self.git.run("merge-base", head, there).text if there else None)

    def _push(self, branch: str, head: str) -> bool:
        """Push `head` to the remote's branch, fast-forward only (never forced). False when the remote moved.
        Refused when it would carry git's conflict markers into a note on every machine (`_marked`)."""
        marked = self._marked(head)
        if marked:
            raise SyncError(
                f"nothing was pushed: {listing(marked, 5)} hold{'s' if len(marked) == 1 else ''} git's conflict "
                "markers (<<<<<<< ... >>>>>>>), committed here, and a push would carry them to every machine. "
                "Edit each into what it should say (or `agentmd resolve`), and the next round pushes the fix"
            )
        run = self.git.run("push", "--porcelain", "--quiet", self.remote, f"{head}:refs/heads/{branch}")
        if run.code == 0:
            return True
        text = os.fsdecode(run.out) + run.err
        if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text or lost_race(text):
            return False  # the remote moved (another machine pushed first, or at the same moment): fetch and again
        raise remote_failure(f"`git push {self.remote}`", run, self.remote)
