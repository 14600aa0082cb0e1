"""A capture that corrects or replaces an earlier note (`supersedes`): the earlier note is walled, not deleted.

The capture names the note it replaces by its path (with or without `.md`, relative to the vault or absolute
inside it), its exact title, or a link (`[[name]]`, resolved as Obsidian resolves it, a name two notes share
being refused). Before anything is written the name is resolved to one note and judged: the door must let the
same actor edit it; it must be a current note of someone's (not already superseded, archived or staged, not a
conflict copy, a self-probe note or a generated page, not pinned when an agent asks); its frontmatter must be
readable; and it must hold no change git has not committed yet (someone editing it now), since the capture's
commit would otherwise carry that person's change under the capture's origin. Any of these refuses the capture
with nothing written and says what to do.

Once the new note is on disk the earlier one gains `lifecycle: superseded`, `superseded_by` (a link to the new
note), `retired_reason` and `retired_at`: it stays in the vault and in git and leaves search and recall like
any superseded note (include archived notes to see it), and the new note carries `supersedes`, a link to it.
Both are indexed in the capture's own update and committed with its origin, so `agentmd undo` takes the pair back.

The earlier note is rewritten in place, atomically, its folder opened from the vault root one component at a
time without following links: the new text goes to a temp file, the note keeps a second name for a moment, the
temp file is renamed over it, and the version it replaced is read again through that second name. A save that
landed between the first read and the rename is then in that version, which is put back whole, and the capture
says the note was left as it is; a failure here is a warning on the capture's reply, never an error, since the
new note is already written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agentmd.engine.fsutil import NotInVault, open_dir_at
from agentmd.engine.git.runner import GitCli
from agentmd.engine.index.store import Store
from agentmd.engine.write.landing import write_temp
from agentmd.engine.write.request import CaptureRefused
from agentmd.engine.write.tempfiles import temp_name
from agentmd.errors import AgentmdError
from agentmd.rules.contract import Contract
from agentmd.rules.door import decide
from agentmd.vault_schema import parse_note, split_frontmatter, update_frontmatter
from agentmd.vault_schema.links import target_key
from agentmd.vocabulary import STOP_WORDS

MAX_NOTE_BYTES = 16 * 1024 * 1024  # a larger file is no note a capture replaces
# A note the new one's title finds at this confidence or more (the title's words, weighted by rarity, nearly all in
# it) is named in the capture's answer as a note on the same subject (bench/RESULTS.md, "notes on the same subject")
SAME_SUBJECT = 0.9
SAME_TITLE = 0.5  # ... and whose title shares this share of the smaller title's words (two at least)


@dataclass(frozen=True, slots=True)
class Replaced:
    """The note a capture replaces, as it was read when the capture resolved it; `done` when it is already
    superseded by a note of the capture's title (the capture is a retry of one that marked it)."""

    path: str
    title: str
    text: str
    done: bool = False


def link_to(path: str) -> str:
    """The `[[link]]` a frontmatter property names a note with: its vault path without `.md`, which Obsidian
    follows whatever other note shares the file name."""
    return f"[[{path.removesuffix('.md')}]]"


def resolve(
    root_fd: int,
    vault: Path,
    store: Store | None,
    name: str,
    contract: Contract,
    actor: str,
    capture: tuple[str, str],
    own: Callable[[str, str], bool] = lambda _path, _text: False,
) -> Replaced:
    """The one note `name` names, judged as the module docstring says and read through the vault root's
    descriptor `root_fd`, for a capture of (title, body); a refusal saying what to give or do instead. `own`
    tells a note whose uncommitted text this capturer wrote itself (a note it captured a moment ago)."""
    title, body = capture
    found = _one_note(vault, store, name)
    decision = decide(vault, found, contract, actor=actor, creating=False)
    if not decision.allowed:
        raise CaptureRefused(
            decision.rule, f"the door refused marking {found} superseded: {decision.reason}; nothing was written"
        )
    try:
        text = _read_at(root_fd, found)
    except NotInVault:
        raise _refused(
            "supersedes-unreadable", f"{found} lies behind a symbolic link; name the note by its real path"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _refused("supersedes-unreadable", f"{found} could not be read ({_reason(exc)})") from None
    row = store.catalog.get(found) if store is not None else None
    known = row.title if row is not None else PurePosixPath(found).stem
    if _successor_is(vault, text, title, body):
        return Replaced(found, known, text, done=True)
    _judge(found, text, actor)
    if not own(found, text):
        try:
            _committed(vault, found)
        except CaptureRefused:
            # the change git has not committed may be another capture's mark, made since the read: then the
            # note is superseded already, which is the answer to give
            with contextlib.suppress(OSError, UnicodeDecodeError, NotInVault):
                _judge(found, _read_at(root_fd, found), actor)
            raise
    return Replaced(found, known, text)


def marked(replaced: Replaced, by: str, now: dt.datetime) -> str:
    """The text of `replaced` walled as superseded by the note at `by` (what `mark` writes)."""
    return update_frontmatter(
        replaced.text,
        {
            "lifecycle": "superseded",
            "superseded_by": link_to(by),
            "retired_reason": f"superseded by {by}, captured as its correction",
            "retired_at": now.isoformat(timespec="seconds"),
        },
    )


def mark(root_fd: int, replaced: Replaced, text: str) -> tuple[str | None, str | None]:
    """Write `text` (`marked`) over `replaced`: (None, the text written) when done, else (why it was left as
    it is, None)."""
    folder, name = str(PurePosixPath(replaced.path).parent), PurePosixPath(replaced.path).name
    dfd = open_dir_at(root_fd, folder)
    try:
        current = _read(dfd, name)
        if current != replaced.text:
            return _moved_on(replaced.path, current), None
        kept = temp_name(name.removesuffix(".md"))
        tmp = write_temp(dfd, name.removesuffix(".md"), text.encode("utf-8"))  # whole and fsynced
        try:
            os.link(name, kept, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            replaced_now = _read(dfd, kept)  # the version the rename replaced, with any save that beat it
            if replaced_now != replaced.text:
                os.replace(kept, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                return _moved_on(replaced.path, replaced_now), None
        finally:
            for leftover in (tmp, kept):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover, dir_fd=dfd)
        os.fsync(dfd)
        return None, text
    finally:
        os.close(dfd)


def same_subject(store: Store, contract: Contract, title: str, path: str) -> list[str]:
    """The notes (at most two, besides `path`) that a search for `title` finds at SAME_SUBJECT or more and whose
    titles share SAME_TITLE of the smaller title's words: what a capture's answer names, so an agent restating or
    correcting one of them can say so (`supersedes`) instead of leaving two live notes that disagree. Walled and
    self-probe notes are left out, as search leaves them out."""
    from agentmd.engine.search.query import search
    from agentmd.engine.search.searcher import SearchRequest

    words = _subject_words(title)
    if len(words) < 2:  # a one-word subject ("After the contract") is shared by too many notes to name them
        return []
    found = search(store.index, contract, SearchRequest(query=title, limit=3), store.catalog, floor=SAME_SUBJECT)
    out = []
    for r in found.results:
        shared = len(words & (theirs := _subject_words(r.title or PurePosixPath(r.note).stem)))
        alike = shared >= 2 and shared >= SAME_TITLE * min(len(words), len(theirs))
        if r.note != path and (r.confidence or 0.0) >= SAME_SUBJECT and alike and _current(store, r.note):
            out.append(r.note)
    return out[:2]


# -- resolving and judging the name ------------------------------------------------------------------------


def _one_note(vault: Path, store: Store | None, name: str) -> str:
    wanted = name.strip()
    if wanted.startswith("[[") and wanted.endswith("]]"):  # a link: its target, without alias or heading
        wanted = wanted[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    path = _as_path(vault, wanted)
    if path is not None and _is_file(vault / path):
        return path
    candidates: list[str] = []
    if store is not None and "\n" not in wanted:
        candidates = sorted(store.catalog.paths_with_title(wanted))
        bare = "/" not in wanted and "\\" not in wanted  # a path names its folder: no other folder's note will do
        if not candidates and bare and (key := target_key(wanted)):
            from agentmd.engine.search.graph import Graph

            candidates = sorted(Graph(store.catalog).by_stem.get(key, []))
    if not candidates:
        raise _refused(
            "supersedes-unknown",
            f"`supersedes` names no note of the vault: {name!r}; give the path, the exact title or the file name of "
            "the note this one replaces (a search shows them)",
        )
    if len(candidates) > 1:
        shown = ", ".join(candidates[:5]) + (f" and {len(candidates) - 5} more" if len(candidates) > 5 else "")
        raise _refused(
            "supersedes-ambiguous",
            f"{len(candidates)} notes go by {wanted!r} ({shown}); give the path of the one this note replaces",
        )
    return candidates[0]


def _successor_is(vault: Path, text: str, title: str, body: str) -> bool:
    """Whether the note is already superseded by a note of this title and body (the capture retried)."""
    successor = parse_note("x.md", text.encode("utf-8"), 0).frontmatter.get("superseded_by")
    if not isinstance(successor, str):
        return False
    path = _as_path(vault, successor.strip().removeprefix("[[").removesuffix("]]").split("|", 1)[0])
    if path is None or not _is_file(vault / path):
        return False
    try:
        note = parse_note(path, (vault / path).read_bytes()[: MAX_NOTE_BYTES + 1], 0)
    except OSError:
        return False
    return note.title == title.strip() and note.text.strip() == body.strip()


def _judge(path: str, text: str, actor: str) -> None:
    """Refuse a note that is no current note of someone's, or whose frontmatter cannot take the marks."""
    note = parse_note(path, text.encode("utf-8"), 0)
    if note.frontmatter_error or (
        text.lstrip("\ufeff").startswith("---") and split_frontmatter(text).yaml_text is None
    ):
        raise _refused(
            "supersedes-unreadable",
            f"{path}'s frontmatter cannot be read ({note.frontmatter_error or 'its block is never closed'}); "
            "fix it, then capture again",
        )
    fm, states = note.frontmatter, {(note.status or "").lower(), (note.lifecycle or "").lower()}
    why = None
    if note.is_probe:
        why = "is a self-probe note the daemon writes to test itself"
    elif note.is_generated:
        why = "is a page agentmd generates, which is written again from the notes it lists"
    elif "conflict" in states:
        why = "is a conflict copy a sync kept beside its note; end it with `agentmd resolve`"
    elif note.wall == "superseded":
        successor = fm.get("superseded_by")
        why = f"is already superseded{f' by {successor}' if successor else ''}; name the note that replaced it"
    elif note.wall is not None:
        why = f"is {note.wall}, so no search shows it; nothing is left to supersede"
    elif "pinned" in states and actor == "agent":
        why = "is pinned by its owner; only the owner may supersede it (`agentmd capture --operator`)"
    if why:
        raise _refused("supersedes-refused", f"{path} {why}")
    try:
        update_frontmatter(text, {"lifecycle": "superseded"})
    except AgentmdError as exc:
        raise _refused("supersedes-unreadable", f"{path}'s frontmatter cannot be edited safely ({exc})") from None


def _committed(vault: Path, path: str) -> None:
    """Refuse a note with a change git has not committed (or one never committed): someone is editing it, and
    the capture's commit would carry their change under the capture's origin (so an undo would take it away)."""
    if not (vault / ".git").exists():
        return
    run = GitCli(vault).run("status", "--porcelain", "--untracked-files=all", "--", path)
    if run.code == 0 and run.text.strip():
        raise _refused(
            "supersedes-busy",
            f"{path} has changes git has not committed yet (someone is editing it, or it is new); they are "
            "committed within seconds of the last save: capture again then",
        )


def _as_path(vault: Path, name: str) -> str | None:
    """`name` as a vault-relative note path (`.md` added when missing), or None when it cannot be one."""
    if "\n" in name or not name:
        return None
    if name.startswith("/"):
        try:
            name = Path(name).relative_to(vault).as_posix()
        except ValueError:
            return None
    parts = PurePosixPath(name.removeprefix("./")).parts
    if not parts or ".." in parts or any(len(p.encode()) > 255 for p in parts):
        return None
    rel = "/".join(parts)
    return rel if rel.lower().endswith(".md") else f"{rel}.md"


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long, a loop of links: no note
        return False


def _moved_on(path: str, now: str) -> str:
    if parse_note(path, now.encode("utf-8"), 0).wall == "superseded":
        return f"{path} was superseded by another capture meanwhile, so it was left as that capture marked it"
    return f"{path} was saved while this note was written, so it was left as it was saved (not marked superseded)"


def _current(store: Store, path: str) -> bool:
    """A note a capture could supersede (not a conflict copy, a generated page or a pinned note)."""
    row = store.catalog.get(path, whole=False)
    if row is None or "generated" in row.flags or "probe" in row.flags:
        return False
    return not {(row.status or "").lower(), (row.lifecycle or "").lower()} & {"conflict", "pinned"}


def _subject_words(title: str) -> set[str]:
    return {w for w in re.findall(r"\w+", title.casefold()) if len(w) > 2 and w not in STOP_WORDS}


def _refused(code: str, said: str) -> CaptureRefused:
    return CaptureRefused(code, f"{said}; nothing was written")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.strerror or errno.errorcode.get(exc.errno, str(exc))
    return str(exc)


def _read_at(root_fd: int, path: str) -> str:
    dfd = open_dir_at(root_fd, str(PurePosixPath(path).parent))
    try:
        return _read(dfd, PurePosixPath(path).name)
    finally:
        os.close(dfd)


def _read(dfd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_NOTE_BYTES + 1)
    if len(data) > MAX_NOTE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_NOTE_BYTES // (1024 * 1024)} MiB, too large for a note a "
                      "capture replaces; wall it with `agentmd retire`")  # fmt: skip
    return data.decode("utf-8")
