"""The mass-deletion breaker: one rule for the reconcile pass (which will not drop the notes from the index)
and the committer (which will not commit their deletion).

More than half of at least 20 notes gone at once looks like an unmounted, emptied or half-synced vault, not
an edit. So does more than half gone a few at a time within an hour (`RecentDeletions`: a sync client deleting
a vault in batches, each pass too small to trip the rule alone). `agentmd reindex --allow-mass-delete` is the
way through when it was deliberate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentmd.engine.synctools import is_sync_temp

MASS_DELETE_MIN_NOTES = 20  # below this many notes, any deletion is allowed
MASS_DELETE_SHARE = 0.5
DELETION_WINDOW = 3600.0  # seconds over which the deletions of several passes count together


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


@dataclass(frozen=True)
class RecentDeletions:
    """The notes removed from the index since `since` (wall-clock seconds), against the most notes the index
    held meanwhile (`peak`): the passes of the last DELETION_WINDOW seconds counted together."""

    since: float
    peak: int
    removed: int

    @classmethod
    def load(cls, raw: str | None, now: float, notes: int) -> RecentDeletions:
        """The window as recorded (`raw`, the JSON of `dump`), or a fresh one when there is none, it is older
        than DELETION_WINDOW, or the clock went back; `notes` is what the index holds now."""
        try:
            data = json.loads(raw) if raw else None
            kept = cls(float(data["since"]), int(data["peak"]), int(data["removed"])) if data else None
        except (ValueError, TypeError, KeyError):
            kept = None
        if kept is None or not 0 <= now - kept.since <= DELETION_WINDOW:
            return cls(now, notes, 0)
        return cls(kept.since, max(kept.peak, notes), kept.removed)

    def trips(self, removing: int) -> bool:
        """Whether removing `removing` more notes makes more than half of the window's peak gone."""
        return is_mass_deletion(self.removed + removing, self.peak)

    def dump(self, removing: int) -> str:
        """The window's record once `removing` more notes are removed."""
        return json.dumps({"since": self.since, "peak": self.peak, "removed": self.removed + removing})
