"""Capture: the one function every writer of new notes goes through (MCP, CLI, phone clipper, probe).

Order of work, each step able to refuse before anything touches disk:
1. validate the fields; run the content prefilters over every string;
2. derive status and stamps (status is never taken from the caller);
3. route by type through the contract (untyped, unknown type or halted contract: the dated shard), each
   folder of the route taken as the vault already spells it, ignoring case (engine/write/folders.py);
4. ask the door whether this actor may create that path;
5. open the vault root and check it is the vault this capturer opened (engine/write/vault_guard.py): an
   unmounted drive or a vault folder made again refuses with `vault-replaced`;
6. a note with the same title and body already in the vault is returned instead of a twin: looked for on
   disk in the target folder first (so a retry finds its note before the index has it), then among the
   notes written a moment ago and still waiting for their index update, then in the catalog;
7. the daily volume gate takes the note's place in the day's count (engine/write/gate.py: exact under
   concurrency, so at the cap of many captures arriving together exactly one is admitted);
8. write atomically into the folder opened one component at a time without following links, every step
   relative to its descriptor (temp file, fsync, hard link to a name that must not exist, fsync the
   folder), so a folder swapped for a link cannot redirect it, a name collision gets a suffix and nothing
   is ever overwritten;
9. index the note before answering, in one index commit and one catalog transaction with the other notes
   written meanwhile (engine/write/group.py), then have it committed with `origin: capture`.
Captures run side by side. Only captures with the same title go one at a time from the twin check to the
note's landing, which is what keeps two identical captures arriving together from writing a twin.
Once the note is on disk nothing turns the reply into an error: a failure to count it, note its origin,
index it or schedule its commit becomes a warning (or, for indexing, a note that the next reconcile will
index it), so a caller never retries into a duplicate.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import logging
import os
import re
import signal
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.errors import AgentmdError, UsageError
from agentmd.engine.fsutil import NotInVault, open_dir_at, read_regular
from agentmd.engine.index.reconcile import reconcile, stat_paths
from agentmd.engine.index.store import Store
from agentmd.engine.write.folders import FolderCase
from agentmd.engine.write.gate import Admission, CapReached
from agentmd.engine.write.gate import VolumeGate as VolumeGate  # re-exported
from agentmd.engine.write.group import GroupIndexer, Ticket
from agentmd.engine.write.renames import find_by_inode, inode_of
from agentmd.engine.write.stages import StageClock, StageLog
from agentmd.engine.write.store_swap import StoreSwap
from agentmd.engine.write.tallies import budget_warning, count_halted_refusal, count_refusal
from agentmd.engine.write.tempfiles import SCRATCH_DIR, temp_name
from agentmd.engine.write.tempfiles import sweep_temp_files as sweep_temp_files  # re-exported
from agentmd.engine.write.vault_guard import VaultIdentity, VaultReplaced
from agentmd.rules import ContractCache, ContractState, default_state
from agentmd.rules.door import decide
from agentmd.rules.prefilter import Verdict, check_fields
from agentmd.vault_schema import Note, parse_note, render_note

log = logging.getLogger("agentmd.capture")

MAX_TITLE = 200
MAX_BODY_BYTES = 512 * 1024
MAX_LIST = 50
MEMORY_SPACE = "memory"
_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SERIAL_STRIPES = 64  # locks that captures take by title (see Capturer._same_title)
IMPORTANCE_WORDS = {"minimal": 1, "low": 2, "medium": 3, "high": 4, "critical": 5}


class CaptureRefused(AgentmdError):
    """A capture was refused; `code` names the rule, the message says what to change."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def refusal(verdict: Verdict) -> str:
    """A prefilter refusal as a client reads it: every reason with its fields, then what the first finding
    was and how to fix it (the others are of the same kind or listed in the reasons)."""
    first = verdict.findings[0]
    more = len(verdict.findings) - 1
    rest = f" ({more} more finding{'s' if more > 1 else ''} of the reasons above)" if more else ""
    return f"{verdict.reason()}. In {first.field}: {first.message}{rest}"


@dataclass(frozen=True)
class CaptureRequest:
    title: str
    body: str = ""
    type: str | None = None
    summary: str | None = None
    why: str | None = None
    importance: int | str | None = None
    related: tuple[str, ...] = ()
    project: str | None = None
    task: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    source: str | None = None
    source_url: str | None = None
    space: str | None = None
    instructions: str | None = None  # CLI only: the operator's own instructions, kept on the note

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> CaptureRequest:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"unknown capture field(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values = dict(data)
        for key in ("related", "tags", "aliases"):
            if key in values and values[key] is not None:
                v = values[key]
                values[key] = tuple(x.strip() for x in (v.split(",") if isinstance(v, str) else v) if str(x).strip())
        return cls(**values)


@dataclass
class CaptureResult:
    path: str
    status: str
    stamps: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    indexed: bool = False
    reinforced: bool = False
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "stamps": self.stamps,
            "warnings": self.warnings,
            "indexed": self.indexed,
            "reinforced": self.reinforced,
            "note": self.note,
        }


def slugify(title: str, limit: int = 80) -> str:
    """A file-name slug: lower case, letters and digits of any script, words joined by hyphens."""
    text = unicodedata.normalize("NFKC", title).lower()
    words = re.findall(r"[^\W_]+", text)
    slug = "-".join(words)
    if len(slug.encode("utf-8")) > limit:
        cut = slug.encode("utf-8")[:limit].decode("utf-8", "ignore")
        slug = cut.rsplit("-", 1)[0] if "-" in cut else cut
    return slug.strip("-") or "note"


def _importance(value: int | str | None) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in IMPORTANCE_WORDS:
            return IMPORTANCE_WORDS[word]
        try:
            value = int(word)
        except ValueError:
            raise CaptureRefused(
                "invalid-importance", f"importance {value!r} is not 1-5 (or low/medium/high/critical)"
            ) from None
    if isinstance(value, bool) or not 1 <= int(value) <= 5:
        raise CaptureRefused("invalid-importance", f"importance {value!r} is out of range; use 1 (record) to 5 (vital)")
    return int(value)


def validate(req: CaptureRequest) -> None:
    if not isinstance(req.title, str) or not req.title.strip():
        raise CaptureRefused("missing-title", "a capture needs a title: one line saying what the note is about")
    if len(req.title) > MAX_TITLE or "\n" in req.title.strip():
        raise CaptureRefused("invalid-title", f"the title must be one line of at most {MAX_TITLE} characters")
    if not isinstance(req.body, str):
        raise CaptureRefused("invalid-body", "the body must be text")
    if len(req.body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
        raise CaptureRefused(
            "body-too-large", f"the body is over {MAX_BODY_BYTES // 1024} KiB; split it into smaller notes"
        )
    if req.type is not None and not _KEBAB.match(req.type):
        raise CaptureRefused("invalid-type", f"type {req.type!r} must be kebab-case, e.g. decision or how-to")
    for name in ("related", "tags", "aliases"):
        items = getattr(req, name)
        if len(items) > MAX_LIST:
            raise CaptureRefused("too-many-items", f"{name} has {len(items)} entries; keep it to {MAX_LIST}")
        if any(not isinstance(x, str) or "\n" in x for x in items):
            raise CaptureRefused("invalid-list", f"each entry of {name} must be one line of text")
    for name in ("summary", "why", "project", "task", "source", "source_url", "space", "instructions"):
        value = getattr(req, name)
        if value is not None and not isinstance(value, str):
            raise CaptureRefused("invalid-field", f"{name} must be text")
    if req.project is not None and not _KEBAB.match(req.project):
        raise CaptureRefused("invalid-project", f"project {req.project!r} must be the project's kebab-case slug")


# A note in the shape agents write (prose addressed to a reader, a link, a URL, a comment, a code fence,
# letters of several scripts): reading it once builds every rule set the content prefilters compile on first
# use, so the first captures after a start do not compile them, each on its own, while they are timed.
WARM_UP = CaptureRequest(
    title="Warm-up: how the capture path reads a note",
    type="decision",
    why="read once at start-up",
    body=(
        "We decided to keep the cache.\n\nYou should run the tests first; the AI assistant reads this later.\n\n"
        "- see [[another note]] and https://example.org/a?b=c\n<!-- a comment -->\n\n```python\nprint('x')\n```\n\n"
        "From now on the team reviews every change. Café, naïve, 東京, Привет.\n"
    ),
)

CRASH_POINTS = ("after-temp-write", "after-link", "after-index")


def crash_point(name: str) -> None:
    """Fault injection for crash tests: `AGENTMD_CRASH_POINT=<name>` kills the process here with SIGKILL,
    exactly as a power cut or `kill -9` would. Unset (always, outside tests) it does nothing."""
    if os.environ.get("AGENTMD_CRASH_POINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def write_new(
    root_fd: int,
    folder: str,
    stem: str,
    text: str,
    on_link: Callable[[str], object] | None = None,
    hold: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> str:
    """Write `text` to `<folder>/<stem>.md`, or `<stem>-2.md`, `-3`… when taken. Never overwrites. Returns
    the vault-relative path written. `on_link(path)` runs the moment the note has its name, inside `hold()`
    with the link itself, so whoever `hold` keeps out sees the note either not there or already announced.

    The folder is opened from the vault root's descriptor one component at a time without following a link
    (`open_dir_at`), and every step after that is relative to the folder's descriptor: a folder swapped for
    a symbolic link meanwhile cannot redirect the write out of the vault. The bytes go to a hidden temp file
    first (fsynced), which is then hard-linked to the final name: the link fails if the name exists, so the
    check and the creation are one atomic step.

    The temp file is written in the vault's scratch folder (`tempfiles.SCRATCH_DIR`, opened the same way), a
    hidden folder at the top that no watch covers: its creation, write, close and removal would otherwise be
    four file events for the daemon's watcher to read and drop for every capture, beside the one event of
    the note itself. Where the scratch folder cannot be had, or is on another file system than the note's
    folder (the link says so), the temp file is written in the note's folder, as hidden.
    """
    data = text.encode("utf-8")
    dfd = open_dir_at(root_fd, folder, create=True)
    try:
        try:
            place, in_folder = open_dir_at(root_fd, SCRATCH_DIR, create=True), False
        except OSError:
            place, in_folder = os.dup(dfd), True
        try:
            while True:
                tmp = _write_temp(place, stem, data)
                try:
                    return _link_new(place, tmp, dfd, folder, stem, on_link, hold)
                except OSError as exc:
                    if exc.errno != errno.EXDEV or in_folder:
                        raise
                finally:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp, dir_fd=place)
                os.close(place)  # another file system: the note's own folder then
                place, in_folder = os.dup(dfd), True
        finally:
            os.close(place)
    finally:
        os.close(dfd)


def _write_temp(place: int, stem: str, data: bytes) -> str:
    """A new hidden temp file in the open folder `place` holding `data`, fsynced; its name."""
    tmp = temp_name(stem)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=place)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:  # a full disk, an I/O error: no half-written temp file stays behind
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=place)
        raise
    os.close(fd)
    crash_point("after-temp-write")
    return tmp


def _link_new(
    place: int,
    tmp: str,
    dfd: int,
    folder: str,
    stem: str,
    on_link: Callable[[str], object] | None,
    hold: Callable[[], contextlib.AbstractContextManager[object]],
) -> str:
    """Link the temp file `tmp` (in `place`) to the first free name of the stem in the open folder `dfd`."""
    for n in range(1, 1000):
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        rel = f"{folder.strip('/')}/{name}" if folder.strip("/") else name
        with hold():
            try:
                os.link(tmp, name, src_dir_fd=place, dst_dir_fd=dfd, follow_symlinks=False)
            except FileExistsError:
                continue
            # before the folder fsync: a crash from here leaves no temp file; and before the note is
            # announced, since dropping the temp name changes the note's ctime, which its stat key holds
            os.unlink(tmp, dir_fd=place)
            if on_link is not None:
                on_link(rel)
        os.fsync(dfd)
        crash_point("after-link")
        return rel
    raise CaptureRefused("name-collision", f"{stem}.md and 998 suffixed names exist in {folder}; pick another title")


class Capturer:
    """Captures into one vault. The daemon holds one; the CLI makes one when no daemon runs."""

    def __init__(
        self,
        vault: Path,
        state_dir: Path,
        contracts: ContractCache,
        store: Store | None,
        *,
        before_write: Callable[[str, str], None] | None = None,
        after_write: Callable[[str, str], None] | None = None,
        cap_override: int | None = None,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.vault = vault
        self.contracts = contracts
        self.store = store
        self.before_write = before_write
        self.after_write = after_write
        self.now = now
        self.gate = VolumeGate(state_dir, self._cap, self._contract_file)
        self.identity = VaultIdentity(vault)
        self._serial = [threading.Lock() for _ in range(SERIAL_STRIPES)]  # by title: see `_same_title`
        self.group = GroupIndexer(self._index_batch, self._stat_key)
        self.swap = StoreSwap()  # captures hold the store; a rebuild replaces it only between them
        self.cap_override = cap_override
        self.stages = StageLog.from_env()  # where each capture's time went, when AGENTMD_CAPTURE_STAGES is set
        self.folder_case = FolderCase()  # the routed folder as the vault already spells it (any casing)

    def warm(self) -> float:
        """Run the checks, the rendering and the parsing a capture goes through over `WARM_UP`, writing nothing;
        returns the seconds it took. The daemon calls it before its first pass, so no capture it serves pays for
        compiling the prefilters' rules (tens of milliseconds once, and once in every thread that asks before the
        first has finished)."""
        t0 = time.perf_counter()
        validate(WARM_UP)
        check_fields({k: v for k, v in WARM_UP.__dict__.items() if v not in (None, (), "")})
        fields = {"title": WARM_UP.title, "type": WARM_UP.type, "status": "active", "why": WARM_UP.why}
        parse_note("warm-up.md", render_note(fields, WARM_UP.body).encode("utf-8"), 0)
        return time.perf_counter() - t0

    def _cap(self) -> int:
        if self.cap_override is not None:
            return self.cap_override
        return int(self.contracts.get().contract.thresholds.daily_write_cap)

    def _warn_over_budget(self, day: dt.date, budget: int, warnings: list[str]) -> None:
        today = self.gate.count(day)
        if today > budget:
            warnings.append(budget_warning(today, budget, self._contract_file()))

    def _contract_file(self) -> str:
        state = self.contracts.get()
        if state.source and state.source != default_state().source:
            return state.source
        # the packaged default is in effect: the file to edit is the vault's copy, not the installed package
        return str(self.contracts.target or self.vault / "standards" / "storage-rules.md")

    # -- the pieces --------------------------------------------------------------------------------

    def _fields(self, req: CaptureRequest, state: ContractState, now: dt.datetime, extra: Mapping[str, Any]) -> dict:
        contract = state.contract
        typed = bool(req.type)
        status = "active" if typed and (req.why or "").strip() else "unfiled"
        trust = contract.trust(req.source_url or req.source)
        if req.source_url and trust == "trusted":
            trust = "untrusted"
        fields: dict[str, Any] = {
            "title": req.title.strip(),
            "type": req.type,
            "status": status,
            "lifecycle": contract.default_lifecycle,
            "filing_confidence": "high" if typed else "low",
            "trust": trust,
            "captured": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "source": req.source,
            "source_url": req.source_url,
            "project": req.project,
            "task": req.task,
            "importance": _importance(req.importance),
            "summary": req.summary,
            "why": req.why,
            "tags": list(req.tags) or None,
            "aliases": list(req.aliases) or None,
            "related": [r if r.startswith("[[") else f"[[{r}]]" for r in req.related] or None,
            "instructions": req.instructions,
        }
        fields.update(extra)
        return fields

    def _folder(self, req: CaptureRequest, state: ContractState, now: dt.datetime) -> tuple[str, str]:
        if req.space and req.space != MEMORY_SPACE:
            spaces = state.contract.spaces
            if req.space not in spaces:
                raise CaptureRefused(
                    "unknown-space", f"space {req.space!r} is not in the contract; use one of: {', '.join(spaces)}"
                )
            return str(spaces[req.space]), f"space:{req.space}"
        return state.route(req.type, now.date())

    def _twin(
        self, root_fd: int, folder: str, stem: str, title: str, body: str, exclude: Callable[[str], bool] | None
    ) -> str | None:
        """An existing note with the same title and the same body text, if any.

        The folder the capture would be written to is looked at first, on disk: a capture of the same title
        lands there as `<stem>.md` or `<stem>-N.md`, so a retry finds the note its first attempt wrote even
        when the index has not caught up (a daemon restarted and still on its first pass, an index update
        that failed). Then the catalog, for a twin filed elsewhere since.

        On disk, `write_new` gives a note the first of those names that is free, so once the index is open
        the names are tried in that order up to the first one missing: a stat each, where listing a folder of
        thousands of notes cost milliseconds of every capture. A note named past a gap (a lower-numbered one
        deleted since) is found through the catalog or the notes waiting for their batch. Before the first
        pass has opened the index (`store` unset) neither can vouch for what an earlier run wrote, and the
        whole folder is listed.
        """
        want = body.strip()
        for path in self._same_stem(root_fd, folder, stem, whole=self.store is None):
            if exclude is not None and exclude(path):
                continue
            if _same_note(path, self._read(path, root_fd), title, want):
                return path
        # notes written a moment ago and still waiting for their index update, then the catalog (in that
        # order: a note leaves the pending list only once the catalog holds it)
        waiting = [t.path for t in self.group.pending(title)]
        indexed = self.store.catalog.paths_with_title(title) if self.store is not None else []
        for path in dict.fromkeys(waiting + indexed):
            if exclude is not None and exclude(path):
                continue
            data = self._read(path, root_fd)
            if data is None and self.store is not None:  # gone from where the catalog saw it: renamed just now?
                row = self.store.catalog.get(path)
                moved = find_by_inode(root_fd, path, row.stat[3] if row is not None else None)
                if moved is not None and not (exclude is not None and exclude(moved)):
                    path, data = moved, self._read(moved, root_fd)
            note = _parse(path, data)
            if note is not None and note.text.strip() == want:
                return path
        return None

    @staticmethod
    def _same_stem(root_fd: int, folder: str, stem: str, *, whole: bool = True) -> list[str]:
        """The notes in `folder` named as `write_new` names a note of this stem: with `whole` every such name
        the folder holds, else those from `<stem>.md` on up to the first name missing (see `_twin`)."""
        try:
            dfd = open_dir_at(root_fd, folder)
        except OSError:
            return []
        try:
            if whole:
                names = os.listdir(dfd)
                # a folder of thousands of notes holds only a few names starting with the stem; no pattern is
                # built per capture (a compiled pattern per title is more than the rest of the twin check)
                candidates = sorted(n for n in names if n.startswith(stem) and _stem_suffix(n[len(stem) :]))
            else:
                candidates = _taken_names(dfd, stem)
        except OSError:
            return []
        finally:
            os.close(dfd)
        prefix = folder.strip("/")
        return [f"{prefix}/{n}" if prefix else n for n in candidates]

    @staticmethod
    def _read(path: str, root_fd: int) -> bytes | None:
        try:
            return read_regular(path, dir_fd=root_fd, limit=4 * MAX_BODY_BYTES)
        except OSError:
            return None

    # -- the whole capture -------------------------------------------------------------------------

    def capture(
        self,
        req: CaptureRequest,
        *,
        actor: str = "agent",
        origin: str = "capture",
        extra_fields: Mapping[str, Any] | None = None,
        count: bool = True,
        twin_exclude: Callable[[str], bool] | None = None,
    ) -> CaptureResult:
        """Capture one note (see the module docstring). A refusal is counted by its code for the morning note
        (`tallies.count_refusal`) before it reaches the caller."""
        clock = StageClock()
        try:
            with self.swap.using():
                clock.mark("swap")
                return self._capture(
                    req,
                    actor=actor,
                    origin=origin,
                    extra_fields=extra_fields,
                    count=count,
                    twin_exclude=twin_exclude,
                    clock=clock,
                )
        except CaptureRefused as exc:
            try:
                count_refusal(self.gate.state_dir, self.now(), exc.code)
            except OSError as tally_error:  # the refusal itself must still reach the caller
                log.warning("a refused capture could not be counted: %s", tally_error)
            raise
        finally:
            self.stages.write(clock)

    def _capture(
        self,
        req: CaptureRequest,
        *,
        actor: str,
        origin: str,
        extra_fields: Mapping[str, Any] | None,
        count: bool,
        twin_exclude: Callable[[str], bool] | None,
        clock: StageClock,
    ) -> CaptureResult:
        validate(req)
        strings = {k: v for k, v in req.__dict__.items() if v not in (None, (), "")}
        verdict = check_fields(strings)
        clock.mark("prefilter")
        if not verdict.ok:
            raise CaptureRefused(verdict.findings[0].code, refusal(verdict))
        state = self.contracts.get()
        now = self.now()
        self._check_type(req, state)
        fields = self._fields(req, state, now, extra_fields or {})
        routed, route_reason = self._folder(req, state, now)
        with self._root() as root_fd:  # `Memory/Lessons/` already there: the note goes in, not in a second one
            folder, folder_warnings = self.folder_case.resolve(root_fd, routed)
        stem = slugify(req.title)
        rel = f"{folder}/{stem}.md"
        clock.mark("fields")
        try:
            decision = decide(self.vault, rel, state.contract, actor=actor, creating=True)
        except OSError as exc:  # the folder changed under the check (renamed, swapped): nothing is written
            raise CaptureRefused(
                "write-failed", f"{rel} could not be checked ({exc.strerror or exc}); nothing was written"
            ) from None
        clock.mark("door")
        if not decision.allowed:
            raise CaptureRefused(decision.rule, f"the door refused {rel}: {decision.reason}")
        warnings = list(folder_warnings)
        if state.halted:
            warnings.append(f"the storage-rules contract is halted ({state.errors[0]}); the note went to the shard")
        budget = int(state.contract.thresholds.daily_card_budget)

        # One capture of a title at a time from the twin check to the note's landing on disk, so two
        # identical captures arriving together write one note, not a note and its twin. The index update runs
        # after, outside this lock, grouped with the other notes written meanwhile (engine/write/group.py).
        text = render_note(fields, req.body)
        gated = count and state.contract.space_of(f"{routed}/{stem}.md") == MEMORY_SPACE
        day = now.date() if gated else None
        landed: Ticket | None = None
        with self._same_title(fields["title"]):
            clock.mark("title-lock")
            with self._root() as root_fd:
                clock.mark("root")
                twin = self._twin(root_fd, folder, stem, fields["title"], req.body, twin_exclude)
                twin_inode = inode_of(root_fd, twin) if twin is not None else None
                clock.mark("twin")
                if twin is None:
                    title = fields["title"]
                    landed = self._write(root_fd, folder, stem, text, rel, origin, day, warnings, clock, title)
        if landed is None:
            assert twin is not None
            return self._reinforced(twin, twin_inode, fields["title"], warnings)
        path = landed.path
        # From here on the note is on disk: nothing may turn the answer into an error, or the caller would
        # retry and write a twin. Every later failure becomes a warning on a successful reply.
        if gated and budget > 0:
            self._after_landing(
                lambda: self._warn_over_budget(now.date(), budget, warnings),
                "the card budget could not be read",
                warnings,
            )
        before = self.before_write
        if path != rel and before is not None:
            self._after_landing(lambda: before(path, origin), "its origin could not be noted", warnings)
        result = CaptureResult(
            path,
            fields["status"],
            {k: fields[k] for k in ("lifecycle", "filing_confidence", "trust", "captured")} | {"route": route_reason},
            warnings,
        )
        clock.mark("after-landing")
        result.indexed = self.group.wait(landed)
        clock.mark_until("index-queue", landed.batch_started_ns)
        clock.mark("index-batch")
        clock.batch, clock.batch_stages = landed.batch_size, landed.batch_stages
        crash_point("after-index")
        if not result.indexed:
            result.note = "written but not indexed yet; the next reconcile pass will index it (do not retry)"
        if self.after_write:
            after = self.after_write
            self._after_landing(lambda: after(path, origin), "its commit could not be scheduled", warnings)
        clock.mark("schedule-commit")
        return result

    def _reinforced(self, twin: str, inode: int | None, title: str, warnings: list[str]) -> CaptureResult:
        """The answer for a capture whose note already exists: that note, once it is searchable (a twin still
        waiting for its index update is waited for, as its own capture waits), at the path it has now (a note
        renamed since the twin check is followed by its inode)."""
        waiting: list[Ticket] = [t for t in self.group.pending(title) if t.path == twin]
        for ticket in waiting:
            self.group.wait(ticket)
        row = self.store.catalog.get(twin) if self.store is not None else None
        with self._root() as root_fd:
            if inode_of(root_fd, twin) != inode:
                moved = find_by_inode(root_fd, twin, inode)
                if moved is not None:
                    twin, row = moved, (self.store.catalog.get(moved) if self.store is not None else None) or row
        return CaptureResult(
            twin,
            (row.status if row else None) or "unfiled",
            {"captured": row.captured} if row else {},
            warnings,
            indexed=row is not None,
            reinforced=True,
            note="an identical note already exists; it was returned instead of writing a twin",
        )

    def _same_title(self, title: str) -> threading.Lock:
        """The lock that captures of this title take from the twin check to the landing. Titles share a
        fixed set of locks (by hash), so two different titles rarely wait on each other and the same title
        always does; twins have the same title, so no twin check can miss a note landing meanwhile."""
        return self._serial[hash(title) % len(self._serial)]

    @contextlib.contextmanager
    def _root(self) -> Iterator[int]:
        """The vault root's descriptor, checked to be the vault this capturer opened."""
        try:
            with self.identity.open_root() as fd:
                yield fd
        except VaultReplaced as exc:
            raise CaptureRefused("vault-replaced", str(exc)) from None

    def _write(
        self,
        root_fd: int,
        folder: str,
        stem: str,
        text: str,
        intended: str,
        origin: str,
        day: dt.date | None,
        warnings: list[str],
        clock: StageClock | None,
        title: str,
    ) -> Ticket:
        """Admit (when `day` is given, the note counts toward that day's cap), write, count. Returns the note's
        ticket in the index queue: it is queued the moment the note has its name (see `GroupIndexer.landing`).

        A failure before the note is on disk refuses the capture (nothing written, a retry is safe); once it
        is on disk, a failure to count it or to sync its folder is a warning, never an error."""
        landed: Ticket | None = None
        admission: Admission | None = None

        def announce(path: str) -> None:
            nonlocal landed
            landed = self.group.submit(path, title)
            if admission is not None:
                admission.landed = True

        try:
            with self.gate.admit(day) if day is not None else contextlib.nullcontext(None) as admission:
                if clock is not None:
                    clock.mark("gate")
                if self.before_write:
                    self.before_write(intended, origin)
                    if clock is not None:
                        clock.mark("origin")
                try:
                    write_new(root_fd, folder, stem, text, announce, self.group.landing)
                    if clock is not None:
                        clock.mark("write")
                except NotInVault as exc:
                    raise CaptureRefused(
                        "outside-vault", f"the note was not written: {exc.strerror} (on the way to {intended})"
                    ) from None
                if admission is not None and admission.problem is not None:
                    warnings.append(
                        "the note was written, but the daily capture count could not be saved "
                        f"({admission.problem}); do not retry"
                    )
        except CapReached as exc:
            raise CaptureRefused("daily-write-cap", str(exc)) from None
        except OSError as exc:
            if landed is not None:  # its folder's sync or the count lock failed: the note is there all the same
                warnings.append(f"the note was written, but {exc.strerror or exc}; do not retry")
                return landed
            reason = errno.errorcode.get(exc.errno or 0, "") or type(exc).__name__
            raise CaptureRefused(
                "write-failed", f"the note could not be written ({reason}): {exc.strerror or exc}; nothing was written"
            ) from None
        assert landed is not None  # write_new returned: the note has its name
        return landed

    @staticmethod
    def _after_landing(step: Callable[[], object], what: str, warnings: list[str]) -> None:
        """Run a step that follows a written note; its failure is logged and reported, never raised."""
        try:
            step()
        except Exception as exc:
            log.exception("after writing a note, %s", what)
            warnings.append(f"the note was written, but {what} ({type(exc).__name__}: {exc}); do not retry")

    def _check_type(self, req: CaptureRequest, state: ContractState) -> None:
        """A named type must be one the contract lists, and a halted contract files nothing by type.

        An unknown type is refused rather than filed unfiled: the caller meant to judge the note, and a typo
        filed quietly would never be noticed; leaving the type out is the way to capture without judging.
        A refusal while halted is counted for `agentmd status` (`halted_refusals`)."""
        if not req.type:
            return
        if state.halted:
            count_halted_refusal(self.gate.state_dir, self.now())
            raise CaptureRefused(
                "contract-halted",
                f"the storage-rules contract {state.source} is invalid ({state.errors[0]}), so typed captures are "
                f"refused until it is fixed: run `agentmd contract check {state.source}` and correct it, or capture "
                "without --type to keep the note unfiled for now",
            )
        if req.type not in state.contract.types:
            known = ", ".join(sorted(state.contract.types))
            raise CaptureRefused(
                "unknown-type",
                f"type {req.type!r} is not in the storage-rules contract; use one of: {known} (or leave the type "
                "out to capture the note unfiled)",
            )

    def _stat_key(self, path: str) -> tuple[int, ...] | None:
        """A note's (mtime_ns, size, ctime_ns, inode), as the index's passes compare them; None when it is gone."""
        found = stat_paths(self.vault, {path})
        return found.get(path)

    def _index_batch(self, paths: set[str]) -> set[str]:
        """Index a batch of written notes in one pass (one index commit, one catalog transaction); returns
        the paths indexed. Run by the batch's leader (engine/write/group.py)."""
        store = self.store
        if store is None:
            return set()
        convention = self.contracts.get().contract.link_convention
        t0 = time.perf_counter_ns()
        with store.lock:
            t1, cpu = time.perf_counter_ns(), time.thread_time_ns()
            store.index.small_commits()
            report = reconcile(self.vault, store, only=paths, link_convention=convention)
        self.group.batch_stage("store-lock", (t1 - t0) / 1e6)
        self.group.batch_stage("reconcile", (time.perf_counter_ns() - t1) / 1e6)
        self.group.batch_stage("reconcile-cpu", (time.thread_time_ns() - cpu) / 1e6)  # this thread's, not Tantivy's
        if report.refused is not None:
            return set()
        # a note held back (still being written, or holding conflict markers) is not indexed: the next pass takes it
        return paths - {e["path"] for e in report.errors} - {s["path"] for s in report.skipped}


def _taken_names(dfd: int, stem: str) -> list[str]:
    """`<stem>.md`, `<stem>-2.md`, ... in the open folder `dfd`, in `write_new`'s order, up to the first name
    that is free (anything there, a folder too, keeps the name taken, as it keeps `write_new` from it)."""
    taken = []
    for n in range(1, 1000):
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        try:
            os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            break
        taken.append(name)
    return taken


def _stem_suffix(rest: str) -> bool:
    """Whether what follows a stem in a file name is one `write_new` gives: `.md` or `-N.md` (N digits)."""
    if rest == ".md":
        return True
    number = rest.removeprefix("-").removesuffix(".md")
    return len(number) == len(rest) - 4 and number.isascii() and number.isdigit()


def _parse(path: str, data: bytes | None) -> Note | None:
    return None if data is None else parse_note(path, data, 0)


def _same_note(path: str, data: bytes | None, title: str, body: str) -> bool:
    """Whether the bytes are a note with this title and this body text (stripped)."""
    note = _parse(path, data)
    return note is not None and note.title == title and note.text.strip() == body


def request_from_cli(values: Mapping[str, Any]) -> CaptureRequest:
    data = {k: v for k, v in values.items() if v is not None}
    return CaptureRequest.from_mapping(data)


def result_json(result: CaptureResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False)


def field_names() -> Sequence[str]:
    return list(CaptureRequest.__dataclass_fields__)
