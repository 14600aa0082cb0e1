"""The index guard (engine/index/integrity.py) against a merge: a segment file Tantivy removed after a newer
meta.json stopped naming it is not damage; one gone under the same meta is."""

from __future__ import annotations

import os
from pathlib import Path

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.fulltext.schema import IndexDoc
from agentmd.engine.index.integrity import IndexGuard


def test_a_segment_a_merge_took_away_is_not_damage_but_one_deleted_under_the_same_meta_is(tmp_path: Path) -> None:
    """Tantivy deletes a merged segment's files only after a newer meta.json stops naming them, so a file that
    vanished between the guard's look and its read, while the meta moved, is a merge (two captures at once showed
    it: the index was set aside and rebuilt for nothing); one gone under the same meta is damage."""

    def built(folder: Path) -> list[Path]:
        index = SearchIndex(folder)
        index.apply(
            IndexDoc(path=f"n{i}.md", title=f"note {i}", meta="", body=f"otters {i}", text="t", wall=None, day=20260101)
            for i in range(10)
        )
        index.close()
        return sorted(p for p in folder.iterdir() if p.suffix == ".term")

    merged = tmp_path / "merged"
    term = built(merged)[0]
    guard = IndexGuard(merged)
    assert guard.refresh() is None
    term.unlink()
    meta = merged / "meta.json"
    later = meta.stat().st_mtime_ns + 5_000_000_000
    os.utime(meta, ns=(later, later))  # what a merge's commit does to it
    assert guard.verify_all() is None and guard.damage is None

    deleted = tmp_path / "deleted"
    term = built(deleted)[0]
    guard = IndexGuard(deleted)
    assert guard.refresh() is None
    term.unlink()
    assert term.name in (guard.verify_all() or "") and guard.damage is not None
