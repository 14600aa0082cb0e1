"""Times as agentmd writes them into its files and notes, and reads them back: one format, one reader.

`stamp` writes an instant as ISO 8601 in UTC to the second with a `Z` ("2025-03-01T09:30:00Z"); `parse_utc`
reads such a text back (an offset or a `Z` kept, no offset meaning UTC) and gives None for anything that is
not a time, so a torn state file or a hand-edited field reads as "no time" rather than failing.
Standard library only: the recall hook's path reads times through it.
"""

from __future__ import annotations

import datetime as dt


def stamp(when: dt.datetime) -> str:
    """`when` in UTC, to the second, with a `Z`."""
    return when.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_utc(value: object) -> dt.datetime | None:
    """An aware datetime from an ISO 8601 text (or a datetime, as a note's YAML may give one); a time without
    an offset is UTC. None for an empty or unreadable text and for any other value."""
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str) and value:
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def duration(seconds: float, *, least: int = 0) -> str:
    """`42 s`, `3 min`, `1.5 h` (never fewer seconds than `least`)."""
    if seconds < 90:
        return f"{max(least, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
