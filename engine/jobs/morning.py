"""The morning note: once a day, a short note in the vault saying what the memory did overnight.

It is rendered from the same data `agentmd status --json` and the run log hold, never from a separate
count, so the note and the status cannot disagree:
- what ran since the last note (the run log): each job's runs and how they ended, failures by name;
- what changed in the memory (git history since then): notes added, edited, retired and deleted, by commit origin;
- what needs the owner (the status): red and yellow items, the queue's size and oldest item, refused captures,
  failed jobs.

The note goes through capture into the contract space named by `[morning] space` in the config file
(`daily` unless set), titled with the date, and is committed with `origin: morning`. Its one-line headline
is kept in the state folder for the session-start hook.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmd.engine.fsutil import read_json, write_json
from agentmd.engine.git.conflicts import sibling_machine
from agentmd.engine.git.runner import GitCli, GitMissing
from agentmd.engine.git.runner import since as git_since
from agentmd.engine.write.tallies import refusal_days

if TYPE_CHECKING:  # the session-start hook reads a headline here: it must not load capture and its prefilters
    from agentmd.engine.write.capture import Capturer

ORIGIN = "morning"
SYNTHETIC = frozenset({"self-probe", ORIGIN})  # the memory's own bookkeeping: commits counted, notes not
DEFAULT_SPACE = "daily"
GENERATED = "agentmd morning"  # its `generated:` value: a page derived from the log, never recalled into a prompt
_SEP = "@@agentmd-commit "  # opens each commit in the log output; a file line starts with its status letter


@dataclass
class Changes:
    """Notes added, edited, retired (archived in place) and deleted (or moved away), by commit origin."""

    added: Counter[str] = field(default_factory=Counter)
    edited: Counter[str] = field(default_factory=Counter)
    retired: Counter[str] = field(default_factory=Counter)
    deleted: Counter[str] = field(default_factory=Counter)
    commits: Counter[str] = field(default_factory=Counter)
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "added": dict(self.added),
            "edited": dict(self.edited),
            "retired": dict(self.retired),
            "deleted": dict(self.deleted),
            "commits": dict(self.commits),
            "error": self.error,
        }


def changes_since(vault: Path, since: dt.datetime) -> Changes:
    """Count Markdown notes added, edited, retired and deleted per origin in the commits since `since` (self-probe
    notes and the morning notes themselves are not the memory changing, so only their commits count). A file
    that one writer added and deleted again within the span (a phone clip filed as a note of its own) is neither
    added nor deleted."""
    out = Changes()
    if not (vault / ".git").exists():
        out.error = "the vault is not a git repository"
        return out
    try:
        git = GitCli(vault)
        cancelled = _taken_back(git, since)
        run = git.run(
            "log",
            git_since(since.isoformat(timespec="seconds")),
            "--no-renames",
            "--name-status",
            f"--format=%n{_SEP}%H %(trailers:key=origin,valueonly,separator=%x2C)",
        )
    except GitMissing as exc:
        out.error = str(exc)
        return out
    if run.code != 0:
        out.error = run.why()
        return out
    counted: list[tuple[str, str, str]] = []  # (origin, kind, path), newest commit first as git logs them
    for chunk in ("\n" + run.text).split("\n" + _SEP)[1:]:
        lines = chunk.split("\n")  # the commit and its origin trailer (empty when none), then the changed files
        sha, _, origin = lines[0].strip().partition(" ")
        origin = origin.strip() or "unknown"
        out.commits[origin] += 1
        if origin in SYNTHETIC or sha in cancelled:
            continue
        for line in lines[1:]:
            status, _, path = line.partition("\t")
            if path.endswith(".md"):
                counted.append((origin, status[:1], path))
    newest: dict[str, tuple[str, str]] = {}
    oldest: dict[str, tuple[str, str]] = {}
    for origin, kind, path in counted:
        newest.setdefault(path, (kind, origin))
        oldest[path] = (kind, origin)
    # added and deleted again within the span by one writer (a clip the sweep filed): it came and went
    passing = {p for p, (kind, origin) in newest.items() if kind == "D" and oldest[p] == ("A", origin)}
    for origin, kind, path in counted:
        if path in passing:
            continue
        if kind == "A":
            out.added[origin] += 1
        elif kind == "M":
            out.edited[origin] += 1
        elif kind == "D":
            out.deleted[origin] += 1
    _count_archived(git, since, out, cancelled)
    return out


def _taken_back(git: GitCli, since: dt.datetime) -> set[str]:
    """The commits since `since` that a later undo or revert since then took back, and those undos themselves:
    a change made and taken back overnight changed nothing in the memory. An undo that had to set the undone
    version aside as a conflict sibling (a later edit stood) took nothing back: it and its target both count."""
    run = git.run(
        "log", git_since(since.isoformat(timespec='seconds')), "--no-renames", "--name-status",
        f"--format={_SEP}%H %(trailers:key=reverts,valueonly,separator=%x2C)",
    )  # fmt: skip
    named = {}
    for chunk in (run.text if run.code == 0 else "").split(_SEP)[1:]:
        head, *files = chunk.strip("\n").split("\n")
        sha, _, reverts = head.partition(" ")
        if any(line.startswith("A\t") and sibling_machine(line[2:]) is not None for line in files):
            continue
        named[sha] = {r.strip() for r in reverts.split(",") if r.strip()}
    undone = {r for rs in named.values() for r in rs if r in named}
    return undone | {sha for sha, rs in named.items() if rs and rs <= undone}


_ARCHIVED = re.compile(r"""^\+lifecycle:\s*["']?archived["']?\s*$""")


def _count_archived(git: GitCli, since: dt.datetime, out: Changes, cancelled: set[str]) -> None:
    """A note kept but archived (`agentmd retire`, a groom's retirement: `lifecycle: archived` set in place) is
    retired too, not edited: the lifecycle lines of the edits since `since` are read (only those hunks)."""
    run = git.run(
        "log", git_since(since.isoformat(timespec='seconds')), "--no-renames", "--diff-filter=M", "-p", "-U0",
        "-G^lifecycle:", f"--format=%n{_SEP}%H %(trailers:key=origin,valueonly,separator=%x2C)",
    )  # fmt: skip
    if run.code != 0:
        return
    for chunk in ("\n" + run.text).split("\n" + _SEP)[1:]:
        lines = chunk.split("\n")
        sha, _, origin = lines[0].strip().partition(" ")
        origin = origin.strip() or "unknown"
        if origin in SYNTHETIC or sha in cancelled:
            continue
        archived, note = 0, False
        for line in lines[1:]:
            if line.startswith("+++ "):
                note = line.endswith(".md")
            elif note and _ARCHIVED.match(line):
                archived += 1
        if archived:
            out.retired[origin] += archived
            out.edited[origin] -= archived
            if out.edited[origin] <= 0:
                del out.edited[origin]


def _job_lines(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """One line per job of what ran, and one per failed or stopped run (runs that failed alike share one)."""
    by_job: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        by_job.setdefault(str(rec.get("job")), []).append(rec)
    ran, failed = [], []
    for name in sorted(by_job):
        recs = by_job[name]
        outcomes = Counter(str(r.get("outcome")) for r in recs)
        parts = [f"{n} {o}" for o, n in sorted(outcomes.items())]
        last = recs[-1]
        line = f"- {name}: {', '.join(parts)}; last {last.get('outcome')} at {str(last.get('start'))[11:16]}"
        if last.get("outcome") != "ok":
            line += f" ({last.get('stop_reason')})"
        ran.append(line)
        if name == "enrich":
            ran += _enrich_line(last.get("changed") or {})
        if name == "lessons":
            ran += _lessons_lines(recs)
        failed += _failure_lines(name, recs)
    return ran, failed


def _failure_lines(name: str, recs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per failed or stopped run; runs that failed alike (a remote unreachable all night) share one."""
    alike: dict[tuple[str, str], list[str]] = {}
    for r in recs:
        if r.get("outcome") in ("failed", "stopped"):
            alike.setdefault((str(r.get("outcome")), str(r.get("stop_reason"))), []).append(str(r.get("start")))
    lines = []
    for (outcome, reason), starts in alike.items():
        first, last = starts[0][11:16], starts[-1][11:16]
        when = f"at {first}" if len(starts) == 1 else f"{len(starts)} times from {first} to {last}"
        lines.append(f"- job {name} {outcome} {when}: {reason}")
    return lines


def _lessons_lines(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every lesson the night proposed, by path: each waits in the queue for the owner to keep or retire."""
    proposed = [p for r in records for p in ((r.get("changed") or {}).get("proposed") or []) if isinstance(p, str)]
    return [f"  - lesson to review: [[{p.removesuffix('.md')}]]" for p in proposed]


def _enrich_line(changed: Mapping[str, Any]) -> list[str]:
    """The enrichment run's own account: notes judged by verdict, the budget used and why it stopped."""
    if "calls" not in changed:
        return []
    verdicts = ("filed", "below_floor", "refused", "failed", "unchanged")
    apart = (
        ("dormant", "dormant"),
        ("idea", "idea card(s)"),
        ("record", "project record(s)"),
        ("private_skipped", "kept local (private or recall-exempt, never sent)"),
    )
    judged = ", ".join(
        [f"{changed.get(k, 0)} {k.replace('_', ' ')}" for k in verdicts]
        + [f"{changed[k]} {name}" for k, name in apart if changed.get(k)]
    )
    cost = changed.get("cost_usd")
    line = f"  - enrichment: {judged}; {changed['calls']} call(s), {changed.get('tokens_added', 0)} tokens added"
    line += f", ${cost:.2f}" if isinstance(cost, int | float) else ""
    stopped = changed.get("stopped_by")
    line += f"; stopped by {stopped} (resume after {changed.get('cursor')})" if stopped else "; the queue is done"
    causes = changed.get("by_cause") or {}
    if causes:
        line += "; judged by cause: " + ", ".join(f"{k} {v}" for k, v in causes.items())
    sunk = [str(p) for p in changed.get("dormant_notes") or []]
    if sunk:
        line += f"; dormant now, below the floor twice: {', '.join(sunk)}"
    return [line]


LISTED = 20  # notes named by path in a line of the note at most


def _named(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:LISTED])
    return shown + (f" and {len(paths) - LISTED} more" if len(paths) > LISTED else "")


def lifecycle_lines(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the lifecycle policy's runs (engine/curate/lifecycle.py) sank and raised, by path."""
    sank: list[str] = []
    rose: list[str] = []
    days = None
    for rec in records:
        if rec.get("job") != "lifecycle" or rec.get("outcome") != "ok":
            continue
        changed = rec.get("changed") or {}
        sank += [str(p) for p in changed.get("sank") or [] if str(p) not in sank]
        rose += [str(p) for p in changed.get("rose") or [] if str(p) not in rose]
        days = changed.get("dormant_after_days", days)
    lines = []
    if sank:
        quiet = f", unused for {days} days or more" if days else ""
        lines.append(f"- {len(sank)} note{'s' if len(sank) != 1 else ''} sank to dormant{quiet}: {_named(sank)}")
    if rose:
        lines.append(f"- {len(rose)} dormant note{'s' if len(rose) != 1 else ''} rose again, used: {_named(rose)}")
    return lines


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{n} by {o}" for o, n in sorted(counter.items()))


def render(
    day: dt.date,
    status: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    changes: Changes,
    refused: Mapping[str, int] | None = None,
) -> tuple[str, str]:
    """The headline and the Markdown body of the note for `day`; `refused` counts the captures refused since
    the last note, by reason code."""
    ran, failed = _job_lines(records)
    red = [str(r) for r in status.get("red") or []]
    yellow = [str(y) for y in status.get("yellow") or []]
    added, edited, retired = (sum(c.values()) for c in (changes.added, changes.edited, changes.retired))
    deleted = sum(changes.deleted.values())
    color = str(status.get("color") or "unknown").upper()
    head = [color + (" — " + ", ".join(r.split(":", 1)[0] for r in red) if red else "")]
    head.append(f"{added} added, {edited} edited, {retired} retired" + (f", {deleted} deleted" if deleted else ""))
    runs = sum(1 for r in records if r.get("outcome") in ("failed", "stopped"))
    if runs:
        head.append(f"{runs} failed job run{'s' if runs != 1 else ''}")
    headline = f"Morning {day.isoformat()}: " + " · ".join(head)

    lines = [f"**{headline}**", ""]
    lines += ["## What ran", ""] + (ran or ["- nothing ran"]) + [""]
    lines += ["## What changed", ""]
    if changes.error:
        lines.append(f"- history unavailable: {changes.error}")
    kinds = (("added", changes.added), ("edited", changes.edited), ("retired", changes.retired))
    for label, counter in (*kinds, ("deleted (or moved away)", changes.deleted)):
        if counter:
            n = sum(counter.values())
            lines.append(f"- {n} note{'s' if n != 1 else ''} {label}: {_counts(counter)}")
    moved = lifecycle_lines(records)
    lines += moved
    if not (changes.added or changes.edited or changes.retired or changes.deleted or changes.error or moved):
        lines.append("- no note changed")
    if changes.commits:
        lines.append(f"- {sum(changes.commits.values())} commits: {_counts(changes.commits)}")
    lines += ["", "## What needs you", ""]
    needs = [f"- RED {r}" for r in red] + [f"- yellow {y}" for y in yellow]
    needs += queue_lines(status.get("queue") or {})
    if refused:
        n = sum(refused.values())
        why = ", ".join(f"{code} {k}" for code, k in sorted(refused.items()))
        needs.append(f"- {n} refused capture{'s' if n != 1 else ''} ({why}): notes the filters or the door stopped")
    needs += failed
    lines += needs or ["- nothing needs you"]
    return headline, "\n".join(lines) + "\n"


def queue_lines(queue: Mapping[str, Any]) -> list[str]:
    """The queue as the note says it: the total, the part captured since the baseline (what pages), and the
    inherited backlog with its oldest age and the baseline's date; nothing when nothing waits."""
    count = int(queue.get("count") or 0)
    inherited = int(queue.get("inherited") or 0)
    total = int(queue.get("total") or count + inherited)
    if not total:
        return []
    oldest = queue.get("oldest_age_days")
    line = f"- queue: {total} awaiting review, {count} since the baseline"
    line += f" (the oldest {oldest} days old)" if oldest is not None else ""
    if inherited:
        at = str(queue.get("baseline_at") or "")[:10]
        backlog_age = queue.get("inherited_oldest_age_days")
        line += f"; {inherited} inherited from before {at or 'the baseline'}"
        line += f" (the oldest {backlog_age} days old)" if backlog_age is not None else ""
        line += ", reported, never paged about"
    return [line]


class MorningState:
    """The last note written: its day, path, headline and time, in `<state>/jobs/morning.json`."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "jobs" / "morning.json"

    def read(self) -> dict[str, object] | None:
        return read_json(self.path)

    def since(self, now: dt.datetime) -> dt.datetime:
        """Where tonight's account starts: the last note's time, else a day ago."""
        last = (self.read() or {}).get("at")
        try:
            at = dt.datetime.fromisoformat(str(last)) if last else None
        except ValueError:
            at = None
        day_ago = now - dt.timedelta(days=1)
        return at if at is not None and day_ago <= at <= now else day_ago

    def record(
        self, day: dt.date, path: str, headline: str, now: dt.datetime, refusals: Mapping[str, object] | None = None
    ) -> None:
        """The note written; `refusals`: the day tallies of refused captures it told (the next note tells the rest)."""
        write_json(
            self.path,
            {
                "day": day.isoformat(),
                "path": path,
                "headline": headline,
                "at": now.isoformat(timespec="seconds"),
                "refusals": dict(refusals or {}),
            },
        )


def headline_for(state_dir: Path, today: dt.date) -> str | None:
    """The latest morning note's headline when it is from today or yesterday (for session start)."""
    data = MorningState(state_dir).read() or {}
    try:
        day = dt.date.fromisoformat(str(data.get("day")))
    except ValueError:
        return None
    if (today - day).days > 1 or not data.get("headline"):
        return None
    return f"{data['headline']} ({data.get('path')})"


def write_note(
    capturer: Capturer,
    *,
    vault: Path,
    state_dir: Path,
    status: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    now: dt.datetime,
    space: str = DEFAULT_SPACE,
) -> dict[str, object]:
    """Render tonight's note and write it through capture (origin `morning`); what was written. One note a day:
    when today's is written and still in the vault, nothing is written again (`skipped` names it)."""
    state = MorningState(state_dir)
    last = state.read() or {}
    if last.get("day") == now.date().isoformat() and last.get("path") and (vault / str(last["path"])).is_file():
        return {"skipped": f"today's morning note is already written: {last['path']}", "path": last["path"]}
    since = state.since(now)
    tonight = [r for r in records if str(r.get("start", "")) >= since.isoformat(timespec="seconds")]
    changes = changes_since(vault, since)
    # refusals are tallied by day: those the last note already told are taken out, so none is told twice
    days = refusal_days(state_dir, since.date())
    told = last.get("refusals")
    refused: Counter[str] = Counter()
    for day, codes in days.items():
        before = told.get(day) if isinstance(told, dict) else None
        seen = before if isinstance(before, dict) else {}
        refused.update({code: n - int(seen.get(code, 0)) for code, n in codes.items() if n > int(seen.get(code, 0))})
    headline, body = render(now.date(), status, tonight, changes, refused)
    from agentmd.engine.write.capture import CaptureRequest

    request = CaptureRequest(title=f"Morning note {now.date().isoformat()}", body=body, summary=headline, space=space)
    result = capturer.capture(
        request,
        origin=ORIGIN,
        extra_fields={"status": "active", "filing_confidence": "high", "kind": "morning-note", "generated": GENERATED},
        count=False,
    )
    state.record(now.date(), result.path, headline, now, refusals=days)
    return {"path": result.path, "headline": headline, "since": since.isoformat(timespec="seconds")}
