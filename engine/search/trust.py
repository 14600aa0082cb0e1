"""Which notes count as confirmed knowledge, read from the facts the index stores with each note.

A note is *confirmed* unless it is unfiled (`status: unfiled`: captured, not yet filed by anyone),
untrusted (`trust: untrusted`: a web clip, a phone note, an unlisted source), unreadable (its frontmatter
does not parse, so its status and trust are unknown) or a self-probe note
(`probe: self-probe`, written by the daemon to test itself); a generated page (`generated: agentmd maps`, a
map of content, engine/curate/maps.py) is not knowledge of its own either. Search still returns unfiled and
untrusted notes, labelled (`trust`, `status` in each result) and lowered by the contract's class
weights; it leaves self-probe notes out unless the request asks for them (`include_probe`). The
prompt hook never injects any of the three (engine/search/recall.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNTRUSTED = "untrusted"
UNFILED = "unfiled"
CONFLICT = "conflict"  # vault_schema's CONFLICT_STATUS: a version a sync or an undo kept beside its note


def is_untrusted(facts: Mapping[str, Any]) -> bool:
    return str(facts.get("trust") or "").lower() == UNTRUSTED


def is_unfiled(facts: Mapping[str, Any]) -> bool:
    return str(facts.get("status") or "").lower() == UNFILED


def is_probe(facts: Mapping[str, Any]) -> bool:
    return bool(facts.get("probe"))


def labels(facts: Mapping[str, Any]) -> dict[str, object]:
    """The labels every search result carries: the note's `trust` tier and `status` (None when unset)."""
    return {"trust": facts.get("trust"), "status": facts.get("status")}


def unconfirmed_reason(
    *, status: str | None, untrusted: bool, probe: bool, generated: bool = False, unreadable: bool = False
) -> str | None:
    """Why a note must not be injected into a prompt, or None when it may be."""
    if probe:
        return "self-probe note"
    if unreadable:  # its status and trust cannot be read, so nothing says anyone confirmed it
        return "its frontmatter cannot be read (fix the YAML; `agentmd status` names the line)"
    if generated:
        return "a generated page (a map of content, a morning note), not knowledge of its own"
    if (status or "").lower() == UNFILED:
        return "unfiled note"
    if (status or "").lower() == CONFLICT:
        return "a conflict copy waiting for a person to end it (`agentmd resolve`), not yet anyone's knowledge"
    if untrusted:
        return "untrusted note"
    return None
