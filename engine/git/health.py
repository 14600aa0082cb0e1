"""Is the vault's repository usable, how are the committer's failures counted, and the daily repack.

This is what `agentmd status` reads: `git_health`, `worktrees_inside`, and the committer's `CommitState`.

Failure accounting
------------------
* A cycle that errors (git failed, a permission problem, a degraded repository) adds one to
  `commit_failures`; the first one of a run stamps `first_commit_failure`.
* A cycle skipped because of someone else's lock (or a merge/rebase in progress, or unmerged paths)
  is first only a skip. When the next cycle is skipped too, the condition has lasted and every further
  skipped cycle counts as a failure, with `first_commit_failure` dated back to the first skip of the
  run. So a user's commit that happens to overlap one cycle never shows as a failure, while a lock
  that stays is red 30 minutes after it first blocked a cycle.
* Any cycle that completes (commits, or finds nothing to commit) clears the failure run.
* Commits the daemon holds back on purpose (a reconcile pass refused a mass deletion, so the deletion must
  not be committed either) are not failures but are never silent: `commits_held` names the reason and the
  command that releases them, and status shows it red until it clears.

A repository with no commits is accepted: the committer's first cycle makes the first commit. Until
then `git_health` and the gate report `no-commits`. Nothing here ever initialises a repository.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentmd.engine.git.lock import acquire
from agentmd.engine.git.runner import HEX_ID, GitCli, GitMissing, GitRun, absolute_path, listing

STALL_AFTER = timedelta(minutes=30)
COMMIT_STATE = "commit-state.json"  # the daemon's copy of its `CommitState`, in the state folder, for `status`
REPACK_EVERY_SECONDS = 24 * 3600.0
# Names a sync client gives its copies: Dropbox/Nextcloud "(conflicted copy ...)", Syncthing
# ".sync-conflict-...", Drive "name (1)", iCloud "name 2". A space is never legal in a ref name.
_SYNC_JUNK_RE = re.compile(r"conflicted copy|\.sync-conflict-|\s", re.IGNORECASE)


@dataclass(frozen=True)
class GitHealth:
    ok: bool
    reason: str | None  # None when ok; "not-a-repository", "no-commits", "git-missing" or "broken"
    detail: str


@dataclass
class CommitState:
    commit_failures: int = 0
    first_commit_failure: str | None = None  # ISO 8601, UTC
    last_commit_error: str | None = None
    last_commit_at: str | None = None
    last_commit_sha: str | None = None
    skipped_cycles: int = 0
    last_skip_reason: str | None = None
    commits_held: str | None = None  # why the daemon holds every commit back, with the command that ends it
    commits_held_since: str | None = None  # ISO 8601, UTC
    mass_deletion: str | None = None  # the deletion the committer itself would not commit, and how many notes
    large_files_held: dict[str, int] = field(default_factory=dict)  # new files over the size limit, by bytes
    large_file_limit: int | None = None  # that limit, in bytes
    staged_by_others: list[str] = field(default_factory=list)  # paths someone else staged, left for them to commit
    untracked_dot_files: list[str] = field(default_factory=list)  # new files in dot folders, never committed alone

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object] | None) -> CommitState:
        """The state as `to_dict` wrote it (`commit-state.json`); a field missing or of the wrong type keeps
        its default."""
        state = cls()
        for name, default in asdict(state).items():
            value = (data or {}).get(name)
            if default is None:
                ok = isinstance(value, str) or (name == "large_file_limit" and isinstance(value, int))
            else:
                ok = type(value) is type(default)
            if ok:
                setattr(state, name, value)
        return state

    def red(self, now: datetime) -> bool:
        """True once the current run of failures started at least 30 minutes before `now`."""
        if self.first_commit_failure is None:
            return False
        try:
            first = _aware(datetime.fromisoformat(self.first_commit_failure))
        except ValueError:
            return True  # an unreadable stamp is not a reason to stay quiet
        return _aware(now) - first >= STALL_AFTER


class CommitAccounting:
    """Keeps a committer's `CommitState` by the rules in the module docstring; `wall` dates the stamps."""

    def __init__(self, wall: Callable[[], datetime]) -> None:
        self.state = CommitState()
        self.wall = wall
        self._skip_run_started: datetime | None = None

    def failed(self, message: str) -> None:
        """A cycle errored."""
        self._skip_run_started = None
        self._count_failure(message, self.wall())

    def _count_failure(self, message: str, since: datetime) -> None:
        st = self.state
        st.commit_failures += 1
        if st.first_commit_failure is None:
            st.first_commit_failure = _now_iso(since)
        st.last_commit_error = message

    def skipped(self, message: str) -> None:
        """A cycle could not run (someone else's lock, a merge in progress, unmerged paths)."""
        st = self.state
        st.skipped_cycles += 1
        st.last_skip_reason = message
        now = self.wall()
        if self._skip_run_started is None:
            self._skip_run_started = now
        else:  # the condition outlasted a whole cycle: it now counts towards the stall alarm
            self._count_failure(f"commits blocked for two or more cycles: {message}", self._skip_run_started)

    def held(self, reason: str | None) -> None:
        """The daemon holds commits back for `reason` (None: it no longer does)."""
        st = self.state
        if reason is None:
            st.commits_held = st.commits_held_since = None
            return
        if st.commits_held is None:
            st.commits_held_since = _now_iso(self.wall())
        st.commits_held = reason

    def deletion_held(self, detail: str | None) -> None:
        """The committer would not commit a mass deletion (`detail` says how large); None: it no longer holds one."""
        self.state.mass_deletion = detail

    def succeeded(self, last_sha: str | None) -> None:
        """A cycle completed; `last_sha` is its newest commit, None when it had nothing to commit."""
        st = self.state
        self._skip_run_started = None
        st.commit_failures = 0
        st.first_commit_failure = None
        st.last_commit_error = None
        if last_sha is not None:
            st.last_commit_at = _now_iso(self.wall())
            st.last_commit_sha = last_sha


def _now_iso(when: datetime) -> str:
    return _aware(when).astimezone(UTC).isoformat(timespec="seconds")


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# --------------------------------------------------------------------------------------------------
# Health


def git_health(vault: Path, *, deep: bool = False) -> GitHealth:
    """Is `vault` a usable git repository? Never raises.

    Cheap by default (file checks plus one `git rev-parse`). `deep=True` adds
    `git fsck --connectivity-only`, which finds objects lost anywhere in history (a deleted pack).
    """
    try:
        return inspect_repo(absolute_path(vault), deep=deep)
    except GitMissing as exc:
        return GitHealth(False, "git-missing", f"git is not installed or not on PATH ({exc}); install git and retry")
    except Exception as exc:  # health reporting must never take the caller down
        return GitHealth(False, "broken", f"the repository could not be inspected: {type(exc).__name__}: {exc}")


def awaits_first_sync(git: GitCli) -> str | None:
    """Why nothing is committed yet in a repository with no commit whose remote has branches (a clone whose
    remote's default branch names none of them): a first commit here would start a history of its own, which
    no sync could join; the first sync checks the remote's branch out (engine/git/sync.py). None otherwise."""
    if git.run("rev-parse", "--verify", "--quiet", "HEAD", optional_locks=False).code == 0:
        return None  # it has a commit
    if not git.run("for-each-ref", "--count=1", "refs/remotes", optional_locks=False).text:
        return None
    return AWAITS_FIRST_SYNC


AWAITS_FIRST_SYNC = (
    "this clone has no commit yet and its remote has branches: the first sync checks out the remote's branch "
    "(`agentmd sync`; the daemon runs one at once), and the notes already here are committed on it"
)


def inspect_repo(vault: Path, *, deep: bool = False) -> GitHealth:
    if not vault.is_dir():
        return GitHealth(False, "not-a-repository", f"the vault folder {vault} does not exist or is not a folder")
    gitdir = vault / ".git"
    if not os.path.lexists(gitdir):
        renamed = _renamed_gitdirs(vault)
        if renamed:
            return GitHealth(
                False,
                "not-a-repository",
                f"{vault} has no .git folder, but {listing(renamed)} looks like one a sync client renamed; "
                "check it and rename it back to .git (agentmd never re-creates a repository by itself)",
            )
        return GitHealth(
            False, "not-a-repository", f"{vault} is not a git repository; run `agentmd init-git` to create one"
        )
    if not gitdir.is_dir():
        return GitHealth(
            False,
            "broken",
            f"{gitdir} is not a folder (a linked worktree or submodule pointer?); agentmd needs the vault to "
            "hold its own .git folder",
        )
    junk = _sync_junk(gitdir)
    if junk:
        return GitHealth(
            False,
            "broken",
            f"sync-conflict copies inside .git: {listing(junk, 5)}; a sync client wrote into the repository. "
            "Compare each copy with the original, keep the right one, delete the copies, then run `git fsck`",
        )
    try:
        head = (gitdir / "HEAD").read_bytes().decode("utf-8", "replace").strip()
    except OSError as exc:
        return GitHealth(False, "broken", f"cannot read .git/HEAD ({exc.strerror or exc}); the repository is damaged")
    if head.startswith("ref:"):
        ref = head[4:].strip()
        if not ref.startswith("refs/") or ".." in ref or not ref.isprintable() or " " in ref:
            return GitHealth(False, "broken", f".git/HEAD names an invalid ref {ref!r}; the repository is damaged")
        try:
            value = _read_ref(gitdir, ref)
        except ValueError as exc:
            return GitHealth(False, "broken", str(exc))
    elif HEX_ID.fullmatch(head):
        ref, value = "(detached)", head
    else:
        branches = _branches(gitdir)
        fix = (
            f"write `ref: refs/heads/{branches[0]}` into .git/HEAD"
            + (f" (the branches here: {listing(branches, 5)})" if len(branches) > 1 else "")
            if branches
            else "restore .git/HEAD from a clone"
        )
        return GitHealth(
            False,
            "broken",
            f".git/HEAD holds neither a ref nor a commit id ({head[:60]!r}); the repository is damaged: {fix}",
        )
    if value is None:
        lost = _last_logged(gitdir, ref)
        if lost is not None:
            return GitHealth(
                False,
                "broken",
                f"{ref} is missing, though the repository has history: its reflog last named {lost[:12]}. "
                f"Restore the branch with `git update-ref {ref} {lost}` (agentmd does not commit onto a branch "
                "that lost its history; for a new branch without history, commit once yourself)",
            )
        waiting = awaits_first_sync(GitCli(vault))
        return GitHealth(
            False,
            "no-commits",
            waiting
            or f"the repository has no commits yet ({ref} is unborn); commit once (the agentmd daemon does so on "
            "its first cycle) to give the vault an undo point",
        )
    git = GitCli(vault)
    run = git.run("rev-parse", "--verify", "--quiet", "HEAD^{tree}", optional_locks=False)
    if run.code != 0:
        return GitHealth(
            False,
            "broken",
            f"HEAD ({ref}) points at {value[:12]}, but that commit or its tree cannot be read ({run.why()}); "
            "an object is missing (a deleted or half-synced pack?). Run `git fsck` and restore from a clone",
        )
    if deep:
        fsck = git.run("fsck", "--connectivity-only", "--no-progress", "--no-dangling", optional_locks=False)
        if fsck.code != 0:
            return GitHealth(
                False, "broken", f"`git fsck --connectivity-only` failed: {fsck.why()}; restore the missing objects"
            )
    return GitHealth(True, None, f"healthy: HEAD {value[:12]} on {ref}")


def _renamed_gitdirs(vault: Path) -> list[str]:
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(vault):
            name = entry.name
            looks_like = name.startswith((".git", "git ")) and name != ".git" and entry.is_dir()
            if looks_like and os.path.isfile(os.path.join(entry.path, "HEAD")):
                found.append(name)
    return sorted(found)


def _sync_junk(gitdir: Path) -> list[str]:
    junk: list[str] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(gitdir):
            if _SYNC_JUNK_RE.search(entry.name):
                junk.append(entry.name)
    refs = gitdir / "refs"
    for dirpath, dirnames, filenames in os.walk(refs):
        for name in [*dirnames, *filenames]:
            if _SYNC_JUNK_RE.search(name):
                junk.append(os.path.relpath(os.path.join(dirpath, name), gitdir).replace(os.sep, "/"))
    with contextlib.suppress(OSError):
        for line in (gitdir / "packed-refs").read_text("utf-8", "replace").splitlines():
            if line and line[0] not in "#^":
                name = line.partition(" ")[2]
                if _SYNC_JUNK_RE.search(name):
                    junk.append(f"packed-refs: {name}")
    return sorted(junk)


def _branches(gitdir: Path) -> list[str]:
    """The branches the repository holds (loose refs, then packed ones), `main` and `master` first."""
    names: set[str] = set()
    heads = gitdir / "refs" / "heads"
    for dirpath, _dirs, files in os.walk(heads):
        names.update(os.path.relpath(os.path.join(dirpath, f), heads).replace(os.sep, "/") for f in files)
    with contextlib.suppress(OSError):
        for line in (gitdir / "packed-refs").read_text("utf-8", "replace").splitlines():
            name = line.partition(" ")[2].strip()
            if name.startswith("refs/heads/"):
                names.add(name[len("refs/heads/") :])
    return sorted(names, key=lambda n: (n not in ("main", "master"), n))


def _last_logged(gitdir: Path, ref: str) -> str | None:
    """The commit the reflog of `ref` (else of HEAD) last moved to, or None when neither logs a commit: a branch
    that has no commits yet has no reflog, one whose ref file was lost still has it."""
    for log in (gitdir / "logs" / ref, gitdir / "logs" / "HEAD"):
        with contextlib.suppress(OSError):
            lines = log.read_bytes().decode("utf-8", "replace").splitlines()
            for line in reversed(lines):
                parts = line.split(" ", 2)
                if len(parts) >= 2 and HEX_ID.fullmatch(parts[1]) and set(parts[1]) != {"0"}:
                    return parts[1]
    return None


def _read_ref(gitdir: Path, ref: str, depth: int = 0) -> str | None:
    """The object id `ref` names, None when it does not exist (an unborn branch); ValueError when damaged."""
    if depth > 5:
        raise ValueError(f"{ref} is part of a symbolic-ref loop; the repository is damaged")
    loose = gitdir / ref
    if loose.is_file():
        try:
            text = loose.read_bytes().decode("utf-8", "replace").strip()
        except OSError as exc:
            raise ValueError(f"cannot read .git/{ref} ({exc.strerror or exc}); the repository is damaged") from exc
        if HEX_ID.fullmatch(text):
            return text
        if text.startswith("ref:"):
            return _read_ref(gitdir, text[4:].strip(), depth + 1)
        raise ValueError(
            f".git/{ref} should hold a commit id but holds {text[:60]!r}; the branch is damaged "
            "(restore it from the reflog in .git/logs or from a clone)"
        )
    if loose.exists():
        raise ValueError(f".git/{ref} is a folder, not a ref; the repository is damaged")
    with contextlib.suppress(FileNotFoundError):
        for line in (gitdir / "packed-refs").read_text("utf-8", "replace").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and HEX_ID.fullmatch(sha):
                return sha
    return None


def worktrees_inside(vault: Path) -> list[str]:
    """Linked git worktrees whose folder lies inside the vault (vault-relative paths); [] when unknown."""
    vault = absolute_path(vault)
    if not (vault / ".git").is_dir():
        return []
    try:
        run = GitCli(vault).run("worktree", "list", "--porcelain", optional_locks=False)
    except GitMissing:
        return []
    if run.code != 0:
        return []
    root = Path(os.path.realpath(vault))
    found: list[str] = []
    for line in os.fsdecode(run.out).splitlines():
        if not line.startswith("worktree "):
            continue
        where = Path(os.path.realpath(line[len("worktree ") :]))
        if where == root:
            continue
        with contextlib.suppress(ValueError):
            found.append(where.relative_to(root).as_posix())
    return found


def repack(vault: Path, clock: Callable[[], float] = time.monotonic) -> tuple[str, bool]:
    """A lossless `git repack -d` under our index.lock, when the repository is healthy and the lock free.

    Returns what happened and whether it counts as the day's repack (a busy lock postpones it instead).
    """
    vault = absolute_path(vault)
    health = git_health(vault)
    if not health.ok:
        return f"daily repack skipped: git is degraded ({health.reason}): {health.detail}", True
    git = GitCli(vault)
    lock = acquire(git.gitdir / "index.lock", 0.0, clock=clock)
    if isinstance(lock, str):
        return f"daily repack postponed to a later cycle: {lock}", False
    started = time.perf_counter()
    try:
        run = git.run("repack", "-d", "-q")
    except GitMissing as exc:
        run = GitRun(127, b"", str(exc))
    finally:
        lock.release()
    if run.code != 0:
        return f"daily repack failed (nothing was deleted): {run.why()}", True
    return f"repacked the vault repository (git repack -d, lossless) in {time.perf_counter() - started:.1f} s", True
