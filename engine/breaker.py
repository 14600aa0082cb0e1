"""The mass-deletion breaker: one rule for the reconcile pass (which will not drop the notes from the index)
and the committer (which will not commit their deletion).

More than half of at least 20 notes gone at once looks like an unmounted, emptied or half-synced vault, not
an edit. `agentmd reindex --allow-mass-delete` is the way through when it was deliberate.
"""

from __future__ import annotations

from agentmd.engine.synctools import is_sync_temp

MASS_DELETE_MIN_NOTES = 20  # below this many notes, any deletion is allowed
MASS_DELETE_SHARE = 0.5


def is_mass_deletion(removed: int, notes: int) -> bool:
    """True when removing `removed` of `notes` notes at once trips the breaker."""
    return notes >= MASS_DELETE_MIN_NOTES and removed > MASS_DELETE_SHARE * notes


def is_note(path: str) -> bool:
    """A vault-relative path the index holds as a note: `*.md`, with no dot file, dot folder or empty part in it
    (so never `..`), and not a sync tool's temp file (`~$Note.md`, see engine/synctools.py)."""
    return (
        path.lower().endswith(".md")
        and not any(not part or part.startswith(".") for part in path.split("/"))
        and not is_sync_temp(path)
    )
