"""Capture: the one function every writer of new notes goes through (MCP, CLI, phone clipper, probe).

Order of work, each step able to refuse before anything touches disk:
1. validate the fields; run the content prefilters over every string;
2. derive status and stamps (status is never taken from the caller; the field checks, the stamps and the
   route are engine/write/request.py's);
3. route by type through the contract (untyped: the dated shard; an unknown type, or a type while the
   contract is halted, is refused), each
   folder of the route taken as the vault already spells it, ignoring case (engine/write/folders.py); the
   file named after the title, with this machine's tag when the vault syncs (engine/write/names.py);
4. ask the door whether this actor may create that path;
5. open the vault root and check it is the vault this capturer opened (engine/write/vault_guard.py): an
   unmounted drive or a vault folder made again refuses with `vault-replaced`;
6. a note with the same title and body already in the vault is returned instead of a twin: looked for on
   disk in the target folder first (so a retry finds its note before the index has it), then among the
   notes written a moment ago and still waiting for their index update, then in the catalog
   (engine/write/twins.py);
7. the daily volume gate takes the note's place in the day's count (engine/write/gate.py: exact under
   concurrency, so at the cap of many captures arriving together exactly one is admitted);
8. write atomically into the folder opened one component at a time without following links, every step
   relative to its descriptor (temp file, fsync, hard link to a name that must not exist, fsync the
   folder), so a folder swapped for a link cannot redirect it, a name collision gets a suffix and nothing
   is ever overwritten (engine/write/landing.py);
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
import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentmd.engine.failpoints import failpoint
from agentmd.engine.fsutil import NotInVault
from agentmd.engine.index.reconcile import reconcile, stat_paths
from agentmd.engine.index.store import Store
from agentmd.engine.write import supersede
from agentmd.engine.write.folders import FolderCase
from agentmd.engine.write.gate import Admission, CapReached
from agentmd.engine.write.gate import VolumeGate as VolumeGate  # re-exported
from agentmd.engine.write.group import GroupIndexer, Ticket
from agentmd.engine.write.landing import write_new
from agentmd.engine.write.names import CaptureNames
from agentmd.engine.write.renames import find_by_inode, inode_of
from agentmd.engine.write.request import (  # the request's names are imported from here too
    MEMORY_SPACE,
    WARM_UP,
    CaptureRefused,
    CaptureRequest,
    CaptureResult,
    refusal,
    retype,
    route,
    stamp_fields,
    validate,
)
from agentmd.engine.write.stages import StageClock, StageLog
from agentmd.engine.write.store_swap import StoreSwap
from agentmd.engine.write.tallies import budget_warning, count_halted_refusal, count_refusal
from agentmd.engine.write.tempfiles import sweep_temp_files as sweep_temp_files  # re-exported
from agentmd.engine.write.twins import find_twin
from agentmd.engine.write.vault_guard import VaultIdentity, VaultReplaced
from agentmd.errors import AgentmdError
from agentmd.rules import ContractCache, ContractState, default_state
from agentmd.rules.door import decide
from agentmd.rules.prefilter import check_fields
from agentmd.vault_schema import parse_note, render_note

log = logging.getLogger("agentmd.capture")

SERIAL_STRIPES = 64  # locks that captures take by title (see Capturer._same_title)
REMEMBERED_WRITES = 256  # notes a capturer remembers writing, so a correction of one is not taken for a person's edit


# What a person can do about the usual reasons a note cannot be written (said after the refusal).
WRITE_FIXES = {
    errno.EACCES: "; give your user write permission on that folder (`ls -ld` shows who may write) and capture again",
    errno.EPERM: (
        "; the folder refuses writes (its permissions, or an immutable flag: `lsattr -d` shows one); "
        "make it writable and capture again"
    ),
    errno.EROFS: "; the vault is on a read-only file system: mount it writable and capture again",
    errno.ENOSPC: "; the disk is full: free some space and capture again",
    errno.EDQUOT: "; your disk quota is used up: free some space and capture again",
    errno.EFBIG: "; the file would pass a size limit (`ulimit -f`, or the file system's): raise it and capture again",
}


class Capturer:
    """Captures into one vault. The daemon holds one; the CLI makes one when no daemon runs."""

    def __init__(
        self,
        vault: Path,
        state_dir: Path,
        contracts: ContractCache,
        store: Store | None,
        *,
        before_write: Callable[[str, str, bytes | None], str | None] | None = None,
        after_write: Callable[[str, str], None] | None = None,
        withdraw: Callable[[str], None] | None = None,
        cap_override: int | None = None,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.vault = vault
        self.contracts = contracts
        self.store = store
        self.before_write = before_write
        self.after_write = after_write
        self.withdraw = withdraw  # a registered origin whose write did not happen (`before_write` undone)
        self.now = now
        self.gate = VolumeGate(state_dir, self._cap, self._contract_file)
        self.identity = VaultIdentity(vault)
        self._serial = [threading.Lock() for _ in range(SERIAL_STRIPES)]  # by title: see `_same_title`
        self._replacing = [threading.Lock() for _ in range(SERIAL_STRIPES)]  # by the note superseded; taken first
        self._naming = [threading.Lock() for _ in range(SERIAL_STRIPES)]  # by the name a note is written under
        self._written: OrderedDict[str, str] = OrderedDict()  # notes this capturer wrote a moment ago, their text
        self._written_lock = threading.Lock()
        self.group = GroupIndexer(self._index_batch, self._stat_key)
        self.swap = StoreSwap()  # captures hold the store; a rebuild replaces it only between them
        self.cap_override = cap_override
        self.stages = StageLog.from_env()  # where each capture's time went, when AGENTMD_CAPTURE_STAGES is set
        self.folder_case = FolderCase()  # the routed folder as the vault already spells it (any casing)
        self.names = CaptureNames(vault)  # the file name: the title's slug, tagged with the machine when syncing

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
        target = self.contracts.target or self.vault / "standards" / "storage-rules.md"
        if target.exists():
            return str(target)
        return f"{target} (not there yet: create it holding just that setting; it is merged over the default contract)"

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
            with self.swap.using(), contextlib.ExitStack() as held:
                clock.mark("swap")
                return self._capture(
                    req,
                    actor=actor,
                    origin=origin,
                    extra_fields=extra_fields,
                    count=count,
                    twin_exclude=twin_exclude,
                    clock=clock,
                    held=held,
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
        held: contextlib.ExitStack,
    ) -> CaptureResult:
        """`held` keeps the locks this capture takes until it has answered."""
        validate(req)
        strings = {k: v for k, v in req.__dict__.items() if v not in (None, (), "")}
        verdict = check_fields(strings)
        clock.mark("prefilter")
        if not verdict.ok:
            raise CaptureRefused(verdict.findings[0].code, refusal(verdict))
        state = self.contracts.get()
        now = self.now()
        self._check_type(req, state)
        req, retired = retype(req, state)
        req, dangling = self._linked(req, state.contract.link_convention)
        fields = stamp_fields(req, state, now, extra_fields or {})
        routed, route_reason = route(req, state, now)
        with self._root() as root_fd:  # `Memory/Lessons/` already there: the note goes in, not in a second one
            folder, folder_warnings = self.folder_case.resolve(root_fd, routed)
        stem = self.names.stem(req.title, state.contract.capture_names)
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
        replaced = None
        if req.supersedes:  # the note it replaces: one note the actor may edit, or nothing is written
            with self._root() as root_fd:
                replaced = supersede.resolve(
                    root_fd, self.vault, self.store, req.supersedes, state.contract, actor, (req.title, req.body),
                    self._wrote,
                )  # fmt: skip
            # Two captures superseding one note go one at a time from here to the mark, so the second finds it
            # superseded and is refused with nothing written (or, retried, finds its note).
            held.enter_context(self._replacing[hash(replaced.path) % len(self._replacing)])
            with self._root() as root_fd:
                replaced = supersede.resolve(
                    root_fd, self.vault, self.store, req.supersedes, state.contract, actor, (req.title, req.body),
                    self._wrote,
                )  # fmt: skip
            fields["supersedes"] = supersede.link_to(replaced.path)
        warnings = list(folder_warnings) + retired
        if dangling:  # linked as given: Obsidian shows such a link as one to a note not yet written
            warnings.append(
                f"related {', '.join(repr(d) for d in dangling[:5])} name{'s' if len(dangling) == 1 else ''} no note "
                "in the vault yet; linked as given (check the spelling, or capture that note too)"
            )
        if state.halted:
            warnings.append(f"the storage-rules contract is halted ({state.errors[0]}); the note went to the shard")
        budget = int(state.contract.thresholds.daily_card_budget)

        # One capture of a title at a time from the twin check to the note's landing on disk, so two
        # identical captures arriving together write one note, not a note and its twin. The index update runs
        # after, outside this lock, grouped with the other notes written meanwhile (engine/write/group.py).
        text = render_note(fields, req.body)
        title = str(fields["title"])  # the request's, or the one `extra_fields` gave
        gated = count and state.contract.space_of(f"{routed}/{stem}.md") == MEMORY_SPACE
        day = now.date() if gated else None
        landed: Ticket | None = None
        with self._same_title(title):
            clock.mark("title-lock")
            with self._root() as root_fd:
                clock.mark("root")
                twin = find_twin(root_fd, folder, stem, title, req.body, twin_exclude, self.store, self.group)
                twin_inode = inode_of(root_fd, twin) if twin is not None else None
                clock.mark("twin")
                if twin is None:
                    landed = self._write(root_fd, folder, stem, text, rel, origin, day, warnings, clock, title)
        if landed is None:
            assert twin is not None
            answer = self._reinforced(twin, twin_inode, title, warnings)
            if replaced is not None:
                self._supersede(replaced, answer.path, origin, now, warnings)
            return answer
        path = landed.path
        self._remember(path, text)
        # From here on the note is on disk: nothing may turn the answer into an error, or the caller would
        # retry and write a twin. Every later failure becomes a warning on a successful reply.
        if gated and budget > 0:
            self._after_landing(
                lambda: self._warn_over_budget(now.date(), budget, warnings),
                "the card budget could not be read",
                warnings,
            )
        if path != rel:  # the name was taken by a note with other text: say so, so an update is not a silent twin
            warnings.append(
                f"{rel} already holds a note of this name with other text, so this one was written beside it as "
                f"{path}; to change that note, edit it (a capture of the same text reinforces it instead)"
            )
        result = CaptureResult(
            path,
            str(fields["status"]),
            {k: fields[k] for k in ("lifecycle", "filing_confidence", "trust", "captured")} | {"route": route_reason},
            warnings,
        )
        clock.mark("after-landing")
        if replaced is not None:
            self._supersede(replaced, path, origin, now, warnings)
        elif origin == "capture" and self.store is not None:
            store, contract = self.store, state.contract
            self._after_landing(
                lambda: warnings.extend(_same_subject_line(supersede.same_subject(store, contract, title, path))),
                "notes on the same subject could not be looked up",
                warnings,
            )
            clock.mark("same-subject")
        result.indexed = self.group.wait(landed)
        clock.mark_until("index-queue", landed.batch_started_ns)
        clock.mark("index-batch")
        clock.batch, clock.batch_stages = landed.batch_size, landed.batch_stages
        failpoint("after-index")
        if not result.indexed:
            result.note = "written but not indexed yet; the next reconcile pass will index it (do not retry)"
        if self.after_write:
            after = self.after_write
            self._after_landing(lambda: after(path, origin), "its commit could not be scheduled", warnings)
        clock.mark("schedule-commit")
        return result

    def _wrote(self, path: str, text: str) -> bool:
        """Whether `text` is what this capturer last wrote to `path` (its commit may still be pending)."""
        with self._written_lock:
            return self._written.get(path) == text

    def _remember(self, path: str, text: str) -> None:
        with self._written_lock:
            self._written[path] = text
            self._written.move_to_end(path)
            while len(self._written) > REMEMBERED_WRITES:
                self._written.popitem(last=False)

    def _supersede(
        self, replaced: supersede.Replaced, by: str, origin: str, now: dt.datetime, warnings: list[str]
    ) -> None:
        """Mark the note the capture replaces as superseded by `by` (engine/write/supersede.py) with the capture's
        origin, queued for the capture's own index update (and waited for); a failure is a warning."""
        if replaced.path == by:
            warnings.append(f"{by} cannot supersede itself; it was left as it is")
            return
        if replaced.done:  # a retry of the capture that marked it
            return
        registered = False
        try:
            wanted = supersede.marked(replaced, by, now)
            if self.before_write:  # with the bytes it writes: a save over them later is the person's
                self.before_write(replaced.path, origin, wanted.encode("utf-8"))
                registered = True
            with self._root() as root_fd:
                left, wrote = supersede.mark(root_fd, replaced, wanted)
            if wrote is not None:
                self._remember(replaced.path, wrote)
            ticket = None if left else self.group.submit(replaced.path, replaced.title)
        except (OSError, AgentmdError) as exc:
            left = f"{replaced.path} could not be marked superseded ({getattr(exc, 'strerror', None) or exc})"
            ticket = None
        if left:
            withdraw = self.withdraw
            if registered and withdraw is not None:  # its own change, if any, is the person's: local-edit
                self._after_landing(lambda: withdraw(replaced.path), "an origin could not be withdrawn", warnings)
            warnings.append(f"{left}; `agentmd retire {replaced.path}` walls it if it no longer holds")
            return
        if ticket is not None:
            self.group.wait(ticket)

    def _linked(self, req: CaptureRequest, convention: str) -> tuple[CaptureRequest, list[str]]:
        """`related` as links Obsidian follows: a name that is one note's title but not its file name (a
        capture's file is its title's slug, perhaps with the machine's tag) becomes `[[file name|name]]`
        (`[[name|file name]]` under Dendron's convention); any other name is linked as written. With it, the
        names no note of the vault answers to."""
        if self.store is None or not req.related:
            return req, []
        out: list[str] = []
        dangling: list[str] = []
        for name in req.related:
            paths: list[str] = []
            if not name.startswith("[["):
                try:
                    paths = self.store.catalog.paths_with_title(name)
                except sqlite3.Error:  # a catalog that cannot answer: the name is linked as written
                    log.warning("the titles of related notes could not be looked up", exc_info=True)
            if not name.startswith("[[") and not paths and not self._names_a_note(name):
                dangling.append(name)
            stems = {p.rsplit("/", 1)[-1].removesuffix(".md") for p in paths}
            stem = next(iter(stems)) if len(stems) == 1 else None
            if stem is None or stem.casefold() == name.casefold():
                out.append(name)
            else:
                out.append(f"[[{name}|{stem}]]" if convention == "dendron" else f"[[{stem}|{name}]]")
        return replace(req, related=tuple(out)), dangling

    def _names_a_note(self, name: str) -> bool:
        """A note answers to `name` in the catalog, or as a path from the vault's top (not indexed yet)."""
        assert self.store is not None
        try:
            if self.store.catalog.names_a_note(name):
                return True
        except sqlite3.Error:
            return True  # a catalog that cannot answer says nothing is missing
        path = name.strip().removesuffix(".md") + ".md"
        return not path.startswith(("/", "..")) and (self.vault / path).is_file()

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
                before, withdraw = self.before_write, self.withdraw

                def claim(path: str) -> None:
                    # with the bytes it writes, under the name the note will have: a save over them later is
                    # someone else's, and a note of that name written a moment before keeps its own registration
                    assert before is not None
                    unkept = before(path, origin, text.encode("utf-8"))
                    if unkept is not None:  # the state folder is full or read-only: the answer is a receipt, so say it
                        warnings.append(f"the note was written, but {unkept}; do not retry")
                    if clock is not None:
                        clock.mark("origin")

                try:
                    with self._naming[hash(intended) % len(self._naming)]:  # one capture at a time picks this name
                        write_new(
                            root_fd,
                            folder,
                            stem,
                            text,
                            announce,
                            self.group.landing,
                            claim if before is not None else None,
                            withdraw,
                        )
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
            fix = WRITE_FIXES.get(exc.errno or 0, "")
            raise CaptureRefused(
                "write-failed",
                f"the note could not be written ({reason}): {exc.strerror or exc}; nothing was written{fix}",
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
        if req.type not in state.contract.types and req.type not in state.contract.deprecations:
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


def _same_subject_line(paths: list[str]) -> list[str]:
    if not paths:
        return []
    named = " and ".join(paths)
    return [
        f"{named} {'is' if len(paths) == 1 else 'are'} on the same subject; if this note corrects or replaces one, "
        "capture it again with `supersedes` naming that note (the earlier one then leaves search)"
    ]
