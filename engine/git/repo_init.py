"""`agentmd init-git`: make the vault a git repository with a .gitignore, repo-local gc settings and a first commit.

It refuses a vault that already has a `.git` of any kind: nothing else in agentmd creates or replaces a
repository.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.branches import plain_pull_merges
from agentmd.engine.git.committer import Committer
from agentmd.engine.git.origins import commit_message
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
    dated = commit_older_notes(git, vault, committer.identity_env(), dt.datetime.now(dt.UTC).date())
    result = committer.first_commit()
    if result.error or result.skipped:
        raise GitError(
            f"created {gitdir} but the first commit failed: {result.error or result.skipped}. Fix the cause, then "
            "commit by hand or start `agentmd serve`, which commits on its first cycle"
        )
    files = sum(len(c.paths) for c in result.commits)
    sha = result.commits[0].sha[:12] if result.commits else "none (nothing to commit)"
    older = (
        f"; {plural(dated[1], 'older note')} first, in {plural(dated[0], 'commit')} dated as their files"
        if dated[0]
        else ""
    )
    summary = (
        f"initialised a git repository in {vault}: first commit {sha} with {plural(files, 'file')} "
        f"(origin: local-edit){older}; {ignore_note}; set gc.auto=0, maintenance.auto=false{pulls}"
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


MONTHS_OVER = 365  # more days than this among the older notes: one commit a month instead of a day


def commit_older_notes(git: GitCli, vault: Path, identity: dict[str, str], today: dt.date) -> tuple[int, int]:
    """Commit the notes whose files are older than `today` in one commit per day of their files' times (per month
    past MONTHS_OVER days), each dated by its newest file, before the first commit takes the rest. Git keeps no
    file times: a clone's files are all new, and a rebuilt index dates a note by the commit that added it, so a
    note's age lives on only in the history. Returns (commits, notes)."""
    run = git.run("ls-files", "-z", "--others", "--exclude-standard")
    found: list[tuple[str, dt.datetime]] = []
    for raw in run.out.split(b"\0") if run.code == 0 else []:
        rel = os.fsdecode(raw)
        if not rel.endswith(".md") or any(part.startswith(".") for part in rel.split("/")):
            continue
        try:
            st = os.lstat(vault / rel)
        except OSError:
            continue
        when = dt.datetime.fromtimestamp(int(st.st_mtime), dt.UTC)
        if stat.S_ISREG(st.st_mode) and when.date() < today:
            found.append((rel, when))
    days = {when.date() for _rel, when in found}
    key = (lambda w: (w.year, w.month, 1)) if len(days) > MONTHS_OVER else (lambda w: (w.year, w.month, w.day))
    groups: dict[tuple[int, int, int], list[tuple[str, dt.datetime]]] = {}
    for rel, when in found:
        groups.setdefault(key(when), []).append((rel, when))
    for _period, group in sorted(groups.items()):
        paths = sorted(rel for rel, _when in group)
        stamp = max(when for _rel, when in group).isoformat(timespec="seconds")
        add = git.run(
            "add",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=b"".join(os.fsencode(p) + b"\0" for p in paths),
        )
        env = {**identity, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        message = commit_message("local-edit", paths).encode("utf-8")
        made = git.run("commit", "--quiet", "--no-verify", "--no-gpg-sign", "-F", "-", env=env, stdin=message)
        if add.code != 0 or made.code != 0:
            raise GitError(f"the commit of the notes of {stamp[:10]} failed: {(made if add.code == 0 else add).why()}")
    return len(groups), len(found)


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
