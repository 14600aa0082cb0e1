"""A merge the person's own `git pull` or `git merge` stopped on (run through `agentmd git`), ended by the rules
a sync round follows (engine/git/sync.py)."""

from __future__ import annotations

import os
from pathlib import Path

from agentmd.engine.git.branches import checked, commit_at
from agentmd.engine.git.conflicts import record_conflicts
from agentmd.engine.git.runner import GitCli
from agentmd.engine.git.sync import Round
from agentmd.vault_schema.markdown import has_conflict_markers


def settle_person_merge(vault: Path, state_dir: Path | None) -> tuple[list[dict[str, str]], str | None]:
    """End the conflicts a person's own `git pull` or `git merge` stopped on (run through `agentmd git`) by
    the rules a sync round follows: a note changed on both sides merged as a note, one title captured on two
    machines kept as two notes, a real conflict kept side by side as a sibling, an edit kept over a deletion,
    ours kept for a file that is not a note. Each decided path is written to the work tree and staged; when no
    conflict is left the merge is committed (`origin: sync`). Returns what was decided and the merge commit
    (None when there was nothing to settle, or the person must still finish it: a rebase, a cherry-pick)."""
    git = GitCli(vault)
    theirs = commit_at(git, "MERGE_HEAD")
    if theirs is None:
        return [], None
    listed = git.run("ls-files", "-u", "-z")
    stages: dict[str, dict[int, tuple[str, str]]] = {}
    for raw in listed.out.split(b"\0") if listed.code == 0 else []:
        if raw:
            info, _, raw_path = raw.partition(b"\t")
            mode, oid, stage = info.decode().split()
            stages.setdefault(os.fsdecode(raw_path), {})[int(stage)] = (mode, oid)
    if not stages:
        return [], None
    for path in [p for p in stages if _resolved_by_hand(vault / p)]:
        # the person already wrote the note as it should be, markers taken out but not staged: that is the answer
        checked(git.run("add", "--", path), f"staging {path}, resolved by hand")
        del stages[path]
    if not stages:
        if git.run("ls-files", "-u").text:
            return [], None
        done = git.run("commit", "-q", "--no-verify", "--no-edit")
        return [], commit_at(git, "HEAD") if done.code == 0 else None
    round_ = Round(vault, remote="the merged branch")
    ours_tree = checked(git.run("rev-parse", "HEAD^{tree}"), "reading HEAD")
    tree, decided = round_.resolve(ours_tree, stages, theirs, ours_tree)
    names = set(stages) | {d[k] for d in decided for k in ("renamed", "sibling") if k in d}
    for path in sorted(names):
        entry = os.fsdecode(git.run("ls-tree", "-z", tree, "--", path).out.split(b"\0")[0])
        if not entry:
            checked(git.run("rm", "-q", "--cached", "--ignore-unmatch", "--", path), f"dropping {path}")
            (vault / path).unlink(missing_ok=True)
            continue
        mode, _kind, oid = entry.partition("\t")[0].split()
        data = git.run("cat-file", "blob", oid).out
        target = vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.unlink(missing_ok=True)
            os.symlink(os.fsdecode(data), target)
        else:
            target.write_bytes(data)
        checked(git.run("update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}"), f"staging {path}")
    if state_dir is not None:
        record_conflicts(state_dir, decided, vault)
    if git.run("ls-files", "-u").text:
        return decided, None
    message = round_.merge_message(theirs, decided).replace(f"sync: merge {round_.remote}", "sync: the person's merge")
    done = git.run("commit", "-q", "--no-verify", "-F", "-", stdin=message.encode())
    return decided, commit_at(git, "HEAD") if done.code == 0 else None


def _resolved_by_hand(path: Path) -> bool:
    """Whether a conflicted file in the work tree no longer holds git's markers: the person resolved it."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return False
    return not has_conflict_markers(text)
