"""Confirm, retire and promote: each turns a selection of notes into one step of frontmatter edits.

- confirm files a note: `status: active`, a `confirmed:` record (when, and the type and why given), the stamps
  it had kept as they were. Optionally names its type (checked against the contract) and why.
- retire walls a note: `lifecycle: archived`, `retired_reason`, `retired_at`. Nothing is ever deleted; the
  note stays in the vault and in git, hidden from search and recall like any archived note. Retiring every
  note of one source prefix, or every note one origin wrote since a date, is the undo for a bad batch.
- promote --to-shared takes a note out of its project: `project:` is removed and `promoted:` records which
  project it came from, so recall offers it in every project.

Only the named keys change; every other byte of a note is kept (vault_schema's writer). A note already in
the wanted state is skipped, so running a command twice changes nothing the second time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmd.engine.curate.steps import Edit, Step, digest
from agentmd.engine.errors import UsageError
from agentmd.engine.times import stamp as stamp  # the curation passes stamp their edits with it
from agentmd.rules import Contract
from agentmd.vault_schema import YamlRefused, load_yaml, split_frontmatter, update_frontmatter

ACTIONS = ("confirm", "retire", "promote")


@dataclass
class Planned:
    path: str
    action: str
    changes: dict[str, object] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    skipped: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "action": self.action}
        if self.skipped:
            out["skipped"] = self.skipped
        else:
            out["changes"] = self.changes
            if self.removed:
                out["removed"] = self.removed
        return out


@dataclass
class Plan:
    action: str
    items: list[Planned]
    step: Step

    @property
    def changed(self) -> list[Planned]:
        return [i for i in self.items if not i.skipped]

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "changes": len(self.changed),
            "skipped": len(self.items) - len(self.changed),
            "items": [i.to_dict() for i in self.items],
        }


def check_type(contract: Contract, type_: str | None) -> None:
    """Refuse a type the contract does not list, naming the ones it does (or, for a retired one, its
    replacement)."""
    if type_ is not None and type_ in contract.deprecations:
        replacement = contract.deprecations[type_]
        raise UsageError(f"type {type_!r} is retired by the contract's `deprecations`; use {replacement!r}")
    if type_ is not None and type_ not in contract.types:
        raise UsageError(f"unknown type {type_!r}; the contract lists: {', '.join(sorted(contract.types))}")


def read_frontmatter(text: str) -> dict[str, object] | None:
    """The note's frontmatter, {} without any, None when it cannot be read."""
    split = split_frontmatter(text)
    if split.yaml_text is None:
        return {}
    try:
        return load_yaml(split.yaml_text)
    except YamlRefused:
        return None


def _lower(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def _decide(
    action: str, fm: dict[str, object], now: str, options: dict[str, object]
) -> tuple[dict, list[str], str | None]:
    """(updates, removed keys, skip reason) for one note."""
    lifecycle, status = _lower(fm.get("lifecycle")), _lower(fm.get("status"))
    retired = lifecycle in ("archived", "superseded") or status in ("archived", "superseded")
    if action == "confirm":
        if retired:
            return {}, [], f"{lifecycle or status}: confirm does not revive a retired note; edit it by hand"
        type_ = options.get("type") or fm.get("type")
        if fm.get("confirmed") and status == "active" and not options.get("type") and not options.get("why"):
            return {}, [], "already confirmed"
        record: dict[str, object] = {"at": now}
        if type_:
            record["type"] = type_
        if options.get("why"):
            record["why"] = options["why"]
        updates: dict[str, object] = {"status": "active", "confirmed": record}
        if options.get("type"):
            updates["type"] = options["type"]
        if options.get("why"):
            updates["why"] = options["why"]
        return updates, [], None
    if action == "retire":
        if lifecycle == "archived":
            return {}, [], "already retired"
        reason = options.get("reason") or "retired"
        return {"lifecycle": "archived", "retired_reason": reason, "retired_at": now}, [], None
    if action == "promote":
        if retired:
            return {}, [], f"{lifecycle or status}: a retired note is not promoted"
        project = fm.get("project")
        if not project:
            return {}, [], "already shared (no project)"
        return {"promoted": {"from_project": project, "at": now}}, ["project"], None
    raise UsageError(f"unknown curation action {action!r}; use one of {', '.join(ACTIONS)}")


INBOX_SKIP = (
    "a phone clip in the inbox, where recall never reads: give it instructions the sweep files "
    "(`instructions: file as fact; why ...`), or capture its text as a note and retire the clip"
)


# the options whose text goes into a note's frontmatter as written (`retire --reason`, `confirm --why`)
WRITTEN_OPTIONS = ("reason", "why")


def _check_written(options: dict[str, object]) -> None:
    """The text an option writes into notes passes the content checks a capture's fields pass: a reason is no
    place for a secret, an order to an agent or a terminal escape."""
    from agentmd.rules.prefilter import check_fields

    texts = {k: v for k, v in options.items() if k in WRITTEN_OPTIONS and isinstance(v, str) and v}
    verdict = check_fields(texts) if texts else None
    if verdict is not None and not verdict.ok:
        found = verdict.findings[0]
        raise UsageError(f"nothing was written: the {found.field} you gave was refused ({found.message})")


def plan_edits(
    vault: Path,
    action: str,
    paths: Sequence[str],
    *,
    options: dict[str, object] | None = None,
    now: dt.datetime | None = None,
    inbox: Callable[[str], bool] | None = None,
) -> Plan:
    """The plan for `action` over `paths`: what each note's frontmatter becomes, or why it is skipped. `inbox`
    names the paths of an inbox recall never reads (the phone clipper's, `Contract.is_phone_path`): a note there
    is not confirmed or promoted where it lies, since it would stay out of every recall."""
    options = dict(options or {})
    _check_written(options)
    when = stamp(now or dt.datetime.now(dt.UTC))
    items: list[Planned] = []
    edits: list[Edit] = []
    for path in dict.fromkeys(paths):
        if action in ("confirm", "promote") and inbox is not None and inbox(path):
            items.append(Planned(path, action, skipped=INBOX_SKIP))
            continue
        try:
            data = (vault / path).read_bytes()
        except FileNotFoundError:
            items.append(Planned(path, action, skipped="no such note"))
            continue
        except OSError as exc:
            items.append(Planned(path, action, skipped=f"unreadable ({exc.strerror or exc})"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            items.append(Planned(path, action, skipped="not UTF-8 text; edit it by hand"))
            continue
        fm = read_frontmatter(text)
        if fm is None:
            items.append(Planned(path, action, skipped="frontmatter cannot be read; fix it by hand"))
            continue
        updates, removed, skip = _decide(action, fm, when, options)
        if skip:
            items.append(Planned(path, action, skipped=skip))
            continue
        try:
            new = update_frontmatter(text, updates, removed)
        except YamlRefused as exc:
            items.append(Planned(path, action, skipped=str(exc)))
            continue
        items.append(Planned(path, action, updates, removed))
        edits.append(Edit(path, new, digest(data)))
    summary = f"{action} {len(edits)} note(s)"
    return Plan(action, items, Step(action, summary, tuple(edits)))


def by_source_prefix(vault: Path, candidates: Iterable[str], prefix: str) -> list[str]:
    """The notes among `candidates` whose frontmatter `source` starts with `prefix`."""
    found = []
    for path in candidates:
        try:
            fm = read_frontmatter((vault / path).read_bytes().decode("utf-8", "replace"))
        except OSError:
            continue
        source = (fm or {}).get("source")
        if isinstance(source, str) and source.startswith(prefix):
            found.append(path)
    return found
