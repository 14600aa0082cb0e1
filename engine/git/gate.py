"""The corpus-write gate: a write that touches many notes at once runs only on a committed, clean vault.

A healthy repository with at least one commit and nothing uncommitted is the undo point such a write
needs. There is no override.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentmd.engine.git.changes import is_scratch, read_status, under_dot_dir
from agentmd.engine.git.health import git_health
from agentmd.engine.git.runner import CycleFailure, GitCli, GitMissing, absolute_path, listing, plural


@dataclass(frozen=True)
class GateResult:
    ok: bool
    reason: str | None  # None when ok; "git-degraded" or "uncommitted-changes"
    detail: str


def corpus_write_gate(vault: Path) -> GateResult:
    """Pass only with a healthy repository, at least one commit and a clean worktree. No override."""
    vault = absolute_path(vault)
    health = git_health(vault)
    if not health.ok:
        return GateResult(
            False,
            "git-degraded",
            f"git is degraded ({health.reason}): {health.detail}. A corpus-wide write needs a committed, "
            "healthy repository as its undo point",
        )
    try:
        entries = read_status(GitCli(vault), optional_locks=False)
    except (CycleFailure, GitMissing) as exc:
        return GateResult(False, "git-degraded", f"cannot read the worktree state: {exc}")
    if not entries:
        return GateResult(True, None, "the vault is a healthy git repository with a clean worktree")
    paths = list(dict.fromkeys(e.path for e in entries))
    left = [
        e.path
        for e in entries
        if e.staged or (e.untracked and (e.path.endswith("/") or under_dot_dir(e.path) or is_scratch(e.path)))
    ]
    detail = (
        f"{plural(len(paths), 'uncommitted path')}: {listing(paths)}. Commit them, or let the agentmd daemon "
        "commit them on its next cycle, then run the gate again"
    )
    if left:
        detail += (
            f". The daemon will not commit {listing(sorted(set(left)), 5)} (paths you staged yourself, untracked "
            "files under dot folders, editor scratch files or nested repositories): commit those yourself or add "
            "them to .gitignore"
        )
    return GateResult(False, "uncommitted-changes", detail)
