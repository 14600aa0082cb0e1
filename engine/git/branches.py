"""The vault's branch and the remote's it syncs with: git's plumbing a sync round and the person's own git
commands share (which branch, which commit, the remote's URL), and a clone's first sync, which checks out the
remote's branch where the clone has no commit of its own yet (engine/git/sync.py runs the round)."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path

from agentmd.engine.errors import AgentmdError
from agentmd.engine.git.conflicts import conflict_text, sibling_name
from agentmd.engine.git.runner import HEX_ID, GitCli, GitRun

DEFAULT_REMOTE = "origin"


class SyncError(AgentmdError):
    """A sync round could not run or finish; the message says why and what to do."""


class RemoteUnreachable(SyncError):
    """`git fetch` or `git push` could not reach the remote (offline, the host down, the path gone): the
    daemon's rounds back off (see `engine.git.sync_run.BACKOFF_FIRST`)."""


class RemoteRefused(SyncError):
    """The remote answered and refused this machine (no credentials, wrong ones, no access, an unknown host key):
    no retry ends it, so it is said at once (red), with what to set up."""


_REFUSED = re.compile(
    r"authentication failed|could not read (?:username|password)|terminal prompts disabled|permission denied"
    r"|returned error: 40[13]|http 40[13]|repository not found|host key verification failed|access denied",
    re.IGNORECASE,
)


# The remote took the push and turned it down: a hook, a protected branch, a read-only repository (a lock lost to
# another push at the same moment says `[remote rejected] ... lock` and is `lost_race`, tried before this).
_DECLINED = re.compile(
    r"\[remote rejected\]|hook declined|protected branch|push declined|GH006|read[- ]only", re.IGNORECASE
)


def remote_failure(what: str, run: GitRun, remote: str) -> SyncError:
    """The error for a fetch, push or ls-remote that failed: refused (credentials, access) or unreachable. Its
    message keeps ssh's own lines (`Permission denied (publickey)`, `Connection refused`), which git does not
    prefix with `fatal:`."""
    lines = [ln.strip() for ln in run.err.splitlines() if ln.strip()]
    cause = " / ".join(lines[-3:])[:500] if lines else run.why()
    said = os.fsdecode(run.out) + run.err
    if _DECLINED.search(said):
        said_by_remote = [
            ln.strip()[len("remote:") :].strip() for ln in run.err.splitlines() if ln.startswith("remote:")
        ]
        reason = " / ".join(x for x in said_by_remote if x)[:300] or cause
        return RemoteRefused(
            f"{what} was declined by the remote {remote}, which answered: {reason}. It will not take this branch "
            "(a hook of the server, a protected branch, a repository made read-only) and no retry changes that: "
            "ask whoever runs the remote to let this machine push, or point the vault at another remote "
            "(`agentmd remote add URL`); the commits wait here meanwhile"
        )
    if _REFUSED.search(run.err):
        return RemoteRefused(
            f"{what} was refused by the remote {remote} ({cause}): this machine has no working credentials "
            "for it. agentmd uses git's own: set up an ssh key (`ssh -T` to the host should greet you) or a "
            "credential helper (`git config --global credential.helper store`, then one `git fetch` in the vault to "
            "enter them), and check that this account may read and write the repository"
        )
    return RemoteUnreachable(f"{what} failed (is the remote reachable?): {cause}")


# Another push updated the remote's branch at the same moment: the remote's git could not take the branch's lock,
# or found it moved under it.
_LOST_RACE = re.compile(r"cannot lock ref|failed to update ref|\[remote rejected\].*\block\b", re.IGNORECASE)


def lost_race(pushed: str) -> bool:
    """Whether a push's output says another push moved the branch at the same moment: as for a rejected push,
    the round fetches, merges and pushes again (not a remote out of reach, waited for)."""
    return _LOST_RACE.search(pushed) is not None


class SyncWaits(SyncError):
    """The round could not start for a passing reason (the person's git command running, someone else's
    `index.lock`): nothing to fix, the next round tries again."""


SYNC_HELD = "sync held:"  # how a held round's message begins (`status` says it as `sync-held`)


class SyncHeld(SyncError):
    """The round did not start: this machine's commits are held back (a mass deletion the reconcile pass or the
    committer refused), so it neither commits nor pushes; no retry ends it, only the notes back or the deletion
    allowed."""


def checked(run: GitRun, what: str, error: type[AgentmdError] = SyncError) -> str:
    """The output of a git command that must succeed; `error`, naming `what` and git's reason, when it did not."""
    if run.code != 0:
        raise error(f"{what} failed: {run.why()}")
    return run.text


def commit_at(git: GitCli, ref: str) -> str | None:
    """The commit `ref` names, or None (no such ref, or not a commit). `ref` is never read as an option."""
    run = git.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return run.text if run.code == 0 and HEX_ID.fullmatch(run.text) else None


def current_branch(git: GitCli) -> str:
    run = git.run("symbolic-ref", "--quiet", "--short", "HEAD")
    if run.code != 0 or not run.text:
        raise SyncError("the vault's repository is not on a branch (a detached HEAD); check out a branch first")
    return run.text


def remote_url(git: GitCli, remote: str = DEFAULT_REMOTE) -> str | None:
    run = git.run("remote", "get-url", remote)
    return run.text if run.code == 0 and run.text else None


def plain_pull_merges(git: GitCli) -> bool:
    """Make a person's plain `git pull` merge when the vault and its remote have both moved on (git 2.27 and
    later stop with "Need to specify how to reconcile divergent branches" unless told): `pull.rebase false`
    in the vault's repository, unless some level of git's config already says how pulls reconcile. Whether it
    was set now."""
    for key in ("pull.rebase", "pull.ff"):
        if git.run("config", "--get", key, optional_locks=False).code == 0:
            return False
    return git.run("config", "--local", "pull.rebase", "false").code == 0


_USERINFO_SECRET = re.compile(r"^([a-zA-Z][\w+.-]*://[^/@:]*):[^/@]*@")


def shown_url(url: str) -> str:
    """A remote's URL as status and messages show it: a password written into it (`https://me:secret@host/…`)
    is never printed."""
    return _USERINFO_SECRET.sub(r"\1:***@", url)


# what git takes as a remote besides a path: a URL with a scheme, or an scp-like `[user@]host:path`
_REMOTE_ADDRESS = re.compile(r"[a-zA-Z][\w+.-]*://\S+|(?:[\w.-]+@)?[\w.-]+:(?!//)\S+")
_PATH_LIKE = re.compile(r"[~./\\]|\S*[/\\]")  # a path, made yet or not (a bare repository to be made there)


def add_remote(git: GitCli, url: str, remote: str = DEFAULT_REMOTE) -> str:
    """Point `remote` at `url` (added, or changed when it exists); what was done, in one line. A person's plain
    `git pull` in the vault then merges (`plain_pull_merges`)."""
    if not url.strip():
        raise SyncError("give the remote's URL: a bare repository over ssh, a path, GitHub or Gitea")
    if (
        not _REMOTE_ADDRESS.match(url.strip())
        and not _PATH_LIKE.match(url.strip())
        and not Path(url).expanduser().exists()
    ):
        raise SyncError(
            f"{url!r} is not a remote's address: give a URL (ssh://host/path, https://host/owner/vault.git), an "
            "scp-like address (git@host:owner/vault.git), or the path of a bare repository"
        )
    plain_pull_merges(git)
    had = remote_url(git, remote)
    if had == url:
        return f"the remote {remote} already points at {shown_url(url)}"
    checked(git.run("remote", "set-url" if had else "add", remote, url), f"`git remote {'set-url' if had else 'add'}`")
    return f"the remote {remote} now points at {shown_url(url)}" + (f" (was {shown_url(had)})" if had else "")


def remote_heads(git: GitCli, remote: str) -> list[str]:
    """The remote's branches (`git ls-remote --heads`)."""
    run = git.run("ls-remote", "--heads", remote)
    if run.code != 0:
        raise remote_failure(f"`git ls-remote {remote}`", run, remote)
    return [line.split("refs/heads/", 1)[1] for line in run.text.splitlines() if "\trefs/heads/" in line]


def their_branch(git: GitCli, remote: str, branch: str) -> str:
    """The remote's branch this vault syncs with: its own name's, or, when the remote has none of that name,
    the remote's one branch (a remote made with another default branch name: `main` against `master`). A
    remote with several other branches is not guessed at."""
    heads = remote_heads(git, remote)
    if branch in heads or not heads:
        return branch
    if len(heads) == 1:
        return heads[0]
    raise SyncError(
        f"the remote {remote} has no branch {branch!r}, and several others ({', '.join(sorted(heads)[:5])}): "
        f"check that the remote's URL is this vault's (`agentmd remote show`), or bring this vault's notes onto "
        f"the branch it syncs with (`agentmd git switch NAME`, then `agentmd git merge {branch}`)"
    )


Kept = Callable[[list[dict[str, str]]], None]


def adopt_remote_branch(git: GitCli, remote: str, there: str, host: str, now: dt.datetime, on_kept: Kept | None) -> str:
    """A clone with no commit yet (the remote's default branch named none of its branches): check out the
    remote's branch, keeping every file already in the work tree; refused, naming them, when one of them
    would be overwritten. The commit it now stands on."""
    fetch = git.run("fetch", "--quiet", "--no-tags", remote, f"refs/heads/{there}")
    theirs = commit_at(git, "FETCH_HEAD") if fetch.code == 0 else None
    if theirs is None:
        raise remote_failure(f"`git fetch {remote}`", fetch, remote)
    kept = _set_aside_before_adopting(git, theirs, host, now)
    if kept and on_kept is not None:
        on_kept(kept)
    run = git.run("checkout", "--quiet", "-b", there, theirs)
    if run.code != 0:
        raise SyncError(
            f"this clone has no commit yet and its files could not be joined with the remote's branch {there!r} "
            f"({' '.join(run.err.split())[:400]}); move the files named aside, then sync again"
        )
    return theirs


def _set_aside_before_adopting(git: GitCli, theirs: str, host: str, now: dt.datetime) -> list[dict[str, str]]:
    """Files written in the clone before its first sync under a name the remote's branch also has: the same
    bytes are dropped (the checkout brings them back), a note of other bytes becomes a conflict sibling
    named after this machine, as one title written on two machines is kept, and anything else is refused
    by the checkout, naming it. The siblings made."""
    vault: Path = git.vault
    listed = git.run("ls-tree", "-r", "-z", theirs)  # `<mode> <type> <oid>\t<path>` each
    kept: list[dict[str, str]] = []
    for entry in os.fsdecode(listed.out).split("\0"):
        info, _, path = entry.partition("\t")
        if not path or len(info.split()) != 3:
            continue
        oid = info.split()[2]
        here = vault / path
        if not here.is_file() or here.is_symlink():
            continue
        data = here.read_bytes()
        if git.run("hash-object", "--stdin", stdin=data).text == oid:
            here.unlink()
        elif path.lower().endswith(".md"):
            sibling = sibling_name(path, host, now)
            (vault / sibling).write_bytes(conflict_text(data, path))
            here.unlink()
            kept.append({"path": path, "sibling": sibling})
    return kept
