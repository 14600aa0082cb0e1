"""The record of the index files verified, kept beside the index folder for the next open: written when the
index closes, trusted only for files whose size, mtime and inode are the ones verified, so damage done while
nothing had the index open is still found when it next opens."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.fulltext.core import VERIFIED_SUFFIX
from agentmd.engine.index.fulltext.schema import IndexDoc
from agentmd.engine.index.integrity import IndexGuard


def built(folder: Path, n: int = 10) -> None:
    index = SearchIndex(folder)
    index.apply(
        IndexDoc(path=f"n{i}.md", title=f"note {i}", meta="", body=f"otters {i}", text="t", wall=None, day=20260101)
        for i in range(n)
    )
    index.close()


def segment_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in (".store", ".term", ".idx"))


def test_closing_the_index_records_its_verified_files_and_a_sound_index_reopens_from_it(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    built(folder)
    record = tmp_path / f"index{VERIFIED_SUFFIX}"
    kept = json.loads(record.read_text(encoding="utf-8"))
    assert kept["folder"] == str(folder)
    assert {p.name for p in segment_files(folder)} <= set(kept["files"])
    again = SearchIndex(folder)
    assert again.set_aside is None and again.doc_count() == 10
    assert again.guard.check() is None
    again.close()


def test_a_file_garbled_while_the_index_was_closed_is_found_at_the_next_open(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    built(folder)
    victim = segment_files(folder)[0]
    with open(victim, "r+b") as f:  # in place, the same size: only its mtime says it changed
        f.seek(3)
        byte = f.read(1)
        f.seek(3)
        f.write(bytes([byte[0] ^ 0xFF]))
    reopened = SearchIndex(folder)
    assert reopened.set_aside is not None  # checksummed again, failed, set aside and started afresh
    assert reopened.doc_count() == 0
    reopened.close()


def test_a_record_of_another_folder_or_a_torn_one_is_not_trusted(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    built(folder)
    record = tmp_path / f"index{VERIFIED_SUFFIX}"
    kept = json.loads(record.read_text(encoding="utf-8"))
    victim = segment_files(folder)[0]
    before = victim.stat()
    with open(victim, "r+b") as f:  # garbled, then its mtime put back: the record's key matches again
        f.seek(3)
        byte = f.read(1)
        f.seek(3)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    elsewhere = tmp_path / "other.json"
    elsewhere.write_text(json.dumps({**kept, "folder": str(tmp_path / "another")}), encoding="utf-8")
    assert IndexGuard(folder, record=elsewhere).refresh() is not None  # read again, and the damage found
    elsewhere.write_text('{"folder": "torn', encoding="utf-8")
    assert IndexGuard(folder, record=elsewhere).refresh() is not None
    assert IndexGuard(folder).refresh() is not None  # without a record every file is read
