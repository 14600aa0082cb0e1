"""The two hashes of a contract, and which of its keys an enrichment judgment reads.

`rules_hash` is taken over the settings in effect (a vault file's merged over the packaged default), as
parsed: rewording the prose around the `yaml` blocks, reordering keys or re-indenting them leaves it as it
was, while any change to a value changes it.

`judgment_hash` is taken over only what judging a note reads of the contract: the type names (the
vocabulary a judgment picks from) and `deprecations` (which retired names stand for which type). The
enrichment ledger keys every judgment to it (engine/enrich/ledger.py), so an edit anywhere else in the
contract, a type's folder included, leaves every judgment standing. Every key of the contract is placed on
one side or the other below; tests/rules/test_contract_hashing.py fails when a key is on neither.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

HASH_LENGTH: Final = 12

JUDGMENT_KEYS: Final[Mapping[str, str]] = {
    "types": "the type names a judgment may choose from (their folders are routing, outside the hash)",
    "deprecations": "the retired type names a judgment reads as their replacements",
}
OUTSIDE_JUDGMENT: Final[Mapping[str, str]] = {
    "lifecycle": "lifecycle values: stamped and moved by filing and the lifecycle policy, never chosen by a judgment",
    "default_lifecycle": "the lifecycle stamped on a filed note; applied when the note is written",
    "sources": "trust tiers of capture sources: stamped at capture",
    "facets": "overview pages' dimensions",
    "record_kinds": "which notes are records: decides what is queued, not what a judgment says",
    "thresholds": "the confidence floor and budgets: a changed floor applies at each note's next judgment",
    "spaces": "where the vault's areas are",
    "shard": "where untyped captures go",
    "phone_paths": "the phone clipper's folders",
    "authority": "the door's levels",
    "default_authority": "the door's level for a space without one",
    "dampened_spaces": "search ranking",
    "recall_exempt_areas": "recall and what stays on this machine",
    "class_weights": "search ranking",
    "link_convention": "how links are read",
    "sync_tool_patterns": "file-sync tools' files",
    "capture_names": "the file names of new captures",
}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def rules_hash(settings: Mapping[str, Any]) -> str:
    """The hash of a contract's parsed settings: key order and the Markdown around them do not count."""
    canonical = json.dumps(settings, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return _digest(canonical)


def judgment_hash(type_names: Mapping[str, Any] | list[str], deprecations: Mapping[str, str]) -> str:
    """The hash of what a judgment reads: the sorted type names, then the retired names and their replacements.

    With no deprecations it is the hash of the type names alone, one a line, which is what the enrichment
    ledger keyed judgments by before deprecations existed: a ledger written then stays valid."""
    text = "\n".join(sorted(type_names))
    if deprecations:
        text += "\n\ndeprecations:\n" + "\n".join(f"{old} -> {new}" for old, new in sorted(deprecations.items()))
    return _digest(text)


def judgment_view(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a contract's settings the judgment hash covers: the type names and the deprecations."""
    types = settings.get("types")
    deprecations = settings.get("deprecations")
    return {
        "types": sorted(types) if isinstance(types, Mapping) else [],
        "deprecations": dict(deprecations) if isinstance(deprecations, Mapping) else {},
    }


def judgment_hash_of(settings: Mapping[str, Any]) -> str:
    view = judgment_view(settings)
    return judgment_hash(view["types"], view["deprecations"])
