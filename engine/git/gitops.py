"""Everything agentmd does with git: health, `init-git`, the corpus-write gate and the committer.

This is the only module that runs git. It drives the git CLI through GitPython's command wrapper
(`git.Git.execute`), never GitPython's own index code, because the CLI honours `.git/index.lock` the
way every other git tool does and GitPython's index writer does not.

Every git process started here is hardened against a hostile or sync-damaged repository:
hooks are pointed at `/dev/null`, `core.fsmonitor` is off, signing is off, and the git directory,
work tree, index, object directory and pathspec mode are set explicitly so that nothing inherited
from the environment can redirect a command. Pathspecs are literal (a note called `[draft].md` is a
file name, not a glob).

The committer's lock protocol
-----------------------------
A commit cycle holds `.git/index.lock` for its whole read-modify-write, as C git does:

1. create `.git/index.lock` exclusively, with the marker `held by agentmd (pid N, host H, boot B)`;
2. copy `.git/index` to a private index in `.git/`; run `git status` and `git add` against the copy
   (`GIT_INDEX_FILE`, so git locks `<copy>.lock`, never the real index) and build each commit object with
   `git write-tree` + `git commit-tree` (no ref moves yet);
3. open a `git update-ref --stdin` transaction and `prepare` it: HEAD and its branch are now locked and
   their old value verified;
4. write the new index bytes into the lock file, fsync it and rename it over `.git/index`, the way git
   publishes an index;
5. `commit` the ref transaction: HEAD moves.

While index.lock is held a user's `git add` or `git commit` fails fast with "index.lock exists" and their
tool retries, instead of racing us. On any failure before step 4 the private files, the ref transaction
and our lock are dropped, and neither `.git/index` nor HEAD has changed. A lock that is not ours is never
removed: the cycle waits (with backoff) and then skips. Our own lock is removed only when its marker names
this host and boot and a process that no longer exists (see `Committer.prepare`).

Why HEAD moves last, but is locked first. `git commit` reads HEAD and the index *before* it takes
index.lock. If HEAD moved first and the index followed a moment later (the order `git commit` itself
uses), a user's commit starting in between would see the new HEAD with the old index and silently revert
our commit in history; the concurrency test caught exactly that with the simple order. Here HEAD is locked
before the index is published and moved right after, so any commit that read the old HEAD fails on the
ref lock or on its compare-and-swap and its tool retries with fresh state; when that happens to our
own compare-and-swap (an as-is `git commit` releases index.lock before it moves HEAD), nothing has been
published yet and the cycle simply starts over.

What no protocol can prevent: an as-is `git commit` that *read* the index while we held the lock and
takes the lock after we release it writes its stale copy back. That is git's own read-before-lock race
(two plain git processes have it too). Its cost is history noise, never content: the user's next commit
may undo a daemon change in history, the file on disk keeps its newest bytes, and the next cycle commits
it again. agentmd's own commits never go backwards.

Staging decision
----------------
The user's staging is theirs. A path whose index entry differs from HEAD (anything `git add`,
`git rm --cached` or `git mv` put there, including a partial `git add -p`) is left exactly as staged:
the cycle neither re-adds nor commits it, and says so once in its warnings. Every other dirty path is
committed. When the user has something staged, our commit trees are built in a second private index
(HEAD plus exactly our entries), so their staged entries never enter our commits, and the published index
keeps them untouched: their own `git commit` later commits exactly what they staged.

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

A repository with no commits is accepted: the first cycle makes the first commit. Until then
`git_health` and the gate report `no-commits`. Nothing here ever initialises a repository on its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import fsync_dir_quietly

ORIGINS = ("capture", "phone", "self-probe", "local-edit")

STALL_AFTER = timedelta(minutes=30)
REPACK_EVERY_SECONDS = 24 * 3600.0
REGISTRATION_TTL_SECONDS = 3600.0  # a note_origin registration whose file never showed up expires
STRAY_TEMP_AGE_SECONDS = 6 * 3600.0
GIT_TIMEOUT_SECONDS = 600.0
AGENTMD_NAME = "agentmd"
AGENTMD_EMAIL = "agentmd@localhost"

LOCK_MARKER_RE = re.compile(r"held by agentmd \(pid (\d+), host (.+), boot ([^()\s]+)\)\n")
_HEX_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_TEMP_INDEX_PREFIX = "index.agentmd-"
_TEMP_NAME_RE = re.compile(r"index\.agentmd-(\d+)-[0-9a-f]+(?:\.lock)?")
# Names a sync client gives its copies: Dropbox/Nextcloud "(conflicted copy ...)", Syncthing
# ".sync-conflict-...", Drive "name (1)", iCloud "name 2". A space is never legal in a ref name.
_SYNC_JUNK_RE = re.compile(r"conflicted copy|\.sync-conflict-|\s", re.IGNORECASE)
_VIM_SWAP_RE = re.compile(r"\.sw[a-px]$")
_SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
)

GITIGNORE_LINES = (
    ".obsidian/workspace*.json",
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
)
_GITIGNORE_HEADER = (
    "# Added by `agentmd init-git`: per-device Obsidian UI state, the Obsidian trash, OS clutter and\n"
    "# editor scratch files stay out of history. agentmd keeps its index and caches outside the vault.\n"
)


class GitError(AgentmdError):
    """A git operation agentmd was asked to do could not be done; the message says how to fix it."""


class _NoGit(Exception):
    """The git executable (or GitPython, which needs it) is not available."""


class _CycleFailure(Exception):
    """A commit cycle failed; the message is what goes into `last_commit_error`."""


class _HeadMoved(_CycleFailure):
    """HEAD changed between our read and our ref lock (a user's `git commit` moves HEAD after it has
    already released index.lock). Nothing was changed; the cycle starts over."""


# --------------------------------------------------------------------------------------------------
# Public value types


@dataclass(frozen=True)
class GitHealth:
    ok: bool
    reason: str | None  # None when ok; "not-a-repository", "no-commits", "git-missing" or "broken"
    detail: str


@dataclass(frozen=True)
class GateResult:
    ok: bool
    reason: str | None  # None when ok; "git-degraded" or "uncommitted-changes"
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def red(self, now: datetime) -> bool:
        """True once the current run of failures started at least 30 minutes before `now`."""
        if self.first_commit_failure is None:
            return False
        try:
            first = _aware(datetime.fromisoformat(self.first_commit_failure))
        except ValueError:
            return True  # an unreadable stamp is not a reason to stay quiet
        return _aware(now) - first >= STALL_AFTER


@dataclass(frozen=True)
class Commit:
    sha: str
    origin: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class CycleResult:
    commits: list[Commit]
    skipped: str | None
    error: str | None
    warnings: list[str]


# --------------------------------------------------------------------------------------------------
# Running git


@dataclass(frozen=True)
class _Run:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return os.fsdecode(self.out).strip()

    def why(self) -> str:
        """The last lines git printed, for an error message."""
        msg = (self.err or os.fsdecode(self.out)).strip()
        lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
        loud = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
        tail = " / ".join((loud or lines)[-3:]) if lines else f"exit status {self.code}, no message"
        return tail[:500]


def _git_module() -> Any:
    try:
        import git  # GitPython: imported lazily because it refuses to import when git is missing
    except ImportError as exc:
        raise _NoGit(str(exc).strip().splitlines()[0] if str(exc).strip() else "GitPython is unavailable") from exc
    return git


class _Git:
    """The git CLI for one vault, with the hardening described in the module docstring."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.gitdir = vault / ".git"
        self.index = self.gitdir / "index"

    def command(
        self,
        args: Sequence[str],
        *,
        index: Path | None = None,
        env: Mapping[str, str] | None = None,
        optional_locks: bool = True,
        repo_options: bool = True,
    ) -> tuple[Any, list[str], dict[str, str]]:
        """GitPython's module, the hardened argv and the environment for one git command."""
        gitmod = _git_module()
        exe = getattr(gitmod.Git, "GIT_PYTHON_GIT_EXECUTABLE", None) or "git"
        argv = [exe, f"--git-dir={self.gitdir}", f"--work-tree={self.vault}", *_SAFE_CONFIG, *args]
        full_env = {
            "GIT_INDEX_FILE": str(index or self.index),
            "GIT_OBJECT_DIRECTORY": str(self.gitdir / "objects"),
            "GIT_COMMON_DIR": str(self.gitdir),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
            "GIT_CONFIG_PARAMETERS": "",
            "GIT_CONFIG_COUNT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_GLOB_PATHSPECS": "0",
            "GIT_NOGLOB_PATHSPECS": "0",
            "GIT_ICASE_PATHSPECS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "true",
            "GIT_OPTIONAL_LOCKS": "1" if optional_locks else "0",
        }
        if not repo_options:  # `git init`: the repository does not exist yet
            for key in ("GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"):
                full_env.pop(key)
        full_env.update(env or {})
        return gitmod, argv, full_env

    def run(
        self,
        *args: str,
        index: Path | None = None,
        env: Mapping[str, str] | None = None,
        optional_locks: bool = True,
        timeout: float = GIT_TIMEOUT_SECONDS,
        repo_options: bool = True,
        stdin: bytes | None = None,
    ) -> _Run:
        gitmod, argv, full_env = self.command(
            args, index=index, env=env, optional_locks=optional_locks, repo_options=repo_options
        )
        with contextlib.ExitStack() as stack:
            istream = None
            if stdin is not None:  # a real file, so any size works without a pipe deadlock
                istream = stack.enter_context(tempfile.TemporaryFile())
                istream.write(stdin)
                istream.seek(0)
            try:
                code, out, err = gitmod.Git(str(self.vault)).execute(
                    argv,
                    istream=istream,
                    env=full_env,
                    with_extended_output=True,
                    with_exceptions=False,
                    stdout_as_string=False,
                    strip_newline_in_stdout=False,
                    kill_after_timeout=timeout,
                )
            except gitmod.exc.GitCommandNotFound as exc:
                raise _NoGit(f"the git executable could not be started ({exc})") from exc
        return _Run(int(code), out if isinstance(out, bytes) else os.fsencode(str(out)), str(err))

    def popen(self, *args: str) -> Any:
        """A git process with pipes on stdin/stdout/stderr, for a conversation (`update-ref --stdin`).

        Returns GitPython's handle; keep it referenced while talking: dropping it terminates the process.
        """
        gitmod, argv, full_env = self.command(args)
        try:
            return gitmod.Git(str(self.vault)).execute(argv, istream=subprocess.PIPE, env=full_env, as_process=True)
        except gitmod.exc.GitCommandNotFound as exc:
            raise _NoGit(f"the git executable could not be started ({exc})") from exc


class _RefUpdate:
    """Moving HEAD as a `git update-ref --stdin` transaction held open across the index publish.

    `prepare` locks HEAD (and the branch it names) and checks its old value; from then on no other
    process can move HEAD until `commit` (or `abort`) ends the transaction.
    """

    def __init__(self, git: _Git, new: str, old: str | None, reflog: str) -> None:
        self.git = git
        self.new = new
        self.old = old or "0" * len(new)  # the zero id: HEAD's branch must not exist yet
        self.reflog = reflog
        self.proc: subprocess.Popen[bytes] | None = None
        self._handle: Any = None  # GitPython's wrapper: it kills the process when garbage-collected

    def _say(self, text: str) -> str:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(text.encode())
            self.proc.stdin.flush()
        except OSError:
            return ""
        return self.proc.stdout.readline().decode("utf-8", "replace").strip()

    def _finish(self) -> str:
        """Close the conversation, wait for git and return what it printed on stderr."""
        assert self.proc is not None
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            err = self.proc.stderr.read() if self.proc.stderr is not None else b""
            self.proc.wait(timeout=GIT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            err = b"git update-ref did not finish in time and was killed"
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        return _Run(1, b"", err.decode("utf-8", "replace")).why()

    def prepare(self) -> None:
        self._handle = self.git.popen("update-ref", "-m", self.reflog, "--stdin")
        self.proc = self._handle.proc
        started = self._say("start\n")
        prepared = self._say(f"update HEAD {self.new} {self.old}\nprepare\n") if started == "start: ok" else ""
        if prepared != "prepare: ok":
            problem = self._finish()
            if "but expected" in problem or "reference already exists" in problem:
                raise _HeadMoved(f"HEAD changed while agentmd was committing ({problem}); nothing was changed")
            raise _CycleFailure(
                f"could not lock HEAD to move it ({problem}); nothing was changed. If another program holds the "
                "branch's .lock file, the next cycle retries; a stale one must be removed by hand"
            )

    def commit(self) -> str | None:
        """Move HEAD; None when done, else git's complaint."""
        answer = self._say("commit\n")
        problem = self._finish()
        assert self.proc is not None
        return None if answer == "commit: ok" and self.proc.returncode == 0 else problem

    def abort(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self._say("abort\n")
            self._finish()


def _abs(vault: Path) -> Path:
    return Path(os.path.abspath(os.fspath(vault)))


def _now_iso(when: datetime) -> str:
    return _aware(when).astimezone(UTC).isoformat(timespec="seconds")


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _listing(paths: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(_printable(p) for p in paths[:limit])
    return shown + (f", and {len(paths) - limit} more" if len(paths) > limit else "")


def _printable(path: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in path)


# --------------------------------------------------------------------------------------------------
# Health


def git_health(vault: Path, *, deep: bool = False) -> GitHealth:
    """Is `vault` a usable git repository? Never raises.

    Cheap by default (file checks plus one `git rev-parse`). `deep=True` adds
    `git fsck --connectivity-only`, which finds objects lost anywhere in history (a deleted pack).
    """
    try:
        return _inspect(_abs(vault), deep=deep)
    except _NoGit as exc:
        return GitHealth(False, "git-missing", f"git is not installed or not on PATH ({exc}); install git and retry")
    except Exception as exc:  # health reporting must never take the caller down
        return GitHealth(False, "broken", f"the repository could not be inspected: {type(exc).__name__}: {exc}")


def _inspect(vault: Path, *, deep: bool = False) -> GitHealth:
    if not vault.is_dir():
        return GitHealth(False, "not-a-repository", f"the vault folder {vault} does not exist or is not a folder")
    gitdir = vault / ".git"
    if not os.path.lexists(gitdir):
        renamed = _renamed_gitdirs(vault)
        if renamed:
            return GitHealth(
                False,
                "not-a-repository",
                f"{vault} has no .git folder, but {_listing(renamed)} looks like one a sync client renamed; "
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
            f"sync-conflict copies inside .git: {_listing(junk, 5)}; a sync client wrote into the repository. "
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
    elif _HEX_ID.fullmatch(head):
        ref, value = "(detached)", head
    else:
        return GitHealth(
            False, "broken", f".git/HEAD holds neither a ref nor a commit id ({head[:60]!r}); the repository is damaged"
        )
    if value is None:
        return GitHealth(
            False,
            "no-commits",
            f"the repository has no commits yet ({ref} is unborn); commit once (the agentmd daemon does so on its "
            "first cycle) to give the vault an undo point",
        )
    git = _Git(vault)
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
        if _HEX_ID.fullmatch(text):
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
            if name.strip() == ref and _HEX_ID.fullmatch(sha):
                return sha
    return None


# --------------------------------------------------------------------------------------------------
# Status parsing and path rules


@dataclass(frozen=True)
class _Entry:
    x: str
    y: str
    path: str

    @property
    def untracked(self) -> bool:
        return self.x == "?"

    @property
    def staged(self) -> bool:
        return self.x not in (" ", "?", "!")

    @property
    def unmerged(self) -> bool:
        return "U" in (self.x, self.y) or self.x + self.y in ("AA", "DD")


def _parse_status(out: bytes) -> list[_Entry]:
    """`git status --porcelain=v1 -z` output as entries (a rename's source becomes its own entry)."""
    fields = out.split(b"\0")
    entries: list[_Entry] = []
    i = 0
    while i < len(fields):
        raw = fields[i]
        i += 1
        if len(raw) < 4:
            continue
        x, y = chr(raw[0]), chr(raw[1])
        entries.append(_Entry(x, y, os.fsdecode(raw[3:])))
        if x in "RC" or y in "RC":
            if i < len(fields) and fields[i]:
                entries.append(_Entry(x, y, os.fsdecode(fields[i])))
            i += 1
    return entries


def _under_dot_dir(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/")[:-1])


def _is_scratch(path: str) -> bool:
    """Editor swap/backup files, sync-client temp files and OS clutter: never committed when untracked."""
    name = path.rsplit("/", 1)[-1]
    return (
        bool(_VIM_SWAP_RE.search(name))
        or name.endswith("~")
        or name.startswith(".#")
        or name == "4913"
        or name in (".DS_Store", "Thumbs.db", "desktop.ini")
        or name.startswith("._")
        or (name.startswith(".~lock.") and name.endswith("#"))
        or path.startswith(".tmp.driveupload/")
        or "/.tmp.driveupload/" in path
        or (name.startswith(".") and name.endswith(".capture-tmp"))  # agentmd's own, mid-capture or crashed
    )


def _status(git: _Git, index: Path | None = None, *, optional_locks: bool = True) -> list[_Entry]:
    run = git.run(
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--no-renames",
        "--ignore-submodules=none",
        index=index,
        optional_locks=optional_locks,
    )
    if run.code != 0:
        raise _CycleFailure(f"`git status` failed: {run.why()}")
    return _parse_status(run.out)


# --------------------------------------------------------------------------------------------------
# Gate and worktrees


def corpus_write_gate(vault: Path) -> GateResult:
    """Pass only with a healthy repository, at least one commit and a clean worktree. No override."""
    vault = _abs(vault)
    health = git_health(vault)
    if not health.ok:
        return GateResult(
            False,
            "git-degraded",
            f"git is degraded ({health.reason}): {health.detail}. A corpus-wide write needs a committed, "
            "healthy repository as its undo point",
        )
    try:
        entries = _status(_Git(vault), optional_locks=False)
    except (_CycleFailure, _NoGit) as exc:
        return GateResult(False, "git-degraded", f"cannot read the worktree state: {exc}")
    if not entries:
        return GateResult(True, None, "the vault is a healthy git repository with a clean worktree")
    paths = list(dict.fromkeys(e.path for e in entries))
    left = [
        e.path
        for e in entries
        if e.staged or (e.untracked and (e.path.endswith("/") or _under_dot_dir(e.path) or _is_scratch(e.path)))
    ]
    detail = (
        f"{_plural(len(paths), 'uncommitted path')}: {_listing(paths)}. Commit them, or let the agentmd daemon "
        "commit them on its next cycle, then run the gate again"
    )
    if left:
        detail += (
            f". The daemon will not commit {_listing(sorted(set(left)), 5)} (paths you staged yourself, untracked "
            "files under dot folders, editor scratch files or nested repositories): commit those yourself or add "
            "them to .gitignore"
        )
    return GateResult(False, "uncommitted-changes", detail)


def worktrees_inside(vault: Path) -> list[str]:
    """Linked git worktrees whose folder lies inside the vault (vault-relative paths); [] when unknown."""
    vault = _abs(vault)
    if not (vault / ".git").is_dir():
        return []
    try:
        run = _Git(vault).run("worktree", "list", "--porcelain", optional_locks=False)
    except _NoGit:
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


# --------------------------------------------------------------------------------------------------
# The lock


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def _marker() -> bytes:
    return f"held by agentmd (pid {os.getpid()}, host {socket.gethostname()}, boot {_boot_id()})\n".encode()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a real pid: treat as alive, i.e. never ours to remove
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but belongs to someone else, or cannot be probed
    return True


def _describe_lock(content: bytes) -> str:
    if not content:
        return "an empty lock (what a running git command leaves)"
    m = LOCK_MARKER_RE.fullmatch(content.decode("utf-8", "replace"))
    if m is None:
        return "a process other than agentmd"
    pid, host, boot = int(m.group(1)), m.group(2), m.group(3)
    if host != socket.gethostname() or boot != _boot_id():
        return f"agentmd pid {pid} on host {host} (boot {boot[:8]}), not this machine or boot"
    state = "running" if _pid_alive(pid) else "no longer running; `agentmd serve` removes it at start"
    return f"agentmd pid {pid} ({state})"


class _IndexLock:
    """`.git/index.lock`, created exclusively and holding our marker until the new index is published."""

    def __init__(self, path: Path, fd: int, marker: bytes) -> None:
        self.path = path
        self.fd: int | None = fd
        self.marker = marker
        self.ino = os.fstat(fd).st_ino

    @classmethod
    def try_create(cls, path: Path) -> _IndexLock | None:
        marker = _marker()
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            return None
        try:
            view = memoryview(marker)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return cls(path, fd, marker)

    def still_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.ino
        except OSError:
            return False

    def publish(self, data: bytes, target: Path) -> None:
        """Write `data` into the lock file and rename it over `target`, the way git publishes an index."""
        assert self.fd is not None
        if not self.still_ours():
            raise _CycleFailure(
                f"{self.path} was removed or replaced by another process while agentmd held it; "
                f"{target} was not updated. Run `git status` and `git reset` if the index looks wrong"
            )
        fd = self.fd
        with contextlib.suppress(OSError):
            os.fchmod(fd, os.stat(target).st_mode & 0o777)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.close(fd)
        self.fd = None
        os.replace(self.path, target)
        fsync_dir_quietly(target.parent)

    def release(self) -> None:
        """Close and remove the lock, but only while it still is the file we created with our marker."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
            if self.still_ours():
                with contextlib.suppress(OSError):
                    if self.path.read_bytes() == self.marker:
                        os.unlink(self.path)



def _lock_age(path: Path) -> float | None:
    try:
        return max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return None


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


# --------------------------------------------------------------------------------------------------
# init-git


def init_git(vault: Path) -> str:
    """`agentmd init-git`: create the repository, a .gitignore, the repo-local gc settings, a first commit."""
    vault = _abs(vault)
    if not vault.is_dir():
        raise GitError(f"the vault folder {vault} does not exist; create it or pass --vault")
    gitdir = vault / ".git"
    if os.path.lexists(gitdir):
        raise GitError(
            f"{vault} already has a .git ({'folder' if gitdir.is_dir() else 'file'}); nothing was changed. "
            "`agentmd status` reports its health; remove .git first only if you really want a new history"
        )
    git = _Git(vault)
    try:
        run = git.run("init", "--quiet", repo_options=False)
    except _NoGit as exc:
        raise GitError(f"git is not installed or not on PATH ({exc}); install git and run init-git again") from exc
    if run.code != 0:
        raise GitError(f"`git init` failed in {vault}: {run.why()}")
    ignore_note = _write_gitignore(vault)
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        cfg = git.run("config", "--local", key, value)
        if cfg.code != 0:
            raise GitError(f"created {gitdir} but could not set {key}={value}: {cfg.why()}; set it with git config")
    committer = Committer(vault, phone_paths=tuple)
    result = committer._cycle(initial=True)
    if result.error or result.skipped:
        raise GitError(
            f"created {gitdir} but the first commit failed: {result.error or result.skipped}. Fix the cause, then "
            "commit by hand or start `agentmd serve`, which commits on its first cycle"
        )
    files = sum(len(c.paths) for c in result.commits)
    sha = result.commits[0].sha[:12] if result.commits else "none (nothing to commit)"
    summary = (
        f"initialised a git repository in {vault}: first commit {sha} with {_plural(files, 'file')} "
        f"(origin: local-edit); {ignore_note}; set gc.auto=0 and maintenance.auto=false"
    )
    left = sorted(committer._untracked_dot_dirs)
    if left:
        summary += f"; left untracked: {_listing(left, 5)} (commit them yourself or add them to .gitignore)"
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
        return f"added {_plural(len(missing), 'line')} to the existing .gitignore"
    path.write_text(_GITIGNORE_HEADER + "\n".join(GITIGNORE_LINES) + "\n", encoding="utf-8")
    return "wrote .gitignore"


# --------------------------------------------------------------------------------------------------
# The committer


@dataclass
class _Registration:
    origin: str
    at: float
    token: int = field(default_factory=lambda: secrets.randbits(48))


class Committer:
    """Commits what git reports dirty, one commit per origin, under the index.lock protocol."""

    def __init__(
        self,
        vault: Path,
        *,
        phone_paths: Callable[[], Sequence[str]],
        large_file_bytes: int = 20 * 2**20,
        lock_wait: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.vault = _abs(vault)
        self.phone_paths = phone_paths
        self.large_file_bytes = large_file_bytes
        self.lock_wait = lock_wait
        self.clock = clock
        self.sleep = sleep
        self.wall = wall
        self.state = CommitState()
        self._git = _Git(self.vault)
        self._registrations: dict[str, _Registration] = {}
        self._reg_mutex = threading.Lock()
        self._cycle_mutex = threading.Lock()
        self._skip_run_started: datetime | None = None
        self._reported: set[str] = set()
        self._last_repack: float | None = None
        self._untracked_dot_dirs: set[str] = set()

    # -- start-up -------------------------------------------------------------------------------

    def prepare(self) -> list[str]:
        """At daemon start: clear our own stale lock and temp files, pin the repo-local gc settings."""
        health = git_health(self.vault)
        if health.reason in ("not-a-repository", "broken", "git-missing"):
            return [f"git is degraded ({health.reason}): {health.detail}; commits are off until it is fixed"]
        lines: list[str] = []
        with self._cycle_mutex:
            line = self._remove_own_stale_lock()
            if line:
                lines.append(line)
            lines.extend(self._sweep_temp_files())
            for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
                current = self._git.run("config", "--local", "--get", key)
                now = current.text if current.code == 0 else None
                if now == value:
                    continue
                run = self._git.run("config", "--local", key, value)
                if run.code == 0:
                    was = f"was {now!r}" if now is not None else "was unset"
                    lines.append(f"set {key}={value} in the vault repository's own config ({was})")
                else:
                    lines.append(f"could not set {key}={value} in the vault repository: {run.why()}")
        return lines

    def _remove_own_stale_lock(self) -> str | None:
        path = self._git.gitdir / "index.lock"
        try:
            before = os.stat(path)
            content = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"cannot read {path} ({exc.strerror or exc}); it is left alone"
        m = LOCK_MARKER_RE.fullmatch(content.decode("utf-8", "replace"))
        age = max(0.0, time.time() - before.st_mtime)
        if m is None:
            return f"{path} exists ({_describe_lock(content)}, age {age:.0f} s); agentmd did not write it and leaves it"
        pid, host, boot = int(m.group(1)), m.group(2), m.group(3)
        if host != socket.gethostname() or boot != _boot_id() or pid == os.getpid() or _pid_alive(pid):
            return f"{path} is held by {_describe_lock(content)} (age {age:.0f} s); it is left alone"
        with contextlib.suppress(FileNotFoundError):
            after = os.stat(path)
            if (after.st_ino, after.st_size, after.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
                return f"{path} changed while it was being checked; it is left alone"
            os.unlink(path)
        return f"removed a stale index.lock left by a dead agentmd (pid {pid})"

    def _sweep_temp_files(self) -> list[str]:
        lines = []
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self._git.gitdir):
                m = _TEMP_NAME_RE.fullmatch(entry.name)
                if m is None or int(m.group(1)) == os.getpid():
                    continue
                with contextlib.suppress(OSError):
                    if not _pid_alive(int(m.group(1))) or now - entry.stat().st_mtime > STRAY_TEMP_AGE_SECONDS:
                        os.unlink(entry.path)
                        lines.append(f"removed a temporary file left by an earlier agentmd: .git/{entry.name}")
        return lines

    # -- origins --------------------------------------------------------------------------------

    def note_origin(self, path: str, origin: str) -> None:
        """Register the origin of a write the daemon is about to make; used when that path is committed."""
        if origin not in ORIGINS:
            raise ValueError(f"unknown commit origin {origin!r}; use one of {', '.join(ORIGINS)}")
        rel = path.replace(os.sep, "/").lstrip("/")
        while rel.startswith("./"):
            rel = rel[2:]
        with self._reg_mutex:
            self._registrations[rel] = _Registration(origin, self.clock())

    def _phone_prefixes(self, warnings: list[str]) -> list[str]:
        try:
            raw = list(self.phone_paths() or ())
        except Exception as exc:
            warnings.append(f"could not read phone_paths ({exc}); phone files are committed as local-edit")
            return []
        prefixes = []
        for p in raw:
            p = str(p).replace("\\", "/").strip().strip("/")
            while p.startswith("./"):
                p = p[2:]
            if p:
                prefixes.append(p + "/")
        return prefixes

    # -- the cycle ------------------------------------------------------------------------------

    def commit_cycle(self) -> CycleResult:
        """One cycle: commit everything dirty, grouped by origin. Never raises."""
        with self._cycle_mutex:
            try:
                return self._cycle()
            except Exception as exc:  # the committer thread must survive anything
                return self._failed(f"unexpected error in the commit cycle: {type(exc).__name__}: {exc}", [])

    def _failed(self, message: str, warnings: list[str], commits: list[Commit] | None = None) -> CycleResult:
        self._skip_run_started = None
        self._count_failure(message, self.wall())
        return CycleResult(commits or [], None, message, warnings)

    def _count_failure(self, message: str, since: datetime) -> None:
        st = self.state
        st.commit_failures += 1
        if st.first_commit_failure is None:
            st.first_commit_failure = _now_iso(since)
        st.last_commit_error = message

    def _skipped(self, message: str, warnings: list[str]) -> CycleResult:
        st = self.state
        st.skipped_cycles += 1
        st.last_skip_reason = message
        now = self.wall()
        if self._skip_run_started is None:
            self._skip_run_started = now
        else:  # the condition outlasted a whole cycle: it now counts towards the stall alarm
            self._count_failure(f"commits blocked for two or more cycles: {message}", self._skip_run_started)
        return CycleResult([], message, None, warnings)

    def _succeeded(self, commits: list[Commit], warnings: list[str]) -> CycleResult:
        st = self.state
        self._skip_run_started = None
        st.commit_failures = 0
        st.first_commit_failure = None
        st.last_commit_error = None
        if commits:
            st.last_commit_at = _now_iso(self.wall())
            st.last_commit_sha = commits[-1].sha
        return CycleResult(commits, None, None, warnings)

    def _cycle(self, *, initial: bool = False) -> CycleResult:
        warnings: list[str] = []
        attempts = 5
        for attempt in range(attempts):
            try:
                return self._attempt(warnings, initial=initial, last=attempt == attempts - 1)
            except _HeadMoved:
                self.sleep(0.01 * 2**attempt)
        raise AssertionError("unreachable: the last attempt never raises _HeadMoved")

    def _attempt(self, warnings: list[str], *, initial: bool, last: bool) -> CycleResult:
        git = self._git
        try:
            health = _inspect(self.vault)
        except _NoGit as exc:
            return self._failed(f"git is not installed or not on PATH ({exc}); install git", warnings)
        if not health.ok and health.reason != "no-commits":
            return self._failed(f"git is degraded ({health.reason}): {health.detail}", warnings)
        busy = self._operation_in_progress()
        if busy:
            return self._skipped(busy, warnings)
        lock = self._acquire(self.lock_wait)
        if isinstance(lock, str):
            return self._skipped(lock, warnings)
        tmp_index = git.gitdir / f"{_TEMP_INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        tree_index = git.gitdir / f"{_TEMP_INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            try:
                base = self._head()
                self._make_private_index(tmp_index, has_head=base is not None)
                entries = _status(git, tmp_index)
                unmerged = sorted({e.path for e in entries if e.unmerged})
                if unmerged:
                    return self._skipped(
                        f"unmerged paths ({_listing(unmerged, 5)}): resolve the conflict and commit it; agentmd "
                        "commits again once the index has no conflicts",
                        warnings,
                    )
                groups = self._plan(entries, warnings, initial=initial)
                if not groups:
                    return self._succeeded([], warnings)
                user_staged = any(e.staged for e in entries)
                commits = self._make_commits(groups, base, tmp_index, tree_index, user_staged, warnings, initial)
                if not commits:
                    return self._succeeded([], warnings)
                new_index = tmp_index.read_bytes()
                ref = _RefUpdate(git, commits[-1].sha, base, _reflog(commits, base))
                ref.prepare()  # HEAD locked and its old value verified, before anything is published
                try:
                    lock.publish(new_index, git.index)
                except BaseException:
                    ref.abort()
                    raise
            except (_CycleFailure, OSError) as exc:
                if isinstance(exc, _HeadMoved) and not last:
                    raise
                message = str(exc) if isinstance(exc, _CycleFailure) else f"file system error in .git: {exc}"
                return self._failed(message, warnings)
        finally:
            lock.release()
            for leftover in (tmp_index, tree_index):
                for name in (leftover, Path(f"{leftover}.lock")):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name)
        # The new index is in place; HEAD, locked since before that, moves now (see "Why HEAD moves last").
        problem = ref.commit()
        if problem:
            return self._head_not_moved(commits, problem, warnings)
        for commit in commits:
            self._consume_registrations(commit.paths)
            warnings.extend(self._large_files(commit.paths))
        return self._succeeded(commits, warnings)

    def _large_files(self, paths: Iterable[str]) -> list[str]:
        found = []
        for path in paths:
            with contextlib.suppress(OSError):
                size = os.lstat(self.vault / path).st_size
                if size > self.large_file_bytes:
                    found.append(
                        f"committed a large file: {_printable(path)} ({size} bytes, {size / 2**20:.1f} MiB); "
                        "big attachments bloat the vault's history, consider keeping them outside the vault"
                    )
        return found

    def _head(self) -> str | None:
        run = self._git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        return run.text if run.code == 0 and run.text else None

    def _make_commits(
        self,
        groups: list[tuple[str, list[str]]],
        base: str | None,
        tmp_index: Path,
        tree_index: Path,
        user_staged: bool,
        warnings: list[str],
        initial: bool,
    ) -> list[Commit]:
        """Build one commit object per origin group, chained on `base`; no ref moves here.

        `tmp_index` (a copy of the real index) receives our paths with `git add` and becomes the published
        index. The commit trees hold HEAD plus our paths only: straight from `tmp_index` when nobody had
        anything staged, otherwise from `tree_index`, rebuilt from the parent commit and given exactly the
        entries `git add` produced, so the user's staged entries never reach our commits.
        """
        git = self._git
        identity = self._identity_env()
        parent = base
        parent_tree = self._tree_of(base) if base else None
        if user_staged and base:
            run = git.run("read-tree", base, index=tree_index)
            if run.code != 0:
                raise _CycleFailure(f"`git read-tree HEAD` into a private index failed: {run.why()}")
        commits: list[Commit] = []
        for origin, paths in groups:
            spec = b"".join(os.fsencode(p) + b"\0" for p in paths)
            run = git.run("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", index=tmp_index, stdin=spec)
            if run.code != 0 and "did not match any files" in run.why():
                # A new file vanished between `git status` and `git add` (an editor's temp file, a sync
                # client's staging copy): leave it out and add the rest; the next cycle sees the new state.
                present = [p for p in paths if os.path.lexists(os.path.join(self.vault, p))]
                tracked = git.run("ls-files", "-z", "--", *[p for p in paths if p not in present], index=tmp_index)
                keep = set(present)
                if tracked.code == 0:
                    keep |= {os.fsdecode(x) for x in tracked.out.split(b"\0") if x}
                paths = [p for p in paths if p in keep]
                if not paths:
                    continue
                spec = b"".join(os.fsencode(p) + b"\0" for p in paths)
                run = git.run(
                    "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", index=tmp_index, stdin=spec
                )
            if run.code != 0:
                raise _CycleFailure(f"`git add` of {_plural(len(paths), 'path')} failed: {run.why()}")
            if user_staged:
                self._copy_entries(paths, tmp_index, tree_index, parent)
            run = git.run("write-tree", index=tree_index if user_staged else tmp_index)
            if run.code != 0:
                raise _CycleFailure(f"`git write-tree` failed: {run.why()}")
            tree = run.text
            if tree == parent_tree:
                continue  # the files went back to their committed content before we read them
            args = ["commit-tree", tree, "--no-gpg-sign", "-F", "-"]
            if parent:
                args[2:2] = ["-p", parent]
            message = _message(origin, paths, initial=initial)
            run = git.run(*args, env=identity, stdin=message.encode("utf-8"))
            if run.code != 0 or not _HEX_ID.fullmatch(run.text):
                raise _CycleFailure(f"`git commit-tree` ({origin}, {_plural(len(paths), 'path')}) failed: {run.why()}")
            commits.append(Commit(run.text, origin, tuple(paths)))
            parent, parent_tree = run.text, tree
        return commits

    def _tree_of(self, commit: str) -> str:
        run = self._git.run("rev-parse", "--verify", f"{commit}^{{tree}}")
        if run.code != 0:
            raise _CycleFailure(f"cannot read the tree of HEAD {commit[:12]}: {run.why()}")
        return run.text

    def _copy_entries(self, paths: list[str], source: Path, target: Path, parent: str | None) -> None:
        """Give `target` exactly the entries `source` holds for `paths` (absent there means removed)."""
        run = self._git.run("ls-files", "--stage", "-z", index=source)
        if run.code != 0:
            raise _CycleFailure(f"`git ls-files` of the private index failed: {run.why()}")
        wanted = set(paths)
        lines: list[bytes] = []
        for record in run.out.split(b"\0"):
            raw_path = record.partition(b"\t")[2]
            if raw_path and os.fsdecode(raw_path) in wanted:
                wanted.discard(os.fsdecode(raw_path))
                lines.append(record)
        if parent:  # mode 0 removes the entry: the path was deleted in the worktree
            zero = "0" * len(parent)
            lines.extend(f"0 {zero}\t".encode() + os.fsencode(p) for p in sorted(wanted))
        if not lines:
            return
        run = self._git.run("update-index", "-z", "--index-info", index=target, stdin=b"\0".join(lines) + b"\0")
        if run.code != 0:
            raise _CycleFailure(f"`git update-index --index-info` failed: {run.why()}")

    def _head_not_moved(self, commits: list[Commit], problem: str, warnings: list[str]) -> CycleResult:
        """The index was published but HEAD could not be moved: put our paths back to unstaged."""
        paths = sorted({p for c in commits for p in c.paths})
        message = (
            f"moving HEAD to the new commit failed after the index was updated ({problem}). Nothing is lost: the "
            "files are unchanged on disk and the next cycle commits them again"
        )
        restored = self._unstage(paths)
        if restored:
            message += f"; {restored}"
        return self._failed(message, warnings)

    def _unstage(self, paths: list[str]) -> str | None:
        """Reset `paths` in the real index to HEAD, under the lock; None when done, else what went wrong."""
        git = self._git
        lock = self._acquire(self.lock_wait)
        if isinstance(lock, str):
            return f"could not re-take the index lock to unstage them ({lock}); run `git reset -q -- <paths>`"
        tmp_index = git.gitdir / f"{_TEMP_INDEX_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            head = self._head()
            self._make_private_index(tmp_index, has_head=head is not None)
            spec = b"".join(os.fsencode(p) + b"\0" for p in paths)
            how = ["reset", "--quiet", head] if head else ["rm", "--cached", "--quiet", "--ignore-unmatch"]
            run = git.run(*how, "--pathspec-from-file=-", "--pathspec-file-nul", index=tmp_index, stdin=spec)
            if run.code not in (0, 1):
                return f"unstaging them failed ({run.why()}); run `git reset -q -- <paths>`"
            lock.publish(tmp_index.read_bytes(), git.index)
            return None
        except (_CycleFailure, OSError) as exc:
            return f"unstaging them failed ({exc}); run `git reset -q -- <paths>`"
        finally:
            lock.release()
            for name in (tmp_index, Path(f"{tmp_index}.lock")):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)

    def _operation_in_progress(self) -> str | None:
        gitdir = self._git.gitdir
        for name, what in (
            ("MERGE_HEAD", "a merge"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or `git am`"),
        ):
            if os.path.lexists(gitdir / name):
                return (
                    f"{what} is in progress in the vault repository (.git/{name}); finish or abort it, and "
                    "agentmd commits again on the next cycle"
                )
        return None

    def _acquire(self, wait: float) -> _IndexLock | str:
        """Take `.git/index.lock`, waiting up to `wait` seconds with backoff; a message when we could not."""
        path = self._git.gitdir / "index.lock"
        start = self.clock()
        delay = 0.01
        for _ in range(100_000):
            lock = _IndexLock.try_create(path)
            if lock is not None:
                return lock
            waited = self.clock() - start
            if waited >= wait:
                break
            self.sleep(min(delay, max(wait - waited, 0.001)))
            delay = min(delay * 2, 0.5)
        content = _read_or_empty(path)
        age = _lock_age(path)
        age_text = f"{age:.0f} s old" if age is not None else "gone by now"
        return (
            f"{path} is held by {_describe_lock(content)}, {age_text}; waited {self.clock() - start:.1f} s and "
            "skipped this cycle (the next cycle retries). agentmd never removes it: if no git command is running, "
            "delete it by hand"
        )

    def _make_private_index(self, tmp_index: Path, *, has_head: bool) -> None:
        try:
            data = self._git.index.read_bytes()
        except FileNotFoundError:
            data = None
        except OSError as exc:
            raise _CycleFailure(f"cannot read {self._git.index} ({exc.strerror or exc})") from exc
        if data is not None:
            fd = os.open(tmp_index, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        elif has_head:  # the index is gone (deleted, or lost to a sync client): start from HEAD, as `git reset`
            run = self._git.run("read-tree", "HEAD", index=tmp_index)
            if run.code != 0:
                raise _CycleFailure(f"the index is missing and `git read-tree HEAD` failed: {run.why()}")

    def _plan(self, entries: list[_Entry], warnings: list[str], *, initial: bool) -> list[tuple[str, list[str]]]:
        staged_by_user = sorted({e.path for e in entries if e.staged})
        nested = sorted({e.path for e in entries if e.untracked and e.path.endswith("/")})
        chosen: list[str] = []
        self._untracked_dot_dirs = set()
        blocked = set(staged_by_user)
        for e in entries:
            if e.path in blocked or e.path.endswith("/"):
                continue
            if e.untracked:
                if _under_dot_dir(e.path) and not (initial and e.path.startswith(".obsidian/")):
                    self._untracked_dot_dirs.add(e.path.split("/")[0] + "/")
                    continue
                if _is_scratch(e.path) or not os.path.lexists(self.vault / e.path):
                    continue
            chosen.append(e.path)
        persistent = set()
        if staged_by_user:
            persistent.add(
                f"left {_plural(len(staged_by_user), 'path')} staged by someone else for them to commit: "
                f"{_listing(staged_by_user)}"
            )
        if nested:
            persistent.add(
                f"left nested git repositories or worktrees alone: {_listing(nested)} (agentmd never commits them)"
            )
        warnings.extend(sorted(persistent - self._reported))
        self._reported = persistent
        by_origin: dict[str, list[str]] = {}
        prefixes = self._phone_prefixes(warnings)
        with self._reg_mutex:
            now = self.clock()
            for key in [k for k, r in self._registrations.items() if now - r.at > REGISTRATION_TTL_SECONDS]:
                del self._registrations[key]
            registered = {p: r.origin for p, r in self._registrations.items()}
        for path in dict.fromkeys(chosen):
            origin = registered.get(path)
            if origin is None:
                origin = "phone" if any(path.startswith(pre) for pre in prefixes) else "local-edit"
            by_origin.setdefault(origin, []).append(path)
        return [(o, sorted(by_origin[o])) for o in ORIGINS if o in by_origin]

    def _identity_env(self) -> dict[str, str]:
        run = self._git.run("config", "--get-regexp", r"^user\.(name|email)$")
        keys = {line.split(" ", 1)[0].lower() for line in run.text.splitlines() if " " in line}
        if {"user.name", "user.email"} <= keys:
            return {}
        return {
            "GIT_AUTHOR_NAME": AGENTMD_NAME,
            "GIT_AUTHOR_EMAIL": AGENTMD_EMAIL,
            "GIT_COMMITTER_NAME": AGENTMD_NAME,
            "GIT_COMMITTER_EMAIL": AGENTMD_EMAIL,
        }

    def _consume_registrations(self, paths: Iterable[str]) -> None:
        with self._reg_mutex:
            for path in paths:
                self._registrations.pop(path, None)

    # -- maintenance ----------------------------------------------------------------------------

    def repack_if_due(self) -> str | None:
        """At most once per 24 h (injected clock): a lossless `git repack -d` under our index.lock."""
        with self._cycle_mutex:
            now = self.clock()
            if self._last_repack is not None and now - self._last_repack < REPACK_EVERY_SECONDS:
                return None
            health = git_health(self.vault)
            if not health.ok:
                self._last_repack = now
                return f"daily repack skipped: git is degraded ({health.reason}): {health.detail}"
            lock = self._acquire(0.0)
            if isinstance(lock, str):
                return f"daily repack postponed to a later cycle: {lock}"
            started = time.perf_counter()
            try:
                run = self._git.run("repack", "-d", "-q")
            except _NoGit as exc:
                run = _Run(127, b"", str(exc))
            finally:
                lock.release()
            self._last_repack = now
            if run.code != 0:
                return f"daily repack failed (nothing was deleted): {run.why()}"
            return f"repacked the vault repository (git repack -d, lossless) in {time.perf_counter() - started:.1f} s"


def _reflog(commits: Sequence[Commit], base: str | None) -> str:
    kind = "commit (initial)" if base is None else "commit"
    if len(commits) == 1:
        return f"{kind}: {_message(commits[0].origin, commits[0].paths).splitlines()[0]}"
    return f"{kind}: agentmd, {len(commits)} commits ({', '.join(c.origin for c in commits)})"


def _message(origin: str, paths: Sequence[str], *, initial: bool = False) -> str:
    """Summary line, blank line, `origin:` trailer, final newline (so git parses the trailer)."""
    if initial:
        summary = f"{origin}: initial commit of {_plural(len(paths), 'file')}"
    else:
        shown = ", ".join(_printable(p) for p in paths[:3])
        more = f", and {len(paths) - 3} more" if len(paths) > 3 else ""
        summary = f"{origin}: {_plural(len(paths), 'file')} ({shown}{more})"
    return f"{summary}\n\norigin: {origin}\n"
