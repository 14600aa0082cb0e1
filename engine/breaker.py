"""The mass-deletion breaker: one rule for the reconcile pass (which will not drop the notes from the index)
and the committer (which will not commit their deletion).

More than half of at least 20 notes gone at once looks like an unmounted, emptied or half-synced vault, not
an edit. So does a vault whose count of notes falls below half of the most it held within the hour
(`RecentDeletions`: a sync client deleting a vault in batches, each pass too small to trip the rule alone).
`agentmd reindex --allow-mass-delete` is the way through when it was deliberate.
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
    """The most notes the index held (`peak`) since `since` (wall-clock seconds): a vault whose count falls to
    half of that within DELETION_WINDOW seconds, however many passes it took, is being emptied. Notes moved
    leave the count as it was, so moving them is no deletion."""

    since: float
    peak: int

    @classmethod
    def load(cls, raw: str | None, now: float, notes: int) -> RecentDeletions:
        """The window as recorded (`raw`, the JSON of `dump`), or a fresh one when there is none, it is older
        than DELETION_WINDOW, or the clock went back; `notes` is what the index holds now."""
        try:
            data = json.loads(raw) if raw else None
            kept = cls(float(data["since"]), int(data["peak"])) if data else None
        except (ValueError, TypeError, KeyError):
            kept = None
        if kept is None or not 0 <= now - kept.since <= DELETION_WINDOW:
            return cls(now, notes)
        return cls(kept.since, max(kept.peak, notes))

    def trips(self, after: int) -> bool:
        """Whether the index holding `after` notes would be more than half of the window's peak gone."""
        return is_mass_deletion(self.peak - after, self.peak)

    def dump(self) -> str:
        return json.dumps({"since": self.since, "peak": self.peak})
