"""Compose, never rewrite: a proposal becomes frontmatter edits of the note as it stands; its body stays byte
for byte.

What the pass writes (`WRITTEN`): the filing (`status`, `filing_confidence`), its own record (`enriched`: when,
under which prompt, by which model, at which confidence) and `importance_proposed`. What it fills only where the
note has nothing (`FILLED`): `title`, `type`, `summary`: a title, type or summary someone already gave is theirs.
What it adds to (`MERGED`): `tags`, `aliases`, `related`, the note's own entries first. What it writes only to
sink a note (`SUNK`, below). Every other field of the note is carried untouched by the round-trip writer
(`importance` stays the note's own, and `why` is never written: no pass was in the room).

The verdict of a card: at or above the floor (the contract's `thresholds.low_confidence`) the note is filed
`active`; below it, it stays unfiled (a phone clip without a status becomes `unfiled`), with the number as its
`filing_confidence`, and waits in the queue as before. A second verdict below the floor (the note already
carries an `enriched` stamp and is still unfiled) sinks it: `lifecycle: dormant` and `lifecycle_since` (the
day), after which the run asks nothing more of it until its body changes or the owner acts; filed later, a
note the pass sank comes back to the contract's default lifecycle. A note never sinks
when its lifecycle is someone's (anything but the contract's default, `pinned` included, or a lifecycle the
owner set back after an earlier sink), nor when it is a rule (`preference`, `convention`): those stay unfiled
and listed. Idea cards and project records (engine/enrich/kinds.py) get no verdict at all: their filing, title,
type and lifecycle are never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmd.engine.enrich.kinds import CARD, IDEA, RECORD
from agentmd.engine.enrich.prompt import Proposal
from agentmd.engine.errors import AgentmdError
from agentmd.vault_schema import split_frontmatter, update_frontmatter

WRITTEN = ("status", "filing_confidence", "enriched", "importance_proposed")
FILLED = ("title", "type", "summary")
MERGED = ("tags", "aliases", "related")
SUNK = ("lifecycle", "lifecycle_since")
DORMANT = "dormant"
NEVER_SINK_TYPES = ("preference", "convention")  # the rule types: a rule stays listed rather than sink
VERDICTS = ("filed", "below-floor", DORMANT, IDEA, RECORD)


class BodyChanged(AgentmdError, RuntimeError):
    """The composition would change the note's body: a bug, refused before anything is written."""


def body_of(text: str) -> str:
    return split_frontmatter(text).body


def listed(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float) and str(v).strip()]
    return []


def _link(target: str) -> str:
    return target if target.startswith("[[") else f"[[{target}]]"


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def updates_for(
    fm: Mapping[str, Any],
    proposal: Proposal,
    *,
    floor: float,
    types: Mapping[str, str],
    at: str,
    model: str,
    prompt_version: str,
    kind: str = CARD,
    default_lifecycle: str = "active",
    may_sink: bool = True,
    revive: bool = False,
    deprecations: Mapping[str, str] | None = None,
) -> tuple[dict[str, object], str]:
    """(frontmatter updates, verdict) for one accepted proposal; the verdict is one of `VERDICTS`.

    `may_sink` is False when the owner revived the note after an earlier sink: their hand stands. `revive` is
    True when the note is dormant by this pass's own sink: filed now, it comes back to the default lifecycle."""
    filed = proposal.confidence >= floor
    updates: dict[str, object] = {}
    keys = ("summary",) if kind != CARD else ("title", "summary")
    for key in keys:
        if _empty(fm.get(key)):
            updates[key] = getattr(proposal, key)
    current_type = fm.get("type")
    if kind == CARD and isinstance(current_type, str) and current_type in (deprecations or {}):
        updates["type"] = (deprecations or {})[current_type]  # a retired type reads as its replacement
    elif kind == CARD and (_empty(current_type) or (isinstance(current_type, str) and current_type not in types)):
        updates["type"] = proposal.type
    for key, new in (("tags", proposal.tags), ("aliases", proposal.aliases)):
        have = listed(fm.get(key))
        merged = list(dict.fromkeys([*have, *new]))
        if merged != have:
            updates[key] = merged
    have_related = listed(fm.get("related"))
    seen = {r.strip("[]").split("|")[0] for r in have_related}
    extra = [_link(r) for r in proposal.related if r not in seen]
    if extra:
        updates["related"] = [*have_related, *extra]
    verdict = kind
    if kind == CARD:
        verdict = _file(fm, updates, proposal, filed, default_lifecycle=default_lifecycle, may_sink=may_sink, at=at)
        if verdict == "filed" and revive:
            updates["lifecycle"] = default_lifecycle
            updates["lifecycle_since"] = at[:10]
    updates["importance_proposed"] = proposal.importance
    updates["enriched"] = {
        "at": at,
        "prompt": prompt_version,
        "model": model,
        "confidence": round(proposal.confidence, 2),
    }
    return updates, verdict


def _file(
    fm: Mapping[str, Any],
    updates: dict[str, object],
    proposal: Proposal,
    filed: bool,
    *,
    default_lifecycle: str,
    may_sink: bool,
    at: str,
) -> str:
    """The filing of a card (status, filing_confidence, and the sink), written into `updates`."""
    status = str(fm.get("status") or "").strip().lower()
    updates["filing_confidence"] = round(proposal.confidence, 2)
    if filed:
        if status != "active":
            updates["status"] = "active"
        return "filed"
    if not status:
        updates["status"] = "unfiled"
    lifecycle = str(fm.get("lifecycle") or "").strip().lower()
    note_type = fm.get("type") if isinstance(fm.get("type"), str) and fm.get("type") else proposal.type
    judged_before = isinstance(fm.get("enriched"), Mapping)
    if not judged_before or status not in ("", "unfiled") or note_type in NEVER_SINK_TYPES:
        return "below-floor"
    if lifecycle == DORMANT:
        return DORMANT  # already dormant: nothing more to write
    if lifecycle not in ("", default_lifecycle.lower()) or not may_sink:
        return "below-floor"  # someone's lifecycle (pinned, archived, a revival): never overridden
    updates["lifecycle"] = DORMANT
    updates["lifecycle_since"] = at[:10]
    return DORMANT


def compose(text: str, updates: Mapping[str, Any]) -> str:
    """The note with `updates` applied to its frontmatter; raises BodyChanged if a byte of the body moved."""
    new = update_frontmatter(text, updates)
    if body_of(new).encode("utf-8") != body_of(text).encode("utf-8"):
        raise BodyChanged("the composition would change the note's body; nothing was written")
    return new
