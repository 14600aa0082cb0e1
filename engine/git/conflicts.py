"""Conflict siblings: a version of a note that could not be merged, kept beside the note for a person to judge.

Two writers leave them. A sync round (`agentmd.engine.git.sync`) keeps the other machine's version of a note
changed on both machines; an undo (`agentmd.engine.git.undo`) keeps the version the undo would have written
when a later edit touched the same lines. Either way the note keeps its current text at its path, and the
other version becomes `<name>.conflict-<who>-<date>.md` beside it (`sibling_name`: `<who>` is the other
machine's name, or `undo`), marked in its frontmatter with `status: conflict` and `conflict_of: "[[<name>]]"`
(`conflict_text`), so the review queue lists it and the index never mistakes it for the note. No conflict
marker (`<<<<<<<`) ever reaches a note.

The one list of the conflicts left is the `conflicts` list of `<state>/sync-state.json` (`{"path", "sibling"}`
entries, the last 50): `agentmd conflicts` lists the siblings still open (`open_conflicts`: still there and
still marked) and `agentmd resolve` ends one. A sibling a person kept as a note of their own (the mark
removed) or deleted is resolved.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from agentmd.vault_schema import CONFLICT_STATUS

if TYPE_CHECKING:
    from agentmd.engine.git.runner import GitCli

STATE_FILE = "sync-state.json"  # the sync state, which holds the one list of conflicts
KEPT_CONFLICTS = 50  # ended conflicts the list keeps; every open one is kept
_THREADS = threading.Lock()  # this process's writers of the sync state (the sync job, POST /v1/sync, undo)
LOCK_NAME = "sync-state.lock"


@contextlib.contextmanager
def state_lock(state_dir: Path) -> Iterator[None]:
    """Held while the sync state is read and written back: by this process's threads (a lock) and by other
    processes (a flock on `sync-state.lock` beside it: `agentmd sync` or `undo` run while a daemon starts)."""
    with _THREADS:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(state_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock


BEFORE = "status_before_conflict"  # the status a marked version had
_STATUS = re.compile(r"(?m)^status:(.*)$")


def machine_label(who: str) -> str:
    """A machine's name as a sibling's name holds it: letters, digits and dashes."""
    return re.sub(r"[^A-Za-z0-9-]+", "-", who.strip()).strip("-")[:40]


def sibling_machine(sibling: str) -> str | None:
    """The machine (or `undo`) whose version a sibling holds, as its name says; None for another name."""
    found = re.search(r"\.conflict-(.+)-\d{8}-\d{6}(?:-\d+)?\.md$", sibling)
    return found.group(1) if found else None


def holds_own_version(vault: Path, sibling: str) -> bool:
    """Whether a sibling holds this machine's own version: named after this machine, and brought in by a commit
    another machine made (its merge set this machine's version aside). Two machines of one name tell nothing
    apart: a sibling a merge made here holds the other machine's version."""
    from agentmd.engine.git.runner import GitCli
    from agentmd.engine.settings import host_name

    me = machine_label(host_name())
    if sibling_machine(sibling) != me:
        return False
    run = GitCli(vault).run("log", "-1", "--format=%(trailers:key=host,valueonly)", "--", sibling)
    made_by = run.text.strip() if run.code == 0 else ""
    return bool(made_by) and machine_label(made_by) != me


def sibling_name(path: str, who: str, now: dt.datetime) -> str:
    """`<name>.conflict-<who>-<date>.md` beside the note `path`; `who` is reduced to letters, digits and dashes."""
    other = machine_label(who)
    stem = path[: -len(".md")] if path.lower().endswith(".md") else path
    return f"{stem}.conflict-{other or 'remote'}-{now.strftime('%Y%m%d-%H%M%S')}.md"


def conflict_text(data: bytes, path: str) -> bytes:
    """The text of a version of the note `path`, marked as its conflict sibling: `status: conflict` and
    `conflict_of` in its frontmatter. A status the version had is replaced where it stands and kept in
    `status_before_conflict`, so `unmarked` gives the version back byte for byte."""
    text = data.decode("utf-8", "replace")
    name = path.rsplit("/", 1)[-1]
    name = name[: -len(".md")] if name.lower().endswith(".md") else name
    link = f'conflict_of: "[[{name}]]"\n'
    if not (text.startswith("---\n") and "\n---" in text[4:]):
        return ("---\n" + f"status: {CONFLICT_STATUS}\n" + link + "---\n" + text).encode("utf-8")
    end = text.index("\n---", 4)
    head = re.sub(r"(?m)^(conflict_of|status_before_conflict):.*\n?", "", text[4 : end + 1])
    status = _STATUS.search(head)
    if status is None:
        head += f"status: {CONFLICT_STATUS}\n" + link
    elif status.group(1).strip() == CONFLICT_STATUS:
        head += link
    else:
        head = head[: status.start()] + f"status: {CONFLICT_STATUS}" + head[status.end() :]
        head += link + f"{BEFORE}:{status.group(1)}\n"
    return ("---\n" + head + text[end + 1 :]).encode("utf-8")


def unmarked(text: str) -> str:
    """A sibling's text without its conflict mark: the version as it was before `conflict_text` marked it
    (its own status back where it stood), with whatever a person changed in it since."""
    if not (text.startswith("---\n") and "\n---" in text[4:]):
        return text
    end = text.index("\n---", 4)
    head = text[4 : end + 1]
    before = re.search(rf"(?m)^{BEFORE}:(.*)$", head)
    head = re.sub(rf"(?m)^(conflict_of|{BEFORE}):.*\n?", "", head)
    mark = re.search(rf"(?m)^status:\s*{CONFLICT_STATUS}\s*\n?", head)
    if mark is not None:
        back = f"status:{before.group(1)}\n" if before else ""
        head = head[: mark.start()] + back + head[mark.end() :]
    if not head.strip() and text[end + 1 :].startswith("---\n"):
        return text[end + 5 :]  # the mark was all the frontmatter it had
    return "---\n" + head + text[end + 1 :]


def still_conflict(path: Path) -> bool:
    """Whether a sibling is still there and still marked `status: conflict` (a person who kept it as a note of
    its own, or deleted it, has resolved it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return re.search(rf"(?m)^status:\s*{CONFLICT_STATUS}\s*$", head) is not None


class SyncState(TypedDict, total=False):
    """`<state>/sync-state.json`: written by the sync rounds (engine/git/sync.py) and the list of conflicts here."""

    conflicts: list[dict[str, str]]  # {"path", "sibling"} or {"path", "kept", ...}
    renamed: list[dict[str, str]]  # {"path", "renamed"}: captures made on both sides
    last_ok_at: str | None
    last_outcome: str
    head: str | None
    remote: str
    last_error: str | None
    last_error_at: str | None
    failing_since: str | None
    failures: int  # rounds in a row that could not reach the remote
    lasting: bool  # the last round failed for a reason no retry ends (another history, a branch to pick)
    next_attempt_at: str | None  # while the daemon backs off an unreachable remote
    held: bool  # the last round was held: this machine's commits are held back (a mass deletion)


def read_state(state_dir: Path) -> SyncState:
    """The sync state; {} when it is missing or unreadable. Only this room writes the file."""
    from agentmd.engine.fsutil import read_json

    return cast(SyncState, read_json(state_dir / STATE_FILE) or {})


def record_conflicts(state_dir: Path, entries: Iterable[dict[str, str]], vault: Path | None = None) -> None:
    """Add `{"path", "sibling"}` (or `{"path", "kept", ...}`) entries to the list (the sync state's other
    fields untouched), under this process's lock of the state. Of the entries already there, the ended ones
    are trimmed to the last KEPT_CONFLICTS; with the `vault`, a sibling still marked as a conflict is never
    dropped."""
    from agentmd.engine.fsutil import write_json

    new = [dict(e) for e in entries]  # siblings, and files a sync kept as ours (`kept`, named in status)
    if not new:
        return
    with state_lock(state_dir):
        state = read_state(state_dir)
        older = state.get("conflicts", [])
        still_open = [c for c in older if vault and c.get("sibling") and still_conflict(vault / c["sibling"])]
        ended = [c for c in older if c not in still_open][-KEPT_CONFLICTS:]
        kept = [c for c in older if c in still_open or c in ended]
        state["conflicts"] = kept + [c for c in new if c not in kept]
        write_json(state_dir / STATE_FILE, state)


GLOB_PATTERN = {"GIT_LITERAL_PATHSPECS": "0", "GIT_GLOB_PATHSPECS": "1"}
_SIBLING = re.compile(r"\.conflict-[A-Za-z0-9-]*-\d{8}-\d{6}\.md$")


def conflict_pairs(vault: Path, state_dir: Path) -> list[tuple[str, str]]:
    """Every conflict still open in the vault, as (note, sibling): first those this machine's syncs and undos
    left, in the order they were left; then the siblings that reached it from other machines (a sync brings
    the sibling another machine's merge wrote, and the person whose version it holds may work here), by path.
    Each once, each sibling still there and still marked `status: conflict`."""
    state = read_state(state_dir)
    pairs = [
        (str(c["path"]), str(c["sibling"]))
        for c in state.get("conflicts", [])
        if isinstance(c, dict) and c.get("sibling") and c.get("path")
    ]
    known = {sibling for _note, sibling in pairs}
    pairs += [(_SIBLING.sub(".md", s), s) for s in _sibling_files(vault) if s not in known]
    return [p for p in dict.fromkeys(pairs) if still_conflict(vault / p[1])]


def _sibling_files(vault: Path) -> list[str]:
    """The vault's files named as conflict siblings (`<name>.conflict-<who>-<date>.md`), committed or not, as
    git lists them (sorted); [] outside a repository."""
    from agentmd.engine.git.runner import GitCli, GitMissing

    if not (vault / ".git").exists():
        return []
    try:
        run = GitCli(vault).run(
            "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "**/*.conflict-*.md",
            env=GLOB_PATTERN,  # this one pattern, written here, is a glob; git reads every other pathspec literally
            optional_locks=False,
        )  # fmt: skip
    except GitMissing:
        return []
    if run.code != 0:
        return []
    names = {os.fsdecode(n) for n in run.out.split(b"\0") if n}
    return sorted(n for n in names if _SIBLING.search(n))


def open_conflicts(vault: Path, state_dir: Path) -> list[str]:
    """The siblings of every conflict still open in the vault (`conflict_pairs`)."""
    return [sibling for _note, sibling in conflict_pairs(vault, state_dir)]


def collisions_said(vault: Path) -> list[str]:
    """Status's yellow line naming `name_collisions`, or none."""
    from agentmd.engine.git.runner import GitCli

    collide = name_collisions(GitCli(vault))
    if not collide:
        return []

    def one(path: str) -> str:
        return f"{path!r}" + (
            " (decomposed, as macOS writes it)" if unicodedata.is_normalized("NFC", path) is False else ""
        )

    shown = "; ".join(" and ".join(one(p) for p in group) for group in collide[:5])
    more = f"; and {len(collide) - 5} more" if len(collide) > 5 else ""
    return [
        f"names-collide: {len(collide)} set(s) of notes whose names differ only in case or Unicode form: "
        f"{shown}{more}: on macOS and Windows each set is one file, and links to them are ambiguous; rename or "
        "merge each set into one note"
    ]


def name_collisions(git: GitCli) -> list[list[str]]:
    """Tracked paths that one file system would take for the same file: the same letters in other Unicode forms
    (macOS writes names decomposed, NFD; Linux and Windows keep them as typed), or in other cases (macOS and
    Windows ignore case). Each group sorted, the groups sorted; empty when there are none."""
    listed = git.run("-c", "core.quotepath=off", "ls-files", "-z", optional_locks=False)
    groups: dict[str, set[str]] = {}
    for raw in listed.out.split(b"\0") if listed.code == 0 else []:
        if raw:  # a path in conflict is listed once per stage of the merge: one name all the same
            path = os.fsdecode(raw)
            groups.setdefault(unicodedata.normalize("NFC", path).casefold(), set()).add(path)
    return sorted(sorted(paths) for paths in groups.values() if len(paths) > 1)


def notes_with_markers(git: GitCli, head: str, since: str | None) -> list[str]:
    """The notes of commit `head` (those changed since `since`, when given) that hold git's conflict markers: a
    `git grep` for a marker line over just those notes (the whole tree when there is no `since`: a first push),
    then each candidate read whole (`has_conflict_markers`)."""
    from agentmd.vault_schema.markdown import has_conflict_markers

    scope: list[str] = []
    if since:
        changed = git.run("diff", "--name-only", "--no-renames", "--diff-filter=AM", "-z", since, head)
        scope = [os.fsdecode(x) for x in changed.out.split(b"\0") if x.lower().endswith(b".md")]
        if not scope:
            return []
    found: list[str] = []
    for start in range(0, max(len(scope), 1), 500):  # a few hundred paths a call keeps each command line short
        part = ["--", *scope[start : start + 500]] if scope else []
        grep = git.run("grep", "-l", "-z", "-I", "-E", "^={7,}[[:space:]]*$", head, *part)  # literal pathspecs
        found += [os.fsdecode(x).split(":", 1)[1] for x in grep.out.split(b"\0") if b":" in x] if grep.code == 0 else []
    out = []
    for path in (p for p in found if p.lower().endswith(".md")):
        blob = git.run("cat-file", "blob", f"{head}:{path}")
        if blob.code == 0 and has_conflict_markers(blob.out.decode("utf-8", "replace")):
            out.append(path)
    return out
