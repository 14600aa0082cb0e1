"""The lifecycle policy: notes nothing uses sink to `lifecycle: dormant`, and rise again when used.

A note's last use is the latest of: its last injection by the recall hook and its last on-demand recall or
search result (the usage ledger, engine/index/usage.py), its last edit (its newest commit the policy did not
make), and the last edit of any note that links to it. A note whose last use is `dormant_after_days` (the
contract's threshold) or more before now sinks: `lifecycle: dormant`, `lifecycle_since` (now) and
`lifecycle_before` (its lifecycle until then, when it had one). Dormant notes are demoted in search (the
`dormant` class weight) and never injected by recall (engine/search/recall.py).

A note the policy sank rises as soon as it is used again: recalled or returned by a search after it sank,
edited since the policy's commit, or linked to from a note edited since. It gets back exactly what it had:
the `lifecycle_before` value, or no lifecycle when it had none.

Never moved: rules (types `rule`, `convention`, `preference`), pinned notes (`pinned: true` or `lifecycle:
pinned`), a note whose lifecycle the owner set by hand (engine/curate/lifecycle_history.py; journaled once, as
the operator's), any lifecycle but `active` or none (archived, superseded and staged notes are walled anyway),
self-probe notes, notes whose frontmatter cannot be edited safely, and notes the door refuses (a private space).

Use is counted on this machine, so no note sinks before the policy has watched it for the whole period: the
watch starts when the usage ledger began counting or when the policy first ran against this catalog
(`<state dir>/lifecycle.json`), whichever is earlier; a new catalog (the counts lost) starts the watch again.

Changes are applied as one curation step with `origin: lifecycle` (engine/curate/steps.py: the door, the plan's
hashes, one commit), after the corpus-write gate when more than one note changes, at most MAX_CHANGES per pass;
then each is journaled with the actor `policy`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.curate.actions import read_frontmatter, stamp
from agentmd.engine.curate.lifecycle_history import (
    POLICY_ORIGIN,
    Commit,
    LifecycleChange,
    append_journal,
    edits,
    lifecycle_changes,
    read_journal,
)
from agentmd.engine.curate.steps import CURATION_ACTOR, Edit, Step, StepResult, digest
from agentmd.engine.errors import AgentmdError
from agentmd.engine.fsutil import read_json, write_json
from agentmd.engine.times import parse_utc
from agentmd.rules import Contract, decide
from agentmd.rules.contract.model import RULE_TYPES
from agentmd.vault_schema import YamlRefused, update_frontmatter

DORMANT = "dormant"
SINKABLE = frozenset({"", "active"})  # the lifecycles the policy may sink from (none, or active)
MAX_CHANGES = 500  # notes changed in one pass at most; the rest wait for the next
STATE_NAME = "lifecycle.json"
ACTOR_POLICY = "policy"
ACTOR_OPERATOR = "operator"


@dataclass(frozen=True)
class Change:
    path: str
    before: str | None  # the lifecycle the note had
    after: str | None  # the lifecycle it gets (None: the field is removed)
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "from": self.before, "to": self.after, "reason": self.reason}


@dataclass
class LifecyclePlan:
    now: dt.datetime
    days: int
    watching_since: dt.datetime | None
    sink: list[Change] = field(default_factory=list)
    rise: list[Change] = field(default_factory=list)
    hand_set: list[tuple[str, str | None, Commit]] = field(default_factory=list)  # (path, value, commit)
    left_alone: dict[str, int] = field(default_factory=dict)  # why notes were not moved: counts
    deferred: int = 0  # changes past MAX_CHANGES, left for the next pass
    edits: list[Edit] = field(default_factory=list)
    off: str | None = None  # why the policy did nothing at all

    def step(self) -> Step:
        return Step(POLICY_ORIGIN, f"lifecycle: {len(self.sink)} sank, {len(self.rise)} rose", tuple(self.edits))

    def to_dict(self) -> dict[str, object]:
        return {
            "now": stamp(self.now),
            "dormant_after_days": self.days,
            "watching_since": stamp(self.watching_since) if self.watching_since else None,
            "sank": [c.path for c in self.sink],
            "rose": [c.path for c in self.rise],
            "changes": [c.to_dict() for c in self.sink + self.rise],
            "hand_set": [p for p, _v, _c in self.hand_set],
            "left_alone": dict(sorted(self.left_alone.items())),
            "deferred": self.deferred,
            "off": self.off,
        }


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


# ------------------------------------------------------------------------------------------- watching


def watching_since(state_dir: Path, catalog_path: Path, now: dt.datetime, usage_since: str | None) -> dt.datetime:
    """When the policy's watch over this catalog's use began (see the module docstring); recorded on first call."""
    try:
        st = catalog_path.stat()
        identity = f"{st.st_dev}:{st.st_ino}"
    except OSError:
        identity = ""
    path = state_dir / STATE_NAME
    data = read_json(path) or {}
    began = parse_utc(data.get("watching_since")) if data.get("catalog") == identity else None
    if began is None or began > now:
        began = now
        write_json(path, {"watching_since": stamp(now), "catalog": identity})
    counted = parse_utc(usage_since)
    return min(began, counted) if counted is not None else began


# ------------------------------------------------------------------------------------------- planning


def _incoming(catalog: Any) -> dict[str, set[str]]:
    """Target note -> the notes linking to it (resolved as the link graph resolves them). A generated page (a map
    of content, which links every note it lists) is nobody's use of a note, so its links do not count."""
    from agentmd.engine.search.graph import resolve, stem_index

    paths = catalog.paths()
    by_stem = stem_index(paths)
    generated = {p for p, _c, _s, _h, flags in catalog.review_rows() if "generated" in flags}
    out: dict[str, set[str]] = {}
    for source, link in catalog.all_links():
        if link.attachment or source in generated:
            continue
        target = resolve(link.target, source, paths, by_stem=by_stem)
        if target and target != source:
            out.setdefault(target, set()).add(source)
    return out


class _Planner:
    def __init__(self, vault: Path, contract: Contract, catalog: Any, now: dt.datetime, since: dt.datetime) -> None:
        self.vault = vault
        self.contract = contract
        self.now = now
        self.days = int(contract.thresholds.dormant_after_days)
        self.cutoff = now - dt.timedelta(days=self.days)
        self.plan = LifecyclePlan(now, self.days, since)
        self.since = since
        self.rows = catalog.lifecycle_rows()
        self.edited, order = edits(vault)
        self.changed = lifecycle_changes(vault, order)
        self.linkers = _incoming(catalog)

    def skip(self, why: str) -> None:
        self.plan.left_alone[why] = self.plan.left_alone.get(why, 0) + 1

    def last_use(self, path: str, injected: str | None, recalled: str | None) -> dt.datetime:
        """The latest use of a note; its last edit counts as now when git has none (not committed yet)."""
        times = [self.since] + [t for t in (parse_utc(injected), parse_utc(recalled)) if t is not None]
        edit = self.edited.get(path)
        times.append(edit.at if edit is not None else self.now)
        times += [e.at for e in (self.edited.get(src) for src in self.linkers.get(path, ())) if e is not None]
        return max(times)

    def used_since_sinking(
        self, path: str, ours: LifecycleChange, sunk: dt.datetime, injected: str | None, recalled: str | None
    ) -> str | None:
        """Why a note the policy sank counts as used again, or None."""
        for what, when in (("recalled", parse_utc(injected)), ("recalled or found by a search", parse_utc(recalled))):
            if when is not None and when > sunk:
                return f"{what} on {when.date().isoformat()}"
        edit = self.edited.get(path)
        if edit is not None and edit.order < ours.commit.order:
            return f"edited ({edit.origin}) on {edit.at.date().isoformat()}"
        for src in sorted(self.linkers.get(path, ())):
            e = self.edited.get(src)
            if e is not None and e.order < ours.commit.order:
                return f"linked from {src}, edited on {e.at.date().isoformat()}"
        return None

    def run(self, journaled: set[tuple[str, str]]) -> LifecyclePlan:
        plan = self.plan
        if self.days <= 0:
            plan.off = "the contract's dormant_after_days is 0: the lifecycle policy is off"
            return plan
        if DORMANT not in self.contract.lifecycle:
            plan.off = "the contract's `lifecycle` list has no `dormant`: the lifecycle policy is off"
            return plan
        for path, lifecycle, type_, flags, injected, recalled in self.rows:
            current = _lower(lifecycle)
            change = self.changed.get(path)
            if "probe" in (flags or "").split(","):
                continue
            if change is not None and current != _lower(change.value):
                self.skip("lifecycle edited, not committed yet")
                continue
            if change is not None and change.by_hand:
                if (path, change.commit.sha) not in journaled:
                    plan.hand_set.append((path, change.value, change.commit))
                self.skip("lifecycle set by hand")
                continue
            if current == DORMANT:
                if change is None or not change.by_policy:
                    self.skip("dormant by another hand")
                    continue
                self._consider_rise(path, change, injected, recalled)
            elif current in SINKABLE:
                if _lower(type_) in RULE_TYPES:
                    self.skip("rule")
                    continue
                last = self.last_use(path, injected, recalled)
                if last <= self.cutoff:
                    self._consider_sink(path, lifecycle, last)
            else:
                self.skip(f"lifecycle {current}")
        return plan

    def _read(self, path: str) -> tuple[str, bytes, dict[str, object]] | None:
        try:
            data = (self.vault / path).read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            self.skip("unreadable")
            return None
        fm = read_frontmatter(text)
        if fm is None:
            self.skip("frontmatter unreadable")
            return None
        return text, data, fm

    def _allowed(self, path: str) -> bool:
        if not decide(self.vault, path, self.contract, actor=CURATION_ACTOR, creating=False).allowed:
            self.skip("the door refuses (private space)")
            return False
        return True

    def _add(self, change: Change, text: str, data: bytes, updates: dict[str, str], removed: list[str]) -> bool:
        if len(self.plan.edits) >= MAX_CHANGES:
            self.plan.deferred += 1
            return False
        try:
            new = update_frontmatter(text, updates, removed)
        except YamlRefused:
            self.skip("frontmatter cannot be edited safely")
            return False
        self.plan.edits.append(Edit(change.path, new, digest(data)))
        return True

    def _consider_sink(self, path: str, lifecycle: str | None, last: dt.datetime) -> None:
        read = self._read(path)
        if read is None or not self._allowed(path):
            return
        text, data, fm = read
        if fm.get("pinned") is True or _lower(fm.get("pinned")) in ("true", "yes"):
            self.skip("pinned")
            return
        if _lower(fm.get("type")) in RULE_TYPES:
            self.skip("rule")
            return
        before = given if isinstance(given := fm.get("lifecycle"), str) else None
        updates = {"lifecycle": DORMANT, "lifecycle_since": stamp(self.now)}
        if before:
            updates["lifecycle_before"] = before
        quiet = (self.now - last).days
        change = Change(path, before, DORMANT, f"unused for {quiet} days (dormant after {self.days})")
        if self._add(change, text, data, updates, ["lifecycle_before"] if not before else []):
            self.plan.sink.append(change)

    def _consider_rise(self, path: str, ours: LifecycleChange, injected: str | None, recalled: str | None) -> None:
        read = self._read(path)
        if read is None:
            return
        text, data, fm = read
        sunk = parse_utc(fm.get("lifecycle_since")) or ours.commit.at
        why = self.used_since_sinking(path, ours, sunk, injected, recalled)
        if why is None or not self._allowed(path):
            return
        before = given if isinstance(given := fm.get("lifecycle_before"), str) else None
        updates: dict[str, str] = {"lifecycle": before} if before else {}
        removed = ["lifecycle_since", "lifecycle_before"] + ([] if before else ["lifecycle"])
        change = Change(path, DORMANT, before, f"used again: {why}")
        if self._add(change, text, data, updates, removed):
            self.plan.rise.append(change)


def plan_pass(
    vault: Path, contract: Contract, catalog: Any, state_dir: Path, catalog_path: Path, now: dt.datetime
) -> LifecyclePlan:
    """What the policy would change now (reads the catalog, git history and the notes; writes only the watch
    record)."""
    since = watching_since(state_dir, catalog_path, now, catalog.usage_since())
    journaled = {
        (str(j.get("path")), str(j.get("commit"))) for j in read_journal(state_dir) if j.get("actor") == ACTOR_OPERATOR
    }
    return _Planner(vault, contract, catalog, now, since).run(journaled)


def journal_lines(plan: LifecyclePlan, results: Sequence[StepResult]) -> list[dict[str, object]]:
    """The journal's lines for a pass: the lifecycles set by hand it saw first, then its own changes."""
    commit = next((sha for r in results for sha in r.commits), None)
    ts = stamp(plan.now)
    lines: list[dict[str, object]] = [
        {
            "ts": ts,
            "path": path,
            "from": None,
            "to": value,
            "actor": ACTOR_OPERATOR,
            "reason": f"set by hand ({c.origin}) on {c.at.date().isoformat()}",
            "commit": c.sha,
        }
        for path, value, c in plan.hand_set
    ]
    applied = {p for r in results for p in r.paths}
    for change in plan.sink + plan.rise:
        if change.path in applied:
            lines.append(change.to_dict() | {"ts": ts, "actor": ACTOR_POLICY, "commit": commit})
    return lines


def run_pass(
    vault: Path,
    contract: Contract,
    catalog: Any,
    state_dir: Path,
    catalog_path: Path,
    *,
    now: dt.datetime,
    apply: Callable[[Sequence[Step]], list[StepResult]] | None,
    gate: Callable[[], Any] | None = None,
) -> tuple[LifecyclePlan, list[StepResult]]:
    """Plan, and unless `apply` is None (a dry run) apply the step and journal it. `gate` is the corpus-write
    gate, asked when more than one note changes; a refusal raises AgentmdError with its reason."""
    plan = plan_pass(vault, contract, catalog, state_dir, catalog_path, now)
    if apply is None:
        return plan, []
    results: list[StepResult] = []
    if plan.edits:
        if gate is not None and len(plan.edits) > 1:
            verdict = gate()
            if not verdict.ok:
                raise AgentmdError(
                    f"the corpus-write gate refused the lifecycle pass ({verdict.reason}): {verdict.detail}"
                )
        results = apply([plan.step()])
    append_journal(state_dir, journal_lines(plan, results))
    return plan, results
