"""Compose, never rewrite: a proposal becomes frontmatter edits of the note as it stands; its body stays byte
for byte.

What the pass writes (`WRITTEN`): the filing (`status`, `filing_confidence`), its own record (`enriched`: when,
under which prompt, by which model, at which confidence) and `importance_proposed`. What it fills only where the
note has nothing (`FILLED`): `title`, `type`, `summary`: a title, type or summary someone already gave is theirs.
What it adds to (`MERGED`): `tags`, `aliases`, `related`, the note's own entries first. Every other field of the
note is carried untouched by the round-trip writer (`lifecycle` included: the owner's hand on a lifecycle is
never overridden, and `why` is never written: no pass was in the room). `importance` stays the note's own.

The verdict: at or above the floor (the contract's `thresholds.low_confidence`) the note is filed `active`;
below it, it stays unfiled (a phone clip without a status becomes `unfiled`), with the number as its
`filing_confidence`, and waits in the queue as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentmd.engine.enrich.prompt import Proposal
from agentmd.vault_schema import split_frontmatter, update_frontmatter

WRITTEN = ("status", "filing_confidence", "enriched", "importance_proposed")
FILLED = ("title", "type", "summary")
MERGED = ("tags", "aliases", "related")


class BodyChanged(RuntimeError):
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
) -> tuple[dict[str, Any], bool]:
    """(frontmatter updates, whether the note is filed) for one accepted proposal."""
    filed = proposal.confidence >= floor
    updates: dict[str, Any] = {}
    for key in ("title", "summary"):
        if _empty(fm.get(key)):
            updates[key] = getattr(proposal, key)
    current_type = fm.get("type")
    if _empty(current_type) or (isinstance(current_type, str) and current_type not in types):
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
    status = str(fm.get("status") or "").strip().lower()
    if filed:
        if status != "active":
            updates["status"] = "active"
    elif not status:
        updates["status"] = "unfiled"
    updates["filing_confidence"] = round(proposal.confidence, 2)
    updates["importance_proposed"] = proposal.importance
    updates["enriched"] = {
        "at": at,
        "prompt": prompt_version,
        "model": model,
        "confidence": round(proposal.confidence, 2),
    }
    return updates, filed


def compose(text: str, updates: Mapping[str, Any]) -> str:
    """The note with `updates` applied to its frontmatter; raises BodyChanged if a byte of the body moved."""
    new = update_frontmatter(text, updates)
    if body_of(new).encode("utf-8") != body_of(text).encode("utf-8"):
        raise BodyChanged("the composition would change the note's body; nothing was written")
    return new
