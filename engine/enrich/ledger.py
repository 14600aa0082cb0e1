"""The enrichment ledger: which note bodies were judged under which prompt and vocabulary, and the verdict.

It lives in the state folder (`enrich/ledger.json`), away from the index, so a reindex cannot lose it. A row is
keyed by the note's body (the bytes after its frontmatter, which the pass never changes), the prompt version and
the contract's judgment hash (its type names and deprecations, rules/contract/hashing.py; an edit to any other
setting leaves every row valid): a note whose three are unchanged is skipped for free, however its frontmatter
moved meanwhile (the pass's own write included), and a note that was moved or renamed is found by its body.

Verdicts: `filed` (at or above the floor, filed active), `below-floor` (written, left in the queue),
`dormant` (below the floor a second time: the note sank to `lifecycle: dormant` and is asked nothing more
until its body changes or the owner acts), `idea` and `record` (an idea card or a project record judged: they
are never filed, see engine/enrich/kinds.py), `refused` (a post-gate or the faithfulness judge refused the
answer: nothing was written, and the same body is not paid for again until it changes or the gates' own
question does, `gates` naming the version it was refused under). A call that failed leaves no row, so the
note is asked again next run; a skip never writes a row, so it can never replace a finished judgment.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LEDGER_FILE = "ledger.json"
VERDICTS = ("filed", "below-floor", "dormant", "idea", "record", "refused")


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def judgment_key(body: str, prompt_version: str, vocabulary: str) -> str:
    return f"{body}:{prompt_version}:{vocabulary}"


@dataclass(frozen=True)
class Row:
    key: str
    path: str
    verdict: str
    at: str
    reason: str = ""
    gates: str = ""

    @property
    def body(self) -> str:
        """The body hash the row was judged on (the first part of its key)."""
        return self.key.split(":", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        out = {"path": self.path, "verdict": self.verdict, "at": self.at, "reason": self.reason}
        if self.gates:
            out["gates"] = self.gates
        return out


def read_rows(path: Path, table: str, owed: str) -> tuple[dict[str, Any], str | None]:
    """The rows of a judgment ledger's `table` (key -> row) and the problem reading it, if any: a ledger that
    cannot be read is empty, and the problem says that every `owed` is owed again."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:
        return {}, f"the ledger {path} could not be read ({exc}); every {owed} is owed again"
    rows = data.get(table) if isinstance(data, dict) else None
    return (rows if isinstance(rows, dict) else {}), None


class Ledger:
    def __init__(self, folder: Path) -> None:
        self.path = folder / LEDGER_FILE
        self.rows: dict[str, Row] = {}
        found, self.problem = read_rows(self.path, "rows", "note")
        for key, row in found.items():
            with contextlib.suppress(KeyError, TypeError, AttributeError):
                if row["verdict"] in VERDICTS:
                    self.rows[key] = Row(
                        key,
                        str(row["path"]),
                        row["verdict"],
                        str(row["at"]),
                        str(row.get("reason", "")),
                        str(row.get("gates", "")),
                    )

    def get(self, key: str) -> Row | None:
        return self.rows.get(key)

    def latest_for(self, path: str) -> Row | None:
        """The most recent row recorded under `path` (a body judged there before, maybe since changed)."""
        rows = [r for r in self.rows.values() if r.path == path]
        return max(rows, key=lambda r: r.at) if rows else None

    def latest_with_body(self, body: str, verdict: str) -> Row | None:
        """The most recent row of `verdict` judged on this body hash, under any prompt or vocabulary."""
        rows = [r for r in self.rows.values() if r.body == body and r.verdict == verdict]
        return max(rows, key=lambda r: r.at) if rows else None

    def record(self, key: str, path: str, verdict: str, at: str, reason: str = "", gates: str = "") -> None:
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        self.rows[key] = Row(key, path, verdict, at, reason, gates)

    def follow(self, key: str, path: str) -> bool:
        """A judged body now sits at `path` (the note moved): the row follows it. True when it moved."""
        row = self.rows.get(key)
        if row is None or row.path == path:
            return False
        self.rows[key] = Row(key, path, row.verdict, row.at, row.reason, row.gates)
        return True

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        data = {"rows": {k: r.to_dict() for k, r in sorted(self.rows.items())}}
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
