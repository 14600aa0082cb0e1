"""The committer: commits what git reports dirty in the vault, one commit per origin.

Each commit carries an `origin:` trailer (capture, phone, self-probe, morning or local-edit): the daemon
registers the origin of its own writes with `note_origin` (kept across a crash: `agentmd.engine.git.origins`),
files under the contract's phone paths are `phone`, and everything else is `local-edit`. When to run a cycle
(the debounce after the last write, bounded by a maximum wait) is the daemon's decision
(`agentmd.engine.git.schedule`); a cycle commits whatever is dirty at that moment, except, for the daemon's
committer, files still being written: those wait until they settle (`agentmd.engine.git.settle`), and the
commit objects are built in `agentmd.engine.git.staging`.

The lock protocol
-----------------
A commit cycle holds `.git/index.lock` for its whole read-modify-write, as C git does:

1. create `.git/index.lock` exclusively, with the marker `held by agentmd (pid N, host H, boot B)`;
2. copy `.git/index` to a private index in `.git/`, keeping its mtime (`make_private_index` says why);
   run `git status` and `git add` against the copy
   (`GIT_INDEX_FILE`, so git locks `<copy>.lock`, never the real index) and build each commit object with
   `git write-tree` + `git commit-tree` (no ref moves yet);
3. open a `git update-ref --stdin` transaction and `prepare` it: HEAD and its branch are now locked and
   their old value verified;
4. record the intent (HEAD's old and new value, the entries staged) in the state folder, then fsync the
   private index and rename it over `.git/index` (the lock file keeps our marker throughout);
5. `commit` the ref transaction: HEAD moves, and the intent record is deleted.

While index.lock is held a user's `git add` or `git commit` fails fast with "index.lock exists" and their
tool retries, instead of racing us. On any failure before step 4 the private files, the ref transaction
and our lock are dropped, and neither `.git/index` nor HEAD has changed. A crash between steps 4 and 5 is
finished by the next cycle from the intent record (`agentmd.engine.git.recovery`). Whose lock is whose, and
when one may be removed, is `agentmd.engine.git.lock`. A user's git operation in progress (a merge, a
`git commit` waiting in its editor, a held HEAD.lock) makes the cycle yield: it is skipped and retried
(`agentmd.engine.git.busy`).

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

Failures and skips are counted by `agentmd.engine.git.health.CommitAccounting`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmd.engine.breaker import MASS_DELETE_MIN_NOTES, MASS_DELETE_SHARE, is_mass_deletion, is_note
from agentmd.engine.failpoints import failpoint
from agentmd.engine.git.busy import operation_in_progress
from agentmd.engine.git.changes import (
    StatusEntry,
    dot_folder,
    in_obsidian_settings,
    is_scratch,
    large_files,
    read_status,
)
from agentmd.engine.git.health import (
    REPACK_EVERY_SECONDS,
    CommitAccounting,
    awaits_first_sync,
    git_health,
    inspect_repo,
    repack,
)
from agentmd.engine.git.lock import (
    IndexLock,
    acquire,
    make_private_index,
    private_index_path,
    remove_own_stale_lock,
    sweep_private_indexes,
)
from agentmd.engine.git.origins import JOURNAL_NAME, ORIGINS, OriginBook
from agentmd.engine.git.recovery import INTENT_NAME, clear_intent, index_entries, recover, unstage, write_intent
from agentmd.engine.git.refs import HeadMoved, RefUpdate
from agentmd.engine.git.runner import CycleFailure, GitCli, GitMissing, absolute_path, listing, plural
from agentmd.engine.git.settle import Settling
from agentmd.engine.git.staging import Commit, Group, Indexes, make_commits, reflog
from agentmd.engine.git.tree_move import finish_unfinished
from agentmd.engine.settings import COMMIT_MAX_DEFERRAL, COMMIT_MAX_MB

if TYPE_CHECKING:
    from agentmd.engine.settings import Settings
    from agentmd.rules import ContractCache
    from agentmd.rules.contract.synctool import SyncToolPatterns

__all__ = ["ORIGINS", "Commit", "Committer", "CycleResult"]

AGENTMD_NAME = "agentmd"
AGENTMD_EMAIL = "agentmd@localhost"


@dataclass(frozen=True)
class CycleResult:
    commits: list[Commit]
    skipped: str | None
    error: str | None
    warnings: list[str]
    deferred: tuple[str, ...] = ()  # files still being written, left for a later cycle (engine/git/settle.py)
    retry_in: float | None = None  # seconds from now when that cycle should run


class Committer:
    """Commits what git reports dirty, one commit per origin, under the index.lock protocol."""

    def __init__(
        self,
        vault: Path,
        *,
        phone_paths: Callable[[], Sequence[str]],
        large_file_bytes: int = 20 * 2**20,
        max_file_bytes: int = COMMIT_MAX_MB * 2**20,
        lock_wait: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        state_dir: Path | None = None,
        vault_check: Callable[[], str | None] | None = None,
        sync_patterns: Callable[[], SyncToolPatterns] | None = None,
        settle: float = 0.0,
        max_defer: float = COMMIT_MAX_DEFERRAL,
    ) -> None:
        """`state_dir` (the daemon's state folder) holds the origin journal, and with it given the intent record
        is kept in `.git/agentmd/`, so that pending origins and a half-finished cycle survive a crash; without it
        both live in memory only.
        `vault_check` says what is wrong when the folder at the vault's path is no longer the vault that was
        opened (None when it is); a cycle asks it before it starts and again before it locks HEAD, so a vault
        swapped for an empty folder mid-cycle gets no `.git` written into that folder. `settle` (seconds; the
        daemon's `COMMIT_SETTLE`) leaves files still being written to a later cycle, for at most `max_defer`
        seconds (`agentmd.engine.git.settle`); 0, for a caller no later cycle follows, commits them as they are."""
        self.vault = absolute_path(vault)
        self.vault_check = vault_check
        self.phone_paths = phone_paths
        self.sync_patterns = sync_patterns  # the contract's own sync-tool patterns: never committed
        self.large_file_bytes = large_file_bytes  # committed with a warning above this
        self.max_file_bytes = max_file_bytes  # a new file above this is not committed at all
        self.lock_wait = lock_wait
        self.clock = clock
        self.sleep = sleep
        self.wall = wall
        # The accounting reads `self.wall` at every stamp, so a wall clock assigned later takes effect.
        self._accounting = CommitAccounting(lambda: self.wall())
        self.state = self._accounting.state
        self.state.large_file_limit = max_file_bytes
        self._git = GitCli(self.vault)
        self.origins = OriginBook(state_dir / JOURNAL_NAME if state_dir is not None else None)
        # The intent record lives beside the repository it describes (`.git/agentmd/`), on the disk the commit
        # itself needs: a full state disk must not stop commits that the vault's disk has room for.
        self._intent = self._git.gitdir / "agentmd" / INTENT_NAME if state_dir is not None else None
        self._old_intent = state_dir / INTENT_NAME if state_dir is not None else None  # where earlier versions kept it
        self._cycle_mutex = threading.RLock()  # re-entrant: a thread that paused the cycles may run one itself
        self._round_mutex = threading.Lock()  # one sync round at a time, its outcome recorded before the next
        self._reported: set[str] = set()
        self._last_repack: float | None = None
        self._untracked_dot_files: dict[str, str] = {}  # untracked file -> the dot folder it lies in
        self._deletion_allowed = False
        self._settling = Settling(settle, max_defer, clock=lambda: self.clock(), wall=lambda: self.wall())

    # -- start-up -------------------------------------------------------------------------------

    def prepare(self) -> list[str]:
        """At daemon start: clear our own stale lock and temp files, pin the repo-local gc settings."""
        health = git_health(self.vault)
        if health.reason in ("not-a-repository", "broken", "git-missing"):
            return [f"git is degraded ({health.reason}): {health.detail}; commits are off until it is fixed"]
        lines: list[str] = []
        with self._cycle_mutex:
            line = remove_own_stale_lock(self._git.gitdir)
            if line:
                lines.append(line)
            lines.extend(sweep_private_indexes(self._git.gitdir))
            lines.extend(self._recover_at_start())
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

    def _recover_at_start(self) -> list[str]:
        """Finish a cycle the last run left between publishing the index and moving HEAD (else the first
        cycle does, under its own lock)."""
        if self._intent is None:
            return []
        if self._old_intent is not None and os.path.lexists(self._old_intent) and not os.path.lexists(self._intent):
            self._intent.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._old_intent, self._intent)
        if not os.path.lexists(self._intent):
            return []
        lock = self._acquire(self.lock_wait)
        if isinstance(lock, str):
            return [f"an interrupted commit is finished by the first cycle: {lock}"]
        try:
            return recover(self._git, self._intent, lock)
        except CycleFailure as exc:
            return [str(exc)]
        finally:
            lock.release()

    @contextlib.contextmanager
    def sync_round(self) -> Iterator[None]:
        """One sync round of this vault at a time, from its first commit to its recorded outcome: a round that
        finished its git work first must not write its success over the failure of a round that ran after it."""
        with self._round_mutex:
            yield

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No other thread's commit cycle runs while the block does (a sync round moving the work tree and HEAD,
        a curation step between its first write and its own commit cycle, which the block may run)."""
        with self._cycle_mutex:
            yield

    def hold(self, reason: str | None) -> None:
        """Record that the daemon holds every commit back for `reason` (None: no longer); see `CommitState`."""
        self._accounting.held(reason)

    def allow_mass_deletion(self) -> None:
        """Let the next cycle commit a deletion the mass-deletion breaker would hold back (the daemon calls
        this after the pass `agentmd reindex --allow-mass-delete` asked for); a later one trips it again."""
        self._deletion_allowed = True

    def first_commit(self) -> CycleResult:
        """`agentmd init-git`'s first commit: like a cycle, but the Obsidian settings folders (`.obsidian/`,
        and those of vaults nested in folders) are committed too."""
        return self._cycle(initial=True)

    @property
    def untracked_dot_files(self) -> dict[str, str]:
        """The untracked files under dot folders the last cycle left alone (it never commits them on its own),
        each with the dot folder it lies in."""
        return dict(sorted(self._untracked_dot_files.items()))

    # -- origins --------------------------------------------------------------------------------

    def note_origin(self, path: str, origin: str, written: bytes | None = None) -> str | None:
        """Register the origin of a write the daemon is about to make; used when that path is committed, while
        the file holds `written` (when given: a save over them is someone else's, `OriginBook.unlike`). With a
        state folder it is on disk when this returns; else the problem that kept it off the disk."""
        return self.origins.note(path, origin, written)

    def withdraw_origin(self, path: str) -> None:
        """A registered write that did not happen after all: what the path holds is committed as anyone's."""
        self.origins.consume([path])

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

    def commit_cycle(self, *, final: bool = False, waited: float = 0.0) -> CycleResult:
        """One cycle: commit everything dirty, grouped by origin, except files still being written (left in
        `deferred` for a later cycle; `final`: none is left). `waited` is how many seconds ago the first change
        this cycle takes was seen (the daemon's schedule): a file still being written counts its time of
        deferral from then. Never raises."""
        with self._cycle_mutex:
            try:
                return self._cycle(final=final, waited=waited)
            except Exception as exc:  # the committer thread must survive anything
                return self._failed(f"unexpected error in the commit cycle: {type(exc).__name__}: {exc}", [])

    def _failed(self, message: str, warnings: list[str], commits: list[Commit] | None = None) -> CycleResult:
        self._accounting.failed(message)
        return CycleResult(commits or [], None, message, warnings)

    def _skipped(self, message: str, warnings: list[str]) -> CycleResult:
        self._accounting.skipped(message)
        return CycleResult([], message, None, warnings)

    def _succeeded(self, commits: list[Commit], warnings: list[str]) -> CycleResult:
        self._accounting.succeeded(commits[-1].sha if commits else None)
        waiting = self._settling
        return CycleResult(commits, None, None, warnings, tuple(waiting.deferred), waiting.retry_in)

    def _cycle(self, *, initial: bool = False, final: bool = False, waited: float = 0.0) -> CycleResult:
        warnings: list[str] = []
        attempts = 5
        for attempt in range(attempts):
            try:
                last = attempt == attempts - 1
                return self._attempt(warnings, initial=initial, final=final, waited=waited, last=last)
            except HeadMoved:
                self.sleep(0.01 * 2**attempt)
        raise AssertionError("unreachable: the last attempt never raises HeadMoved")

    def _attempt(self, warnings: list[str], *, initial: bool, final: bool, waited: float, last: bool) -> CycleResult:
        git = self._git
        replaced = self.vault_check() if self.vault_check is not None else None
        if replaced:
            return self._failed(replaced, warnings)
        try:
            health = inspect_repo(self.vault)
        except GitMissing as exc:
            return self._failed(f"git is not installed or not on PATH ({exc}); install git", warnings)
        if not health.ok and health.reason != "no-commits":
            return self._failed(f"git is degraded ({health.reason}): {health.detail}", warnings)
        waiting = awaits_first_sync(git) if health.reason == "no-commits" else None
        if waiting:
            return self._skipped(waiting, warnings)
        failpoint("before-commit-cycle")
        # A sync round killed while it moved the work tree: its files read as edits of the old commit until
        # the move is finished, so it is finished before anything is committed.
        finish_unfinished(git, self.identity_env())
        busy = operation_in_progress(git.gitdir)
        if busy:
            return self._skipped(busy, warnings)
        lock = self._acquire(self.lock_wait)
        if isinstance(lock, str):
            return self._skipped(lock, warnings)
        tmp_index = private_index_path(git.gitdir)
        tree_index = private_index_path(git.gitdir)
        try:
            try:
                if self._intent is not None and os.path.lexists(self._intent):
                    warnings.extend(recover(git, self._intent, lock))
                base = self._head()
                repaired = make_private_index(git, tmp_index, has_head=base is not None, lock=lock)
                warnings.extend([repaired] if repaired else [])
                entries = read_status(git, tmp_index, extra=self._patterns())
                unmerged = sorted({e.path for e in entries if e.unmerged})
                if unmerged:
                    return self._skipped(
                        f"unmerged paths ({listing(unmerged, 5)}): resolve the conflict and commit it; agentmd "
                        "commits again once the index has no conflicts",
                        warnings,
                    )
                held = self._mass_deletion(entries, tmp_index)
                if held:
                    if held != self.state.mass_deletion:
                        warnings.append(
                            f"nothing committed: {held}, which looks like an unmounted or emptied vault; restore "
                            "the files, or run `agentmd reindex --allow-mass-delete` if the deletion is deliberate"
                        )
                    self._accounting.deletion_held(held)
                    return CycleResult([], None, None, warnings)
                self._accounting.deletion_held(None)
                groups = self._plan(entries, warnings, initial=initial, final=final, waited=waited)
                if not groups:
                    return self._succeeded([], warnings)
                indexes = Indexes(tmp_index, tree_index, any(e.staged for e in entries))
                commits = make_commits(
                    git, groups, base, indexes, settling=self._settling, identity=self.identity_env(), initial=initial
                )
                if not commits:
                    return self._succeeded([], warnings)
                ours = sorted({p for c in commits for p in c.paths})
                staged = index_entries(git, tmp_index, ours) if self._intent is not None else {}
                replaced = self.vault_check() if self.vault_check is not None else None
                if replaced:  # the folder was swapped during the cycle: lock nothing in the folder now there
                    raise CycleFailure(f"{replaced}; nothing was committed")
                ref = RefUpdate(git, commits[-1].sha, base, reflog(commits, base))
                ref.prepare()  # HEAD locked and its old value verified, before anything is published
                try:
                    if self._intent is not None:
                        write_intent(self._intent, base, commits[-1].sha, staged)
                    lock.publish(tmp_index, git.index)
                except BaseException:
                    ref.abort()
                    raise
            except (CycleFailure, OSError) as exc:
                if isinstance(exc, HeadMoved) and not last:
                    raise
                message = str(exc) if isinstance(exc, CycleFailure) else f"file system error: {exc}"
                return self._failed(message, warnings)
        finally:
            lock.release()
            for leftover in (tmp_index, tree_index):
                for name in (leftover, Path(f"{leftover}.lock")):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name)
        # The new index is in place; HEAD, locked since before that, moves now (see "Why HEAD moves last").
        failpoint("after-index-published")
        problem = ref.commit()
        if problem:
            return self._head_not_moved(commits, problem, warnings)
        if self._intent is not None:
            clear_intent(self._intent)
        for commit in commits:
            self._settling.committed([p for p in commit.paths if p not in commit.written])
            self.origins.consume(commit.paths)
            warnings.extend(large_files(self.vault, commit.paths, self.large_file_bytes))
        if self.origins.problem:
            warnings.append(self.origins.problem)
        return self._succeeded(commits, warnings)

    def _head(self) -> str | None:
        run = self._git.run("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        return run.text if run.code == 0 and run.text else None

    def _head_not_moved(self, commits: list[Commit], problem: str, warnings: list[str]) -> CycleResult:
        """The index was published but HEAD could not be moved: put our paths back to unstaged."""
        paths = sorted({p for c in commits for p in c.paths})
        message = (
            f"moving HEAD to the new commit failed after the index was updated ({problem}). Nothing is lost: the "
            "files are unchanged on disk and the next cycle commits them again"
        )
        lock = self._acquire(self.lock_wait)
        if isinstance(lock, str):
            restored: str | None = f"could not re-take the index lock to unstage them ({lock})"
        else:
            try:
                restored = unstage(self._git, lock, paths, self._head())
            finally:
                lock.release()
        if restored:
            message += f"; {restored}" + ("; the next cycle retries" if self._intent is not None else "")
        elif self._intent is not None:
            clear_intent(self._intent)
        return self._failed(message, warnings)

    def _acquire(self, wait: float) -> IndexLock | str:
        """Take `.git/index.lock`, waiting up to `wait` seconds with backoff; a message when we could not."""
        return acquire(self._git.gitdir / "index.lock", wait, clock=self.clock, sleep=self.sleep)

    def _mass_deletion(self, entries: list[StatusEntry], tmp_index: Path) -> str | None:
        """Why this cycle must not commit (the breaker's verdict on the notes deleted from the worktree), or
        None. The reconcile pass applies the same rule to the index; this check covers a cycle that runs
        between a deletion and the pass that would refuse it. A held allowance is spent here."""
        allowed, self._deletion_allowed = self._deletion_allowed, False
        removed = sum(1 for e in entries if e.x == " " and e.y == "D" and is_note(e.path))
        if allowed or removed <= MASS_DELETE_SHARE * MASS_DELETE_MIN_NOTES:
            return None  # a count this small trips the breaker at no vault size: no need to count the notes
        run = self._git.run("ls-files", "-z", index=tmp_index)
        if run.code != 0:
            raise CycleFailure(f"`git ls-files` failed: {run.why()}")
        notes = sum(1 for raw in run.out.split(b"\0") if raw and is_note(os.fsdecode(raw)))
        if not is_mass_deletion(removed, notes):
            return None
        return f"{removed} of {notes} committed notes deleted at once"

    def _patterns(self) -> SyncToolPatterns | None:
        """The contract's own sync-tool patterns (temp files and placeholders are never committed), if any."""
        return self.sync_patterns() if self.sync_patterns is not None else None

    def _plan(
        self, entries: list[StatusEntry], warnings: list[str], *, initial: bool, final: bool, waited: float
    ) -> list[Group]:
        staged_by_user = sorted({e.path for e in entries if e.staged})
        nested = sorted({e.path for e in entries if e.untracked and e.path.endswith("/")})
        chosen: list[str] = []
        self._untracked_dot_files = {}
        held_large: dict[str, int] = {}
        blocked = set(staged_by_user)
        patterns = self._patterns()
        for e in entries:
            if e.path in blocked or e.path.endswith("/"):
                continue
            if e.untracked:
                folder = dot_folder(e.path)
                if folder is not None and not (initial and in_obsidian_settings(e.path)):
                    self._untracked_dot_files[e.path] = folder
                    continue
                if is_scratch(e.path, patterns) or not os.path.lexists(self.vault / e.path):
                    continue
                size = _size(self.vault / e.path)
                if size > self.max_file_bytes:  # git would keep it forever: a file git already tracks is let through
                    held_large[e.path] = size
                    continue
            chosen.append(e.path)
        self.state.large_files_held, self.state.staged_by_others = held_large, staged_by_user
        self.state.untracked_dot_files = sorted(self._untracked_dot_files)
        persistent = set()
        if staged_by_user:
            persistent.add(
                f"left {plural(len(staged_by_user), 'path')} staged by someone else for them to commit: "
                f"{listing(staged_by_user)}"
            )
        if nested:
            persistent.add(
                f"left nested git repositories or worktrees alone: {listing(nested)} (agentmd never commits them)"
            )
        warnings.extend(sorted(persistent - self._reported))
        self._reported = persistent
        by_origin: dict[str, list[str]] = {}
        prefixes = self._phone_prefixes(warnings)
        # registrations whose writer is gone and whose path has nothing pending are spent
        registered = self.origins.current(pending={e.path for e in entries})
        # Saved over by someone since the writer wrote: the file is theirs now. The writer's own bytes, when
        # this process still holds them, are committed first under the writer's origin.
        written: dict[str, dict[str, bytes]] = {}
        for path, own in self.origins.unlike(self.vault, registered).items():
            writer = registered.pop(path)
            if own is not None and path in chosen and writer != "local-edit":
                written.setdefault(writer, {})[path] = own
        ready = self._settling.sort(
            self.vault,
            list(dict.fromkeys(chosen)),
            exempt=registered,
            final=final or initial,
            waited=waited,
            warnings=warnings,
        )
        for path in ready:
            origin = registered.get(path)
            if origin is None:
                origin = "phone" if any(path.startswith(pre) for pre in prefixes) else "local-edit"
            by_origin.setdefault(origin, []).append(path)
        for origin, own_bytes in written.items():
            by_origin.setdefault(origin, []).extend(own_bytes)
        return [Group(o, sorted(by_origin[o]), written.get(o, {})) for o in ORIGINS if o in by_origin]

    def identity_env(self) -> dict[str, str]:
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

    # -- maintenance ----------------------------------------------------------------------------

    def repack_if_due(self) -> str | None:
        """At most once per 24 h (injected clock): a lossless `git repack -d` under our index.lock."""
        with self._cycle_mutex:
            now = self.clock()
            if self._last_repack is not None and now - self._last_repack < REPACK_EVERY_SECONDS:
                return None
            message, done = repack(self.vault, clock=self.clock)
            if done:
                self._last_repack = now
            return message


def committer_for(settings: Settings, contracts: ContractCache, **kwargs: Any) -> Committer:
    """The vault's committer as every writer makes it (the daemon, the CLI without one, curation, sync): the
    state folder's origin journal and intent record, the contract's phone folders, the size limit."""
    return Committer(
        settings.vault,
        phone_paths=lambda: contracts.get().contract.phone_paths,
        sync_patterns=lambda: contracts.get().contract.sync_tool_patterns,
        state_dir=settings.state_dir,
        max_file_bytes=settings.commit_max_bytes,
        **kwargs,
    )


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0
