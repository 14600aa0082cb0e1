"""One enrichment run: the review queue judged note by note by the model CLI, within budgets only the owner
raises, the accepted answers filed through the same path as `confirm` (the daemon when it runs).

The queue is a snapshot taken at the start (a note captured meanwhile waits for the next run), ordered by
cause: unfiled captures first, then ingested notes, phone clips and low-confidence filings, each oldest first.
For each note, free gates before any spend: a note that cannot be read, a record (its `kind` is one of the
contract's `record_kinds`), a superseded note, and a body the ledger already judged under this prompt and
vocabulary are passed over without a call. Then the budgets are read (calls, tokens a call adds, wall time,
and the fuse: N notes in a row whose call failed); the first one spent ends the run, and the report names it
and the cursor (`--after`) the next run resumes from. Accepted answers are applied at the end, one commit per
note with `origin: enrich`; the ledger records each verdict once its note is written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter, stamp
from agentmd.engine.curate.queue import QueueItem, review_queue
from agentmd.engine.curate.steps import Edit, Step, StepRefused, StepResult, digest
from agentmd.engine.enrich import compose as composing
from agentmd.engine.enrich.ledger import Ledger, body_hash, judgment_key
from agentmd.engine.enrich.model import Answer, ModelCallFailed, ModelConfig, Usage
from agentmd.engine.enrich.prompt import (
    PROMPT_VERSION,
    AnswerRefused,
    Neighbour,
    build_prompt,
    read_answer,
    vocabulary_hash,
)
from agentmd.engine.errors import UsageError
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest, search
from agentmd.rules import Contract
from agentmd.vault_schema import YamlRefused

ORIGIN = "enrich"
STATE_FOLDER = "enrich"
RUNS_FILE = "runs.jsonl"
REASON_ORDER = ("unfiled", "ingested", "phone-clip", "low-confidence")
MAX_NEIGHBOURS = 5
DEFAULT_OUTPUT_TOKENS = 300  # the dry run's estimate of an answer when no run has been measured yet

Caller = Callable[[str, float], Answer]
"""One model call: (prompt, seconds left) -> the answer; raises ModelCallFailed."""
Apply = Callable[[Sequence[Step]], list[StepResult]]


@dataclass(frozen=True)
class Budget:
    max_calls: int = 100
    max_tokens: int = 2_000_000
    max_seconds: float = 3.5 * 3600
    fuse: int = 5

    KEYS = ("max_calls", "max_tokens", "max_seconds", "fuse")

    def lowered(self, **flags: float | int | None) -> Budget:
        """The budget with each given flag applied only where it is lower: a flag never raises a line."""
        values = {k: getattr(self, k) for k in self.KEYS}
        for key, value in flags.items():
            if value is None:
                continue
            if value < 0:
                raise UsageError(f"--{key.replace('_', '-')} must be 0 or more")
            values[key] = min(values[key], type(values[key])(value))
        return Budget(**values)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.KEYS}


def budget_from(table: Mapping[str, Any]) -> Budget:
    """The owner's budget, from the config file's `[enrich]` table (defaults for what it leaves out)."""
    values: dict[str, Any] = {}
    for key in Budget.KEYS:
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise UsageError(f"[enrich] {key} = {value!r} must be a number, 0 or more")
        values[key] = float(value) if key == "max_seconds" else int(value)
    return Budget(**values)


@dataclass
class NoteOutcome:
    path: str
    outcome: str  # filed | below-floor | refused | failed | unchanged | skipped | owed (dry run)
    reason: str = ""
    cause: str = ""
    usage: Usage | None = None
    proposal: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "outcome": self.outcome}
        for key in ("reason", "cause"):
            if getattr(self, key):
                out[key] = getattr(self, key)
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
    estimate: dict[str, Any] | None = None

    def count(self, outcome: str) -> int:
        return sum(1 for n in self.notes if n.outcome == outcome)

    def to_dict(self) -> dict[str, Any]:
        counts = {k: self.count(k) for k in ("filed", "below-floor", "refused", "failed", "unchanged", "skipped")}
        out: dict[str, Any] = {
            "dry_run": self.dry_run,
            "prompt_version": PROMPT_VERSION,
            "budget": self.budget.to_dict(),
            "counts": counts,
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
    """The queue by cause (unfiled first), keeping its oldest-first order inside each cause."""
    rank = {r: i for i, r in enumerate(REASON_ORDER)}
    return sorted(items, key=lambda i: rank.get(i.reason, len(rank)))


def neighbours_of(
    store: Store, contract: Contract, vault: Path, path: str, fm: Mapping[str, Any], body: str
) -> list[Neighbour]:
    """Up to five notes the lexical index finds for the note's title, tags and first words, the note itself
    left out. Each is offered by its path without `.md`."""
    words = [str(fm.get("title") or "")] + [str(t) for t in (fm.get("tags") or []) if isinstance(t, str)]
    query = " ".join([*(w for w in words if w.strip()), *body.split()[:16]])
    query = " ".join(query.split()[:24])
    if not query.strip():
        return []
    try:
        with store.lock:
            found = search(store.index, contract, SearchRequest(query=query, limit=MAX_NEIGHBOURS + 5), store.catalog)
    except (UsageError, ValueError):
        return []
    out: list[Neighbour] = []
    for row in found.get("results", []):
        other = str(row.get("note") or "")
        if not other or other == path or not other.endswith(".md") or any(n.id == other[:-3] for n in out):
            continue
        summary = ""
        try:
            ofm = read_frontmatter((vault / other).read_bytes().decode("utf-8", "replace")) or {}
            summary = str(ofm.get("summary") or "")
        except OSError:
            pass
        title = str(row.get("title") or Path(other).stem)
        out.append(Neighbour(other[:-3], " ".join(title.split())[:200], " ".join(summary.split())[:300]))
        if len(out) == MAX_NEIGHBOURS:
            break
    return out


@dataclass
class _Note:
    item: QueueItem
    text: str
    data: bytes
    fm: dict[str, Any]
    key: str
    cause: str


def _read(vault: Path, item: QueueItem, contract: Contract, ledger: Ledger, vocabulary: str) -> _Note | NoteOutcome:
    """The note ready to judge, or the outcome of a free gate."""
    try:
        data = (vault / item.path).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return NoteOutcome(item.path, "skipped", f"unreadable ({exc})")
    fm = read_frontmatter(text)
    if fm is None:
        return NoteOutcome(item.path, "skipped", "frontmatter cannot be read; fix it by hand")
    kind = fm.get("kind")
    if isinstance(kind, str) and contract.is_record_kind(kind):
        return NoteOutcome(item.path, "skipped", f"a record ({kind}), not a card")
    states = {str(fm.get(k) or "").strip().lower() for k in ("status", "lifecycle")}
    if "superseded" in states or fm.get("superseded_by"):
        return NoteOutcome(item.path, "skipped", "superseded")
    body = composing.body_of(text).encode("utf-8")
    key = judgment_key(body_hash(body), PROMPT_VERSION, vocabulary)
    row = ledger.get(key)
    if row is not None:
        moved = ledger.follow(key, item.path)
        why = f"judged {row.verdict} at {row.at} and unchanged since" + (
            " (moved; the ledger followed it)" if moved else ""
        )
        return NoteOutcome(item.path, "unchanged", why)
    before = ledger.latest_for(item.path)
    cause = "never-judged" if before is None else "changed"
    if before is not None and before.key.split(":", 1)[0] == key.split(":", 1)[0]:
        cause = "owed-under-new-prompt"
    return _Note(item, text, data, fm, key, cause)


def append_run(state_dir: Path, record: Mapping[str, Any]) -> None:
    folder = state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / RUNS_FILE).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def last_runs(state_dir: Path) -> list[dict[str, Any]]:
    try:
        lines = (state_dir / STATE_FOLDER / RUNS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _tokens_per_call(state_dir: Path, prompt_chars: int) -> int:
    """What one call is expected to add: the mean of the measured runs, else the prompt's size in tokens."""
    added = calls = 0
    for rec in last_runs(state_dir)[-10:]:
        if not rec.get("dry_run") and rec.get("calls"):
            added += int((rec.get("usage") or {}).get("added", 0) or 0)
            calls += int(rec["calls"])
    if calls:
        return max(1, added // calls)
    return prompt_chars // 4 + DEFAULT_OUTPUT_TOKENS


class RunBusy(UsageError):
    """Another enrichment run holds the run lock: two runs would pay twice for the same notes."""


@contextlib.contextmanager
def run_lock(state_dir: Path) -> Iterator[None]:
    """One enrichment run at a time per vault (a hand run and the nightly job), by an exclusive file lock."""
    folder = state_dir / STATE_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / "run.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RunBusy("another enrichment run is in progress for this vault; try again when it ends") from None
        yield
    finally:
        os.close(fd)


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
        return _enrich(
            vault=vault,
            store=store,
            contract=contract,
            state_dir=state_dir,
            budget=budget,
            caller=caller,
            model=model,
            apply=apply,
            after=after,
            now=now,
            monotonic=monotonic,
            progress=progress,
        )


def _enrich(
    *,
    vault: Path,
    store: Store,
    contract: Contract,
    state_dir: Path,
    budget: Budget,
    caller: Caller,
    model: ModelConfig,
    apply: Apply | None,
    after: str | None,
    now: Callable[[], dt.datetime],
    monotonic: Callable[[], float],
    progress: Callable[[NoteOutcome], None] | None,
) -> Report:
    dry = apply is None
    report = Report(dry_run=dry, budget=budget)
    started = monotonic()
    ledger = Ledger(state_dir / STATE_FOLDER)
    if ledger.problem:
        report.warnings.append(ledger.problem)
    types = sorted(contract.types)
    vocabulary = vocabulary_hash(contract.types)
    floor = float(contract.thresholds.low_confidence)
    queue = ordered(review_queue(vault, store.catalog, contract, state_dir=state_dir))
    if after:
        names = [i.path for i in queue]
        if after not in names:
            raise UsageError(f"--after {after}: no such note in the queue; run without --after to start over")
        queue = queue[names.index(after) + 1 :]
    steps: list[Step] = []
    pending: dict[str, tuple[str, str, str]] = {}  # path -> (ledger key, verdict, reason)
    failures_in_a_row = 0
    owed_calls = 0
    prompt_chars = 0
    last_done: str | None = after

    def note(outcome: NoteOutcome) -> None:
        report.notes.append(outcome)
        if progress is not None:
            progress(outcome)

    for item in queue:
        ready = _read(vault, item, contract, ledger, vocabulary)
        if isinstance(ready, NoteOutcome):
            note(ready)
            last_done = item.path
            continue
        offered = neighbours_of(store, contract, vault, item.path, ready.fm, composing.body_of(ready.text))
        prompt = build_prompt(item.path, ready.text, types, offered)
        if dry:
            if owed_calls < budget.max_calls:
                owed_calls += 1
                prompt_chars += len(prompt)
                note(NoteOutcome(item.path, "owed", cause=ready.cause))
            else:
                note(NoteOutcome(item.path, "owed", "past the call budget: a later run", cause=ready.cause))
            continue
        stop = _stop_reason(report, budget, failures_in_a_row, monotonic() - started)
        if stop:
            report.stopped_by = stop
            report.cursor = last_done
            break
        left = budget.max_seconds - (monotonic() - started)
        report.calls += 1
        try:
            answer = caller(prompt, max(1.0, left))
        except ModelCallFailed as exc:
            report.usage = report.usage + exc.usage
            failures_in_a_row += 1
            note(NoteOutcome(item.path, "failed", exc.reason, ready.cause, exc.usage))
            last_done = item.path
            continue
        failures_in_a_row = 0
        report.usage = report.usage + answer.usage
        last_done = item.path
        at = stamp(now())
        try:
            proposal = read_answer(
                answer.text,
                types=types,
                offered=[n.id for n in offered],
                note_text=composing.body_of(ready.text),
                note_title=str(ready.fm.get("title") or ""),
                file_stem=Path(item.path).stem,
                known_aliases=composing.listed(ready.fm.get("aliases")),
            )
        except AnswerRefused as exc:
            ledger.record(ready.key, item.path, "refused", at, f"{exc.gate}: {exc}")
            note(NoteOutcome(item.path, "refused", f"{exc.gate}: {exc}", ready.cause, answer.usage))
            continue
        updates, filed = composing.updates_for(
            ready.fm,
            proposal,
            floor=floor,
            types=contract.types,
            at=at,
            model=model.name,
            prompt_version=PROMPT_VERSION,
        )
        try:
            new_text = composing.compose(ready.text, updates)
        except (YamlRefused, composing.BodyChanged) as exc:
            ledger.record(ready.key, item.path, "refused", at, f"compose: {exc}")
            note(NoteOutcome(item.path, "refused", f"compose: {exc}", ready.cause, answer.usage))
            continue
        verdict = "filed" if filed else "below-floor"
        why = f"confidence {proposal.confidence:.2f} {'≥' if filed else '<'} floor {floor:g}"
        if proposal.dropped_related:
            why += f"; dropped related not offered: {', '.join(proposal.dropped_related)}"
        summary = f"enrich {item.path}: {'filed as ' + proposal.type if filed else 'below the floor, left for review'}"
        steps.append(Step(ORIGIN, summary, (Edit(item.path, new_text, digest(ready.data)),)))
        pending[item.path] = (ready.key, verdict, why)
        note(NoteOutcome(item.path, verdict, why, ready.cause, answer.usage, proposal.to_dict()))
    if dry:
        per_call = _tokens_per_call(state_dir, prompt_chars // max(1, owed_calls))
        causes: dict[str, int] = {}
        for n in report.notes:
            if n.outcome == "owed":
                causes[n.cause] = causes.get(n.cause, 0) + 1
        report.estimate = {
            "calls": owed_calls,
            "tokens": owed_calls * per_call,
            "tokens_per_call": per_call,
            "owed_by_cause": causes,
        }
        return report
    if steps:
        assert apply is not None
        try:
            results = apply(steps)
        except StepRefused as exc:
            results = exc.done
            report.warnings.append(str(exc))
        written = {p for r in results for p in r.paths}
        report.commits = [c for r in results for c in r.commits]
        report.warnings += [w for r in results for w in r.warnings]
        for path in written:
            key, verdict, why = pending[path]
            ledger.record(key, path, verdict, stamp(now()), why)
        for n in report.notes:
            if n.path in pending and n.path not in written:
                n.outcome, n.reason = "failed", "the write was refused; asked again next run"
    ledger.save()
    append_run(state_dir, {**_record(report), "at": stamp(now())})
    return report


def _stop_reason(report: Report, budget: Budget, failures: int, elapsed: float) -> str | None:
    if report.calls >= budget.max_calls:
        return f"max_calls: the call budget ({budget.max_calls} calls) is spent"
    if report.usage.added >= budget.max_tokens:
        return f"max_tokens: the token budget ({budget.max_tokens} tokens added) is spent"
    if elapsed >= budget.max_seconds:
        return f"max_seconds: the time budget ({budget.max_seconds:g} s) is spent"
    if budget.fuse and failures >= budget.fuse:
        return f"fuse: {failures} notes in a row whose model call failed"
    return None


def _record(report: Report) -> dict[str, Any]:
    data = report.to_dict()
    data.pop("notes")
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
