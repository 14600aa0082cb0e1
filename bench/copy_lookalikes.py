"""How the conflict-copy check treats real notes: every note of the shared corpora named as a Google Drive,
iCloud or OneDrive conflict copy (`Note (1).md`, `Note 2.md`, `Note-PC.md`) with a note of the original's
name beside it, and the share of lines the two hold in common (engine/synctools.py, `versions_of_one_note`).
Prints JSON: notes read, such pairs, and how many of them the check would leave out of the index."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agentmd.engine.synctools import conflict_copy, distinct_lines, versions_of_one_note

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def main(root: Path = CORPORA) -> dict[str, object]:
    notes, pairs = 0, []
    for vault in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "ir" and p.name != "conv"):
        for folder, _dirs, names in os.walk(vault):
            for name in names:
                if not name.endswith(".md"):
                    continue
                notes += 1
                rel = (Path(folder) / name).relative_to(vault).as_posix()
                found = conflict_copy(rel, lambda r, v=vault: (v / r).is_file())
                if found is None or "onflict" in name:
                    continue
                a, b = (vault / found.original).read_bytes(), (vault / rel).read_bytes()
                left, right = distinct_lines(a), distinct_lines(b)
                share = len(left & right) / max(1, min(len(left), len(right)))
                pairs.append({"vault": vault.name, "note": rel, "beside": found.original, "shared": round(share, 3),
                              "left_out": versions_of_one_note(a, b)})  # fmt: skip
    return {"notes": notes, "pairs": pairs, "left_out": sum(1 for p in pairs if p["left_out"])}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPORA), indent=1))
