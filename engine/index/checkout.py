"""What the vault's git repository has checked out, for the mass-deletion refusal of a reconcile pass.

A person who checks out an old commit (a detached HEAD) or another branch with fewer notes empties much of the
vault as surely as an unmounted drive, but nothing is lost and the fix is to go back, not to restore files. The
pass records the branch it last saw the vault on (`note_branch`); a refusal made while the vault is on no branch,
or on another one, says so (`checkout_refusal`).

Read from the repository's HEAD file, with no git run: the index does not use the git room (they are peers).
"""

from __future__ import annotations

import re
from pathlib import Path

from agentmd.engine.index.store import Store

BRANCH_KEY = "checkout_branch"  # catalog meta: the branch the vault was on at the last pass that went through
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _gitdir(vault: Path) -> Path | None:
    """The repository folder of the work tree holding `vault` (`.git`, or where a `.git` file points)."""
    for folder in (vault, *vault.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            return (folder / text.removeprefix("gitdir:").strip()) if text.startswith("gitdir:") else None
    return None


def checked_out(vault: Path) -> tuple[str | None, str | None]:
    """(branch, None) when the vault is on a branch, (None, commit) on a detached HEAD, (None, None) outside git
    or when HEAD cannot be read."""
    gitdir = _gitdir(vault)
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip() if gitdir is not None else ""
    except (OSError, UnicodeDecodeError):
        return None, None
    if head.startswith("ref: refs/heads/"):
        return head.removeprefix("ref: refs/heads/"), None
    return (None, head) if _COMMIT.fullmatch(head) else (None, None)


def note_branch(vault: Path, store: Store) -> None:
    """Record the branch the vault is on, after a pass that went through (nothing when it is on none)."""
    branch, _commit = checked_out(vault)
    if branch is not None and store.catalog.get_meta(BRANCH_KEY) != branch:
        store.catalog.set_meta(BRANCH_KEY, branch)


def checkout_refusal(vault: Path, store: Store, missing: int, indexed: int) -> str | None:
    """The refusal of a pass that would remove `missing` of `indexed` notes when the vault is checked out at a
    commit (a detached HEAD) or at another branch than the one the index last saw; None otherwise."""
    branch, commit = checked_out(vault)
    home = store.catalog.get_meta(BRANCH_KEY)
    if commit is not None:
        where = f"commit {commit[:10]} (a detached HEAD)"
    elif branch is not None and home is not None and branch != home:
        where = f"branch {branch}, not {home}, the branch the index last saw"
    else:
        return None
    back = f"`git checkout {home}`" if home else "`git checkout -` returns to the branch it was on"
    text = (
        f"the vault is checked out at {where}, and {missing} of the {indexed} indexed notes are not in it; the "
        f"index keeps its notes until the vault is back on its branch ({back}), and nothing is deleted"
    )
    if branch is not None:
        text += f". If the vault now lives on {branch}, run `agentmd reindex --allow-mass-delete`"
    return text
