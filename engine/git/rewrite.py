"""A remote branch whose history was rewritten (a forced push: a secret purged, commits dropped), or a vault whose
own history was, since this machine last synced: told apart from ordinary divergence, so that a round never
merges the old history back in unseen (engine/git/sync.py).

Each round that ends in step with the remote records the remote's commit it synced with as
`refs/agentmd/synced/<branch>`. The next round compares: when the remote's branch no longer holds that commit,
the remote was rewritten; when the vault's HEAD no longer holds it while the remote still stands there, and
the vault's branch once held it (its reflog says so), the vault was rewritten here; a branch that never held it
is only behind, and moves forward. Either way the round refuses and says what to do. `agentmd sync --accept-rewrite`
takes the remote's new history: this machine's commits made since the last sync are replayed on it as one commit
(a change both sides made to the same lines kept side by side as a sync merge keeps it), and the old tip is kept
as a rescue ref (`engine/git/rescue.py`).
"""

from __future__ import annotations

import os

from agentmd.engine.git.branches import SyncError, checked, commit_at
from agentmd.engine.git.runner import GitCli

SYNCED = "refs/agentmd/synced/"


class HistoryRewritten(SyncError):
    """The remote's branch, or the vault's, was rewritten since this machine last synced."""


def last_synced(git: GitCli, branch: str) -> str | None:
    """The remote's commit this machine was last in step with on `branch`, or None before the first such round."""
    return commit_at(git, SYNCED + branch)


def record_synced(git: GitCli, branch: str, commit: str) -> None:
    git.run("update-ref", SYNCED + branch, commit)


def holds(git: GitCli, descendant: str, ancestor: str) -> bool:
    """Whether `descendant`'s history holds `ancestor`."""
    return git.run("merge-base", "--is-ancestor", ancestor, descendant).code == 0


def branch_held(git: GitCli, branch: str, commit: str) -> bool:
    """Whether the vault's `branch` ever stood at `commit` or past it, by the branch's reflog. A branch that is
    only behind the synced commit (the person switched back to it from another branch whose commits a round
    pushed) never held it: it moves forward as any branch behind the remote does. One that held it and no longer
    does was reset or rewritten here. Without a reflog (turned off, or expired) the branch counts as having held
    it, so that nothing dropped here comes back unseen."""
    log = git.run("reflog", "show", "--format=%H", f"refs/heads/{branch}", "--")
    tips = list(dict.fromkeys(log.text.split())) if log.code == 0 else []
    if not tips:
        return True
    # the commits `commit` reaches that no tip of the branch reaches: none when some tip holds it
    listed = commit + "\n" + "".join(f"^{tip}\n" for tip in tips)
    run = git.run("rev-list", "--max-count=1", "--stdin", stdin=listed.encode())
    return run.code != 0 or not run.text


def rewritten_remote(remote: str, branch: str, synced: str) -> HistoryRewritten:
    return HistoryRewritten(
        f"the remote {remote}'s branch {branch!r} was rewritten since this machine last synced (a forced push: it "
        f"no longer holds {synced[:10]}), so nothing was merged, which would bring the old history back. To take "
        "the new history here, run `agentmd sync --accept-rewrite` (this machine's changes since the last sync are "
        "kept, replayed on it; the old tip is kept as a rescue ref); if the rewrite was a mistake, push the old "
        f"history back from a machine that has it (`agentmd git push --force-with-lease {remote} {synced[:10]}:"
        f"{branch}`)"
    )


def rewritten_here(remote: str, branch: str, synced: str) -> HistoryRewritten:
    return HistoryRewritten(
        f"this vault's history was rewritten since it last synced (HEAD no longer holds {synced[:10]}, which the "
        f"remote {remote}'s branch {branch!r} still has), and a round never forces a push. If the rewrite is "
        f"meant, push it yourself: `agentmd git push --force-with-lease={branch}:{synced} {remote} HEAD:{branch}`; "
        "the other machines then take it with `agentmd sync --accept-rewrite`. If not, bring the old history back "
        f"(`agentmd git merge {synced[:10]}`)"
    )


def removed_by_rewrite(git: GitCli, since: str, theirs: str) -> list[str]:
    """The files the rewritten history no longer has that this machine last synced with: a purge (a secret, a
    file that should never have been committed), which no change made here since may bring back."""
    run = git.run("diff", "--name-only", "--no-renames", "--diff-filter=D", "-z", since, theirs)
    return [os.fsdecode(p) for p in run.out.split(b"\0") if p] if run.code == 0 else []


def replay_base(
    git: GitCli, since: str, ours: str, theirs: str, identity: dict[str, str], drop: list[str]
) -> tuple[str, str]:
    """Two commits whose one common ancestor has `since`'s tree: `ours`'s tree (less the files in `drop`) and
    `theirs`'s tree on it, so that a merge of the two carries exactly this machine's changes since `since` onto
    `theirs` (git 2.39 has no `merge-tree --merge-base`). Nothing refers to them once the merge is made."""

    def tree(commit: str) -> str:
        return checked(git.run("rev-parse", f"{commit}^{{tree}}"), f"reading the tree of {commit[:10]}")

    def without(tree_id: str) -> str:
        if not drop:
            return tree_id
        index = git.gitdir / f"agentmd-replay-index-{os.getpid()}"
        try:
            checked(git.run("read-tree", tree_id, index=index), "reading a tree to replay")
            checked(git.run("update-index", "--force-remove", "--", *drop, index=index), "dropping purged files")
            return checked(git.run("write-tree", index=index), "`git write-tree` of a replay")
        finally:
            index.unlink(missing_ok=True)

    def made(tree_id: str, *parents: str) -> str:
        args = [a for p in parents for a in ("-p", p)]
        run = git.run("commit-tree", tree_id, *args, stdin=b"agentmd: replay base\n", env=identity)
        return checked(run, "`git commit-tree` of a replay base")

    base = made(tree(since))
    return made(without(tree(ours)), base), made(tree(theirs), base)
