"""`agentmd init-git`: make the vault a git repository with a .gitignore, repo-local gc settings and a first commit.

It refuses a vault that already has a `.git` of any kind: nothing else in agentmd creates or replaces a
repository.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.branches import plain_pull_merges
from agentmd.engine.git.committer import Committer
from agentmd.engine.git.runner import GitCli, GitMissing, absolute_path, listing, plural

GITIGNORE_LINES = (
    "**/.obsidian/workspace*.json",  # at the top and in vaults nested in folders
    ".trash/",
    ".DS_Store",
    "._*",
    "Thumbs.db",
    "desktop.ini",
    "*.swp",
    "*.swo",
    "*.swx",
    "*~",
    ".#*",
    "4913",
    ".~lock.*#",
    ".tmp.driveupload/",
    ".agentmd-scratch/",  # captures' temp files (engine/write/tempfiles.py's SCRATCH_DIR)
)
_GITIGNORE_HEADER = (
    "# Added by `agentmd init-git`: per-device Obsidian UI state, the Obsidian trash, OS clutter, editor\n"
    "# scratch files and agentmd's capture temp files stay out of history. agentmd keeps its index and caches\n"
    "# outside the vault.\n"
)


SHOWN_UNTRACKED = 50  # files left untracked that init-git names one by one


class GitError(AgentmdError):
    """A git operation agentmd was asked to do could not be done; the message says how to fix it."""


def init_git(vault: Path) -> str:
    """`agentmd init-git`: create the repository, a .gitignore, the repo-local gc and pull settings, a first
    commit."""
    vault = absolute_path(vault)
    if not vault.is_dir():
        raise GitError(f"the vault folder {vault} does not exist; create it or pass --vault")
    gitdir = vault / ".git"
    if os.path.lexists(gitdir):
        raise GitError(
            f"{vault} already has a .git ({'folder' if gitdir.is_dir() else 'file'}); nothing was changed. "
            "`agentmd status` reports its health; remove .git first only if you really want a new history"
        )
    git = GitCli(vault)
    try:
        run = git.run("init", "--quiet", repo_options=False)
    except GitMissing as exc:
        raise GitError(f"git is not installed or not on PATH ({exc}); install git and run init-git again") from exc
    if run.code != 0:
        raise GitError(f"`git init` failed in {vault}: {run.why()}")
    ignore_note = _write_gitignore(vault)
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        cfg = git.run("config", "--local", key, value)
        if cfg.code != 0:
            raise GitError(f"created {gitdir} but could not set {key}={value}: {cfg.why()}; set it with git config")
    pulls = ", pull.rebase=false (a plain git pull merges)" if plain_pull_merges(git) else ""
    committer = Committer(vault, phone_paths=tuple)
    result = committer.first_commit()
    if result.error or result.skipped:
        raise GitError(
            f"created {gitdir} but the first commit failed: {result.error or result.skipped}. Fix the cause, then "
            "commit by hand or start `agentmd serve`, which commits on its first cycle"
        )
    files = sum(len(c.paths) for c in result.commits)
    sha = result.commits[0].sha[:12] if result.commits else "none (nothing to commit)"
    summary = (
        f"initialised a git repository in {vault}: first commit {sha} with {plural(files, 'file')} "
        f"(origin: local-edit); {ignore_note}; set gc.auto=0, maintenance.auto=false{pulls}"
    )
    left = committer.untracked_dot_files
    if left:
        shown = sorted(left)[:SHOWN_UNTRACKED]
        folders = sorted(set(left.values()))
        more = f"\n  and {len(left) - len(shown)} more (`git status` lists them)" if len(left) > len(shown) else ""
        summary += (
            f"\nleft untracked, {plural(len(left), 'file')} in dot folders agentmd never commits on its own "
            f"({listing(folders, 5)}): commit them yourself or add them to .gitignore, or the corpus-write gate "
            "refuses bulk writes until you do:\n  " + "\n  ".join(shown) + more
        )
    return summary


def _write_gitignore(vault: Path) -> str:
    path = vault / ".gitignore"
    if path.is_file():
        existing = path.read_text("utf-8", "replace")
        have = {ln.strip() for ln in existing.splitlines()}
        missing = [ln for ln in GITIGNORE_LINES if ln not in have]
        if not missing:
            return "kept the existing .gitignore"
        sep = "" if existing.endswith("\n") or not existing else "\n"
        path.write_text(existing + sep + "\n" + _GITIGNORE_HEADER + "\n".join(missing) + "\n", encoding="utf-8")
        return f"added {plural(len(missing), 'line')} to the existing .gitignore"
    path.write_text(_GITIGNORE_HEADER + "\n".join(GITIGNORE_LINES) + "\n", encoding="utf-8")
    return "wrote .gitignore"
