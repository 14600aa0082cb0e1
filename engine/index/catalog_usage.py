"""The catalog's `usage` table: how often the recall hook injected each note and how often it was recalled on
demand (engine/index/usage.py), and the reads that weigh notes by it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from agentmd.engine.index.catalog_base import CatalogBase
from agentmd.engine.index.catalog_schema import USAGE_KINDS, USAGE_SINCE_KEY


@dataclass(frozen=True, slots=True)
class NoteUsage:
    """One note's usage counts, beside the note's title and captured date."""

    path: str
    title: str
    captured: str
    injections: int
    recalls: int
    last_injected: str | None
    last_recalled: str | None

    @property
    def last_used(self) -> str | None:
        return max(filter(None, (self.last_injected, self.last_recalled)), default=None)

    def to_dict(self) -> dict[str, object]:
        return asdict(self) | {"last_used": self.last_used}


_USAGE_UPSERT = {
    "injection": (
        "INSERT INTO usage (path, injections, recalls, last_injected) VALUES (?, 1, 0, ?) "
        "ON CONFLICT(path) DO UPDATE SET injections = injections + 1, last_injected = excluded.last_injected"
    ),
    "recall": (
        "INSERT INTO usage (path, injections, recalls, last_recalled) VALUES (?, 0, 1, ?) "
        "ON CONFLICT(path) DO UPDATE SET recalls = recalls + 1, last_recalled = excluded.last_recalled"
    ),
}


class CatalogUsage(CatalogBase):
    """The usage counters and what is read from them."""

    # -- usage counters ----------------------------------------------------------------------------

    def count_usage(self, paths: Iterable[str], kind: str, stamp: str) -> None:
        """Add one `kind` use ("injection" or "recall", stamped `stamp`) to each of these note paths, and
        note when this catalog started counting, in one transaction. The paths are counted as given (the
        caller folds duplicates); a path without a note row is counted too, and the orphan sweep drops it."""
        if kind not in _USAGE_UPSERT:
            raise ValueError(f"usage kind {kind!r} is not one of {USAGE_KINDS}")
        with self.transaction() as db:
            db.executemany(_USAGE_UPSERT[kind], [(p, stamp) for p in paths])
            db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (USAGE_SINCE_KEY, stamp))

    def usage_counts(self, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
        """path -> (injections, recalls) for the given paths that were ever counted."""
        out: dict[str, tuple[int, int]] = {}
        wanted = list(paths)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            q = f"SELECT path, injections, recalls FROM usage WHERE path IN ({marks})"
            for p, inj, rec in self._q(q, chunk):
                out[p] = (int(inj), int(rec))
        return out

    def usage_since(self) -> str | None:
        """When this catalog started counting (the first use it recorded), or None when it never counted."""
        return self.get_meta(USAGE_SINCE_KEY)

    def lifecycle_rows(self) -> list[tuple[str, str | None, str | None, str, str | None, str | None]]:
        """(path, lifecycle, type, flags, last injected, last recalled) of every note outside the walls, by
        path: what the lifecycle policy (engine/curate/lifecycle.py) weighs."""
        return list(
            self._q(
                "SELECT n.path, n.lifecycle, n.type, n.flags, u.last_injected, u.last_recalled FROM notes n"
                " LEFT JOIN usage u ON u.path = n.path WHERE n.wall IS NULL ORDER BY n.path"
            )
        )

    def note_usage(self) -> list[NoteUsage]:
        """Usage of every note outside the walls (archived, superseded, staged) that is not a self-probe,
        counted or not, by captured date and path: what the usage report reviews."""
        rows = self._q(
            "SELECT n.path, n.title, n.captured, coalesce(u.injections, 0), coalesce(u.recalls, 0),"
            " u.last_injected, u.last_recalled FROM notes n LEFT JOIN usage u ON u.path = n.path"
            " WHERE n.wall IS NULL AND ',' || n.flags || ',' NOT LIKE '%,probe,%' ORDER BY n.captured, n.path"
        )
        return [NoteUsage(p, t, c, int(i), int(r), li, lr) for p, t, c, i, r, li, lr in rows]
