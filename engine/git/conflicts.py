"""Conflict siblings: a version of a note that could not be merged, kept beside the note for a person to judge.

Two writers leave them. A sync round (`agentmd.engine.git.sync`) keeps the other machine's version of a note
changed on both machines; an undo (`agentmd.engine.git.undo`) keeps the version the undo would have written
when a later edit touched the same lines. Either way the note keeps its current text at its path, and the
other version becomes `<name>.conflict-<who>-<date>.md` beside it (`sibling_name`: `<who>` is the other
machine's name, or `undo`), marked in its frontmatter with `status: conflict` and `conflict_of: "[[<name>]]"`
(`conflict_text`), so the review queue lists it and the index never mistakes it for the note. No conflict
marker (`<<<<<<<`) ever reaches a note.

The one list of the conflicts left is the `conflicts` list of `<state>/sync-state.json` (`{"path", "sibling"}`
entries, the last 50): `agentmd conflicts` lists the siblings still open (`open_conflicts`: still there and
still marked) and `agentmd resolve` ends one. A sibling a person kept as a note of their own (the mark
removed) or deleted is resolved.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path

CONFLICT_STATUS = "conflict"
STATE_FILE = "sync-state.json"  # the sync state, which holds the one list of conflicts
KEPT_CONFLICTS = 50  # entries the list keeps


def sibling_name(path: str, who: str, now: dt.datetime) -> str:
    """`<name>.conflict-<who>-<date>.md` beside the note `path`; `who` is reduced to letters, digits and dashes."""
    other = re.sub(r"[^A-Za-z0-9-]+", "-", who.strip()).strip("-")[:40]
    stem = path[: -len(".md")] if path.lower().endswith(".md") else path
    return f"{stem}.conflict-{other or 'remote'}-{now.strftime('%Y%m%d-%H%M%S')}.md"


def conflict_text(data: bytes, path: str) -> bytes:
    """The text of a version of the note `path`, marked as its conflict sibling: `status: conflict` and
    `conflict_of` in its frontmatter (added when it has none, replacing those two keys when it has them)."""
    text = data.decode("utf-8", "replace")
    name = path.rsplit("/", 1)[-1]
    name = name[: -len(".md")] if name.lower().endswith(".md") else name
    stamp = f'status: {CONFLICT_STATUS}\nconflict_of: "[[{name}]]"\n'
    if text.startswith("---\n") and "\n---" in text[4:]:
        end = text.index("\n---", 4)
        head = re.sub(r"(?m)^(status|conflict_of):.*\n?", "", text[4 : end + 1])
        text = "---\n" + head + stamp + text[end + 1 :]
    else:
        text = "---\n" + stamp + "---\n" + text
    return text.encode("utf-8")


def still_conflict(path: Path) -> bool:
    """Whether a sibling is still there and still marked `status: conflict` (a person who kept it as a note of
    its own, or deleted it, has resolved it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return re.search(rf"(?m)^status:\s*{CONFLICT_STATUS}\s*$", head) is not None


def record_conflicts(state_dir: Path, entries: Iterable[dict[str, str]]) -> None:
    """Add `{"path", "sibling"}` entries to the list (the sync state's other fields untouched)."""
    from agentmd.engine.fsutil import read_json, write_json

    new = [dict(e) for e in entries if e.get("sibling")]
    if not new:
        return
    state = read_json(state_dir / STATE_FILE) or {}
    state["conflicts"] = [*state.get("conflicts", []), *new][-KEPT_CONFLICTS:]
    write_json(state_dir / STATE_FILE, state)


def open_conflicts(vault: Path, state_dir: Path) -> list[str]:
    """The siblings of the list still open, in the order they were left (each once)."""
    from agentmd.engine.fsutil import read_json

    state = read_json(state_dir / STATE_FILE) or {}
    siblings = [str(c["sibling"]) for c in state.get("conflicts", []) if isinstance(c, dict) and c.get("sibling")]
    return [s for s in dict.fromkeys(siblings) if still_conflict(vault / s)]
