"""One enrichment run: the night's queue judged note by note by the model CLI, within budgets only the owner
raises, the accepted answers filed through the same path as `confirm` (the daemon when it runs).

The queue is a snapshot taken at the start (a note captured meanwhile waits for the next run): the review
queue (unfiled captures, ingested notes, phone clips, low-confidence filings, each oldest first; never a lesson
the model drew, engine/enrich/lessons.py, which waits for its owner), then the idea cards and the project
records it does not already hold (engine/enrich/kinds.py). Every note is passed through
the free gates: a note that must stay on this machine (a private space or a recall-exempt area,
`Contract.kept_local`: counted as `private-skipped`, never read nor sent to the model), a note that cannot be
read, a record kind (`kind` is one of the contract's `record_kinds`), a superseded note, a project record without
frontmatter, a body the ledger already judged under this prompt and vocabulary (the contract's judgment hash:
its type names and deprecations, rules/contract/hashing.py), and a dormant note (below the floor twice) whose
body has not changed since.
What is left is owed, for a cause, and the night takes it by cause: never judged first, then changed, then
retried (refused under an older question of the gates), then owed under a new prompt, then under a new type
vocabulary; inside a cause the queue's own order stands.

Before each note the budgets are read (calls, tokens a call adds, wall time, and the fuse: N notes in a row
whose call failed); the first one a run would cross ends it, and the report names it and the cursor
(`--after`) the next run resumes from. An answer passes the post-gates (engine/enrich/prompt.py), then the
faithfulness judge (engine/enrich/grounding.py), then Compose. Accepted answers are applied at the end, one
commit per note with `origin: enrich`; the ledger records each verdict once its note is written, and each
refusal at once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter, stamp
from agentmd.engine.curate.queue import QueueItem, review_queue
from agentmd.engine.curate.steps import Edit, Step, StepRefused, StepResult, digest
from agentmd.engine.enrich import compose as composing
from agentmd.engine.enrich import grounding
from agentmd.engine.enrich.budget import Budget, budget_from, stop_reason
from agentmd.engine.enrich.kinds import CARD, IDEA, RECORD, extra_queue, kind_of
from agentmd.engine.enrich.ledger import Ledger, Row, body_hash, judgment_key
from agentmd.engine.enrich.model import Answer, ModelCallFailed, ModelConfig, Usage
from agentmd.engine.enrich.neighbours import neighbours_of
from agentmd.engine.enrich.prompt import (
    PROMPT_VERSION,
    AnswerRefused,
    build_prompt,
    read_answer,
)
from agentmd.engine.enrich.records import STATE_FOLDER, Estimate, RunRecord, append_run, run_lock, tokens_per_call
from agentmd.engine.errors import UsageError
from agentmd.engine.index.store import Store
from agentmd.rules import Contract
from agentmd.vault_schema import YamlRefused, split_frontmatter

__all__ = ["Budget", "NoteOutcome", "Report", "caller_for", "enrich", "run_lock", "settings_from"]

ORIGIN = "enrich"
REASON_ORDER = ("unfiled", "ingested", "phone-clip", "low-confidence", "idea-card", "project-record")
CAUSES = ("never-judged", "changed", "retried", "owed-under-new-prompt", "owed-under-new-vocabulary")
PRIVATE_SKIPPED = "private-skipped"
OWNERS_ONLY = ("lesson",)  # queued for the owner alone: a lesson a model drew is never judged by another call
COUNTED = (
    "filed",
    "below-floor",
    "dormant",
    "idea",
    "record",
    "refused",
    "failed",
    "unchanged",
    "skipped",
    PRIVATE_SKIPPED,
)
KIND_NAMES = {CARD: "cards", IDEA: "idea cards", RECORD: "project records"}

Caller = Callable[[str, float], Answer]
"""One model call: (prompt, seconds left) -> the answer; raises ModelCallFailed."""
Apply = Callable[[Sequence[Step]], list[StepResult]]


@dataclass
class NoteOutcome:
    path: str
    outcome: str  # one of COUNTED, or owed (dry run)
    reason: str = ""
    cause: str = ""
    usage: Usage | None = None
    proposal: dict[str, object] | None = None
    kind: str = CARD

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "outcome": self.outcome}
        for key in ("reason", "cause"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.kind != CARD:
            out["kind"] = self.kind
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        if self.proposal is not None:
            out["proposal"] = self.proposal
        return out


@dataclass
class Report:
    dry_run: bool
    budget: Budget
    notes: list[NoteOutcome] = field(default_factory=list)
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    stopped_by: str | None = None
    cursor: str | None = None
    commits: list[str] = field(default_factory=list)
    applied_by: str | None = None
    warnings: list[str] = field(default_factory=list)
    estimate: Estimate | None = None

    def count(self, outcome: str) -> int:
        return sum(1 for n in self.notes if n.outcome == outcome)

    @property
    def by_cause(self) -> dict[str, int]:
        """The notes a run judged (or a dry run found owed), by the cause they were owed for."""
        counts: dict[str, int] = {}
        for n in self.notes:
            if n.cause:
                counts[n.cause] = counts.get(n.cause, 0) + 1
        return {c: counts[c] for c in CAUSES if c in counts}

    @property
    def dormant(self) -> list[str]:
        """The notes this run sank to dormant (judged below the floor a second time)."""
        return [n.path for n in self.notes if n.outcome == composing.DORMANT]

    def to_dict(self) -> RunRecord:
        out: RunRecord = {
            "dry_run": self.dry_run,
            "prompt_version": PROMPT_VERSION,
            "gates_version": grounding.GATES_VERSION,
            "budget": self.budget.to_dict(),
            "counts": {k: self.count(k) for k in COUNTED},
            "dormant": self.dormant,
            "by_cause": self.by_cause,
            "calls": self.calls,
            "usage": self.usage.to_dict(),
            "stopped_by": self.stopped_by,
            "cursor": self.cursor,
            "commits": self.commits,
            "applied_by": self.applied_by,
            "warnings": self.warnings,
            "notes": [n.to_dict() for n in self.notes],
        }
        if self.estimate is not None:
            out["estimate"] = self.estimate
        return out


def ordered(items: Sequence[QueueItem]) -> list[QueueItem]:
    """The queue by reason (unfiled first), keeping its oldest-first order inside each reason."""
    rank = {r: i for i, r in enumerate(REASON_ORDER)}
    return sorted(items, key=lambda i: rank.get(i.reason, len(rank)))


@dataclass
class _Note:
    item: QueueItem
    text: str
    data: bytes
    fm: dict[str, object]  # its frontmatter, as read
    key: str
    cause: str
    kind: str
    may_sink: bool
    revive: bool = False


def _read(vault: Path, item: QueueItem, contract: Contract, ledger: Ledger, vocabulary: str) -> _Note | NoteOutcome:
    """The note ready to judge (with the cause it is owed for), or the outcome of a free gate."""
    if contract.kept_local(item.path):  # its text and title never reach the model, not even to be judged
        why = "in a private space or a recall-exempt area: it stays on this machine"
        return NoteOutcome(item.path, PRIVATE_SKIPPED, why)
    try:
        data = (vault / item.path).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return NoteOutcome(item.path, "skipped", f"unreadable ({exc})")
    fm = read_frontmatter(text)
    if fm is None:
        return NoteOutcome(item.path, "skipped", "frontmatter cannot be read; fix it by hand")
    kind = kind_of(item.path, fm, contract)
    if kind == RECORD and split_frontmatter(text).yaml_text is None:
        why = "a project record without frontmatter: nothing to merge into"
        return NoteOutcome(item.path, "skipped", why, kind=kind)
    note_kind = fm.get("kind")
    if kind == CARD and isinstance(note_kind, str) and contract.is_record_kind(note_kind):
        return NoteOutcome(item.path, "skipped", f"a record ({note_kind}), not a card")
    states = {str(fm.get(k) or "").strip().lower() for k in ("status", "lifecycle")}
    if "superseded" in states or fm.get("superseded_by"):
        return NoteOutcome(item.path, "skipped", "superseded", kind=kind)
    body = body_hash(composing.body_of(text).encode("utf-8"))
    key = judgment_key(body, PROMPT_VERSION, vocabulary)
    row = ledger.get(key)
    if row is not None and not (row.verdict == "refused" and row.gates != grounding.GATES_VERSION):
        moved = ledger.follow(key, item.path)
        why = f"judged {row.verdict} at {row.at} and unchanged since" + (
            " (moved; the ledger followed it)" if moved else ""
        )
        return NoteOutcome(item.path, "unchanged", why, kind=kind)
    sunk = ledger.latest_with_body(body, composing.DORMANT)
    lifecycle = str(fm.get("lifecycle") or "").strip().lower()
    if sunk is not None and lifecycle == composing.DORMANT:
        why = f"dormant since {sunk.at[:10]}: below the floor twice; asked again when its body changes or you act"
        return NoteOutcome(item.path, "skipped", why, kind=kind)
    before = ledger.latest_for(item.path)
    revive = lifecycle == composing.DORMANT and before is not None and before.verdict == composing.DORMANT
    return _Note(item, text, data, fm, key, _cause(row is not None, before, body), kind, sunk is None, revive)


def _cause(refused_before: bool, before: Row | None, body: str) -> str:
    """Why a note is owed a judgment: a refusal under the gates' older question, never judged, a changed body,
    or an unchanged body under a new prompt or a new type vocabulary."""
    if refused_before:
        return "retried"
    if before is None:
        return "never-judged"
    b_body, b_prompt, *_ = before.key.split(":")
    if b_body != body:
        return "changed"
    if b_prompt != PROMPT_VERSION:
        return "owed-under-new-prompt"
    return "owed-under-new-vocabulary"


def enrich(
    *,
    vault: Path,
    store: Store,
    contract: Contract,
    state_dir: Path,
    budget: Budget,
    caller: Caller,
    model: ModelConfig,
    apply: Apply | None,
    after: str | None = None,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    monotonic: Callable[[], float] = time.monotonic,
    progress: Callable[[NoteOutcome], None] | None = None,
) -> Report:
    """One run (`apply=None`: a dry run that sizes the night and calls nothing)."""
    with contextlib.ExitStack() as stack:
        if apply is not None:
            stack.enter_context(run_lock(state_dir))
        return _Run(vault, store, contract, state_dir, budget, caller, model, apply, now, monotonic, progress).run(
            after
        )


class _Run:
    def __init__(
        self,
        vault: Path,
        store: Store,
        contract: Contract,
        state_dir: Path,
        budget: Budget,
        caller: Caller,
        model: ModelConfig,
        apply: Apply | None,
        now: Callable[[], dt.datetime],
        monotonic: Callable[[], float],
        progress: Callable[[NoteOutcome], None] | None,
    ) -> None:
        self.vault, self.store, self.contract, self.state_dir = vault, store, contract, state_dir
        self.budget, self.caller, self.model, self.apply = budget, caller, model, apply
        self.now, self.monotonic, self.progress = now, monotonic, progress
        self.report = Report(dry_run=apply is None, budget=budget)
        self.ledger = Ledger(state_dir / STATE_FOLDER)
        self.per_note = 2 if model.judge else 1
        self.failures_in_a_row = 0
        self.steps: list[Step] = []
        self.pending: dict[str, tuple[str, str, str]] = {}  # path -> (ledger key, verdict, reason)

    def note(self, outcome: NoteOutcome) -> None:
        self.report.notes.append(outcome)
        if self.progress is not None:
            self.progress(outcome)

    def queue(self, after: str | None) -> list[tuple[QueueItem, _Note | NoteOutcome]]:
        """The night's snapshot, read and ordered by cause, from the position after `after`."""
        queued = review_queue(self.vault, self.store.catalog, self.contract, state_dir=self.state_dir)
        items = ordered([i for i in queued if i.reason not in OWNERS_ONLY])
        items += extra_queue(self.store.catalog, self.contract, {i.path for i in items})
        vocabulary = self.contract.judgment_hash
        read = [(i, _read(self.vault, i, self.contract, self.ledger, vocabulary)) for i in items]
        rank = {c: n for n, c in enumerate(CAUSES)}
        read.sort(key=lambda pair: rank[pair[1].cause] if isinstance(pair[1], _Note) else 0)
        if after:
            names = [i.path for i, _ in read]
            if after not in names:
                raise UsageError(f"--after {after}: no such note in the queue; run without --after to start over")
            read = read[names.index(after) + 1 :]
        return read

    def run(self, after: str | None) -> Report:
        report = self.report
        if self.ledger.problem:
            report.warnings.append(self.ledger.problem)
        started = self.monotonic()
        owed: list[tuple[_Note, int]] = []
        last_done = after
        for item, ready in self.queue(after):
            if isinstance(ready, NoteOutcome):
                self.note(ready)
                last_done = item.path
                continue
            body = composing.body_of(ready.text)
            offered = neighbours_of(self.store, self.contract, self.vault, item.path, ready.fm, body)
            prompt = build_prompt(item.path, ready.text, sorted(self.contract.types), offered)
            if report.dry_run:
                owed.append((ready, len(prompt)))
                continue
            elapsed = self.monotonic() - started
            stop = stop_reason(
                self.budget, report.calls, report.usage.added, self.failures_in_a_row, elapsed, self.per_note
            )
            if stop:
                report.stopped_by, report.cursor = stop, last_done
                break
            last_done = item.path
            self.judge(ready, prompt, offered, lambda: self.budget.max_seconds - (self.monotonic() - started))
        if report.dry_run:
            report.estimate = self.estimate(owed)
            return report
        self.write()
        self.ledger.save()
        append_run(self.state_dir, {**_record(report), "at": stamp(self.now())})
        return report

    def call(self, prompt: str, left: float) -> Answer:
        self.report.calls += 1
        try:
            answer = self.caller(prompt, max(1.0, left))
        except ModelCallFailed as exc:
            self.report.usage = self.report.usage + exc.usage
            self.failures_in_a_row += 1
            raise
        self.failures_in_a_row = 0
        self.report.usage = self.report.usage + answer.usage
        return answer

    def refuse(self, ready: _Note, why: str, usage: Usage, at: str) -> None:
        self.ledger.record(ready.key, ready.item.path, "refused", at, why, grounding.GATES_VERSION)
        self.note(NoteOutcome(ready.item.path, "refused", why, ready.cause, usage, kind=ready.kind))

    def judge(self, ready: _Note, prompt: str, offered: Sequence[Any], left: Callable[[], float]) -> None:
        """One note: the call, the post-gates, the faithfulness judge, Compose; the step queued for writing."""
        path = ready.item.path
        try:
            answer = self.call(prompt, left())
        except ModelCallFailed as exc:
            self.note(NoteOutcome(path, "failed", exc.reason, ready.cause, exc.usage, kind=ready.kind))
            return
        usage = answer.usage
        at = stamp(self.now())
        body = composing.body_of(ready.text)
        try:
            proposal = read_answer(
                answer.text,
                types=sorted(self.contract.types),
                deprecations=self.contract.deprecations,
                offered=[n.id for n in offered],
                note_text=body,
                note_title=str(ready.fm.get("title") or ""),
                file_stem=Path(path).stem,
                known_aliases=composing.listed(ready.fm.get("aliases")),
            )
        except AnswerRefused as exc:
            self.refuse(ready, f"{exc.gate}: {exc}", usage, at)
            return
        floor = float(self.contract.thresholds.low_confidence)
        updates, verdict = composing.updates_for(
            ready.fm,
            proposal,
            floor=floor,
            types=self.contract.types,
            deprecations=self.contract.deprecations,
            at=at,
            model=self.model.name,
            prompt_version=PROMPT_VERSION,
            kind=ready.kind,
            default_lifecycle=self.contract.default_lifecycle,
            may_sink=ready.may_sink,
            revive=ready.revive,
        )
        dropped_names = self.dedupe(path, ready.fm, updates)
        claims = grounding.claims_of(updates)
        source = grounding.source_of(path, ready.fm, body, offered)
        try:
            grounding.check_locally(claims, source)
            if self.model.judge and claims:
                try:
                    verdict_answer = self.call(grounding.judge_prompt(path, source, claims), left())
                except ModelCallFailed as exc:
                    why = f"the faithfulness judge's call failed: {exc.reason}"
                    self.note(NoteOutcome(path, "failed", why, ready.cause, usage + exc.usage, kind=ready.kind))
                    return
                usage = usage + verdict_answer.usage
                grounding.read_verdict(verdict_answer.text)
        except grounding.Unfaithful as exc:
            self.refuse(ready, f"faithfulness: {exc.claim}", usage, at)
            return
        except grounding.JudgeFailed as exc:
            self.failures_in_a_row += 1  # a judge that cannot answer counts toward the fuse like a failed call
            self.note(NoteOutcome(path, "failed", str(exc), ready.cause, usage, kind=ready.kind))
            return
        try:
            new_text = composing.compose(ready.text, updates)
        except (YamlRefused, composing.BodyChanged) as exc:
            self.refuse(ready, f"compose: {exc}", usage, at)
            return
        why = _why(verdict, proposal.confidence, floor)
        if proposal.dropped_related:
            why += f"; dropped related not offered: {', '.join(proposal.dropped_related)}"
        if dropped_names:
            why += f"; not given, another note already carries the name: {', '.join(dropped_names)}"
        self.steps.append(
            Step(
                ORIGIN,
                f"enrich {path}: {_summary(verdict, proposal.type)}",
                (Edit(path, new_text, digest(ready.data)),),
            )
        )
        self.pending[path] = (ready.key, verdict, why)
        self.note(NoteOutcome(path, verdict, why, ready.cause, usage, proposal.to_dict(), kind=ready.kind))

    def dedupe(self, path: str, fm: Mapping[str, object], updates: dict[str, object]) -> list[str]:
        """Drops a title or a new alias the answer would give that another note already carries as its title:
        two cards of one name make every link to it ambiguous. Returns what was dropped."""

        def taken(name: str) -> bool:
            with self.store.lock:
                return any(p != path for p in self.store.catalog.paths_with_title(name))

        dropped: list[str] = []
        title = updates.get("title")
        if isinstance(title, str) and taken(title):
            del updates["title"]
            dropped.append(title)
        aliases = updates.get("aliases")
        if isinstance(aliases, list):
            own = set(composing.listed(fm.get("aliases")))
            kept = [a for a in aliases if a in own or not taken(a)]
            dropped += [a for a in aliases if a not in kept]
            if kept == composing.listed(fm.get("aliases")):
                del updates["aliases"]
            else:
                updates["aliases"] = kept
        return dropped

    def write(self) -> None:
        """Applies the queued steps (one commit per note) and records the verdict of every note written."""
        report = self.report
        if not self.steps:
            return
        assert self.apply is not None
        try:
            results = self.apply(self.steps)
        except StepRefused as exc:
            results = exc.done
            report.warnings.append(str(exc))
        written = {p for r in results for p in r.paths}
        report.commits = [c for r in results for c in r.commits]
        report.warnings += [w for r in results for w in r.warnings]
        for path in written:
            key, verdict, why = self.pending[path]
            self.ledger.record(key, path, verdict, stamp(self.now()), why, grounding.GATES_VERSION)
        for n in report.notes:
            if n.path in self.pending and n.path not in written:
                n.outcome, n.reason = "failed", "the write was refused; asked again next run"

    def estimate(self, owed: Sequence[tuple[_Note, int]]) -> Estimate:
        """The night sized: the notes owed by cause and by kind, and the calls and tokens the budgets let a run
        spend on them (the rest named, for a later run). The real run then spends the same."""
        chars = sum(c for _, c in owed) // max(1, len(owed))
        per_call = tokens_per_call(self.state_dir, chars)
        calls = tokens = later = 0
        causes: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for ready, _ in owed:
            causes[ready.cause] = causes.get(ready.cause, 0) + 1
            kinds[KIND_NAMES[ready.kind]] = kinds.get(KIND_NAMES[ready.kind], 0) + 1
            why = ""
            if calls + self.per_note > self.budget.max_calls:
                why = "past the call budget: a later run"
            elif tokens >= self.budget.max_tokens:
                why = "past the token budget: a later run"
            else:
                calls += self.per_note
                tokens += self.per_note * per_call
            later += bool(why)
            self.note(NoteOutcome(ready.item.path, "owed", why, cause=ready.cause, kind=ready.kind))
        return {
            "calls": calls,
            "tokens": tokens,
            "tokens_per_call": per_call,
            "calls_per_note": self.per_note,
            "notes": len(owed) - later,
            "later": later,
            "owed_by_cause": {c: causes[c] for c in CAUSES if c in causes},
            "owed_by_kind": kinds,
        }


def _why(verdict: str, confidence: float, floor: float) -> str:
    if verdict == IDEA:
        return "an idea card: its filing, title and type stand"
    if verdict == RECORD:
        return "a project record: merged into, never filed"
    filed = verdict == "filed"
    why = f"confidence {confidence:.2f} {'≥' if filed else '<'} floor {floor:g}"
    if verdict == composing.DORMANT:
        why += " a second time: dormant until its body changes or you act"
    return why


def _summary(verdict: str, type_: str) -> str:
    return {
        "filed": f"filed as {type_}",
        "below-floor": "below the floor, left for review",
        composing.DORMANT: "below the floor a second time, dormant",
        IDEA: "an idea card thought through",
        RECORD: "a project record's summary and links",
    }[verdict]


def _record(report: Report) -> RunRecord:
    data = report.to_dict()
    del data["notes"]
    return data


def settings_from(
    config: Mapping[str, Any],
    *,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    max_seconds: float | None = None,
) -> tuple[Budget, ModelConfig]:
    """The budget (the owner's `[enrich]` lines, lowered by any flag) and the model adapter of a run."""
    from agentmd.engine.enrich.model import config_from

    table = config.get("enrich") if isinstance(config.get("enrich"), Mapping) else {}
    assert isinstance(table, Mapping)
    budget = budget_from(table).lowered(max_calls=max_calls, max_tokens=max_tokens, max_seconds=max_seconds)
    return budget, config_from(table)


def caller_for(config: ModelConfig) -> Caller:
    from agentmd.engine.enrich.model import call

    return lambda prompt, left: call(config, prompt, timeout=left)
