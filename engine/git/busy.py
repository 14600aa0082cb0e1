"""Is a user's git operation in progress in the vault repository? Then the committer yields and retries.

A commit cycle moves HEAD, so it must not run while someone else is about to move it:

* a merge, cherry-pick, revert, rebase or `git am` in progress (their state files in `.git/`);
* another process holding `HEAD.lock` or the lock of the branch HEAD names (a `git commit`, `git reset` or
  `git update-ref` moving it right now);
* a `git commit` waiting for its message. Such a commit read HEAD before it started the editor and moves
  HEAD with a compare-and-swap once the editor closes, holding no lock in between; a daemon commit in that
  window makes it fail with `cannot lock ref 'HEAD'`. git writes `.git/COMMIT_EDITMSG` just before it starts
  the editor, so a message file newer than HEAD's last move is the sign. Where `/proc` is readable the sign
  is confirmed by a live process whose arguments name that file (the editor, or the shell git started it
  through), so an abandoned commit never blocks anything; elsewhere the sign alone counts, for at most
  `EDIT_WAIT_SECONDS`;
* a git command the person runs through `agentmd git ...` (a `pull`, a `rebase`, a `push`): it leaves
  `.git/agentmd/pause.json`, naming its process, for as long as it runs, and the committer (and a sync
  round) waits for it, so the person's command never meets the daemon's `index.lock`. A pause whose
  process is gone counts for nothing.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

EDIT_WAIT_SECONDS = 30 * 60.0
_MESSAGE_FILES = ("COMMIT_EDITMSG",)


PAUSE_FILE = "agentmd/pause.json"


def person_pause(gitdir: Path) -> str | None:
    """The git command the person runs through `agentmd git` right now, as a sentence, or None."""
    import json

    try:
        data = json.loads((gitdir / PAUSE_FILE).read_text(encoding="utf-8"))
        pid = int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass  # another user's process: it runs
    return f"`git {data.get('command', '')}` of yours is running (pid {pid}); agentmd commits after it"


@contextlib.contextmanager
def paused_for_person(gitdir: Path, command: str, *, wait: float = 30.0) -> Iterator[None]:
    """Hold the committer back while the person's git command runs: write the pause file, wait (up to
    `wait` seconds) for a commit cycle agentmd is in the middle of to let go of `index.lock`, run the block,
    and remove the file whatever happens."""
    import json

    from agentmd.engine.git.lock import LOCK_MARKER_RE

    path = gitdir / PAUSE_FILE
    path.parent.mkdir(exist_ok=True)
    temp = path.with_name(f".pause.{os.getpid()}")
    temp.write_text(json.dumps({"pid": os.getpid(), "command": command}), encoding="utf-8")
    os.replace(temp, path)
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                held = (gitdir / "index.lock").read_bytes()
            except OSError:
                break
            if not LOCK_MARKER_RE.search(held.decode("utf-8", "replace")):
                break  # someone else's lock: the person's git command says so itself
            time.sleep(0.05)
        yield
    finally:
        with contextlib.suppress(OSError):
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("pid") == os.getpid():
                path.unlink()


def git_operation(gitdir: Path) -> str | None:
    """The git operation a person started and has not ended (a merge, a rebase, a cherry-pick...), as a sentence
    saying how to end it; None when there is none."""
    for name, what, command in (
        ("MERGE_HEAD", "a merge", "merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick", "cherry-pick"),
        ("REVERT_HEAD", "a revert", "revert"),
        ("rebase-merge", "a rebase", "rebase"),
        ("rebase-apply", "a rebase or `git am`", "rebase"),
    ):
        if os.path.lexists(gitdir / name):
            how = (
                "finish it (`agentmd git merge --continue` ends its conflicts by the sync rules, leaving no marker "
                "in a note) or abort it (`git merge --abort`)"
                if name == "MERGE_HEAD"
                else f"finish it (resolve, `git add`, then `git {command} --continue`) or abort it "
                f"(`git {command} --abort`)"
            )
            return f"{what} is in progress in the vault repository (.git/{name}); {how}"
    return None


def operation_in_progress(gitdir: Path, *, now: float | None = None) -> str | None:
    """Why the committer must not move HEAD now (a sentence), or None."""
    paused = person_pause(gitdir)
    if paused:
        return paused
    unfinished = git_operation(gitdir)
    if unfinished:
        return f"{unfinished}, and agentmd commits again on the next cycle"
    with contextlib.suppress(OSError):
        head = (gitdir / "HEAD").read_text("utf-8", "replace").strip()
        if head and not head.startswith("ref:"):  # a checked-out commit, not a branch (a rebase is said above)
            return (
                "HEAD is detached (the vault is not on a branch): a commit made now would be left behind when a "
                "branch is checked out again; check out the vault's branch (`git switch <branch>`), and agentmd "
                "commits what waits on the next cycle"
            )
    for ref in ("HEAD", _head_ref(gitdir)):
        if ref and os.path.isfile(gitdir / f"{ref}.lock"):  # a folder of that name is damage, not a git command
            return (
                f"another git command is moving {ref} (.git/{ref}.lock exists); agentmd retries shortly. If no git "
                "command is running, the lock is stale: delete it by hand"
            )
    editing = commit_message_being_edited(gitdir, now=now)
    if editing:
        return editing
    return None


def _head_ref(gitdir: Path) -> str | None:
    with contextlib.suppress(OSError):
        head = (gitdir / "HEAD").read_text("utf-8", "replace").strip()
        if head.startswith("ref:"):
            ref = head[4:].strip()
            if ref.startswith("refs/") and ".." not in ref:
                return ref
    return None


def _head_moved_at(gitdir: Path) -> int:
    """When HEAD last moved (ns), from the files git rewrites when it does; 0 when unknown."""
    newest = 0
    ref = _head_ref(gitdir)
    for rel in ("HEAD", "logs/HEAD", *((ref, f"logs/{ref}") if ref else ())):
        with contextlib.suppress(OSError):
            newest = max(newest, os.stat(gitdir / rel).st_mtime_ns)
    return newest


def commit_message_being_edited(gitdir: Path, *, now: float | None = None) -> str | None:
    """A sentence when a user's `git commit` (or `--amend`) is waiting for its message, else None."""
    for name in _MESSAGE_FILES:
        try:
            st = os.stat(gitdir / name)
        except OSError:
            continue
        if st.st_mtime_ns < _head_moved_at(gitdir):
            continue  # written before HEAD last moved: that commit is over (same tick: ask /proc)
        editors = _processes_naming(gitdir / name)
        if editors is None:  # no /proc: trust the file's age alone
            age = (time.time() if now is None else now) - st.st_mtime
            if age > EDIT_WAIT_SECONDS:
                continue
        elif not editors:
            continue  # the commit was abandoned (an empty message, a killed editor)
        who = f" (pid {', '.join(str(p) for p in editors[:3])})" if editors else ""
        return (
            f"a `git commit` is waiting for its message in an editor{who}; agentmd does not move HEAD under it and "
            "commits after it finishes"
        )
    return None


def _processes_naming(target: Path) -> list[int] | None:
    """Live processes of this user whose arguments name `target`; None when /proc cannot be read."""
    proc = Path("/proc")
    try:
        entries = os.listdir(proc)
    except OSError:
        return None
    if not (proc / "self" / "cmdline").exists():
        return None
    want = os.path.realpath(target)
    name = os.fsencode(target.name)
    found: list[int] = []
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            raw = (proc / entry / "cmdline").read_bytes()
        except OSError:
            continue
        if name not in raw:
            continue
        args = [a for a in raw.split(b"\0") if name in a]
        try:
            cwd = os.readlink(proc / entry / "cwd")
        except OSError:
            cwd = None
        for arg in args:
            # the argument may be a whole shell command line (`sh -c 'vim "$@"' .git/COMMIT_EDITMSG`)
            for word in os.fsdecode(arg).split():
                word = word.strip("'\"")
                if not word.endswith(target.name):
                    continue
                path = word if os.path.isabs(word) or cwd is None else os.path.join(cwd, word)
                if os.path.realpath(path) == want:
                    found.append(int(entry))
                    break
            else:
                continue
            break
    return found
