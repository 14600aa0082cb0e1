"""A full build: what it skips to run near the floor (replacing documents in an empty index, reading names
the long way) leaves the same index as a pass that replaces every document."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import string
import subprocess
import sys
import time
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import CORPORA, Vault
from git_helpers import make_repo

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.catalog_schema import PER_DOC_TABLES, NoteRow, StatKey
from agentmd.engine.index.fulltext import SearchIndex, name_key
from agentmd.engine.index.fulltext.schema import IndexDoc
from agentmd.engine.index.notes import PreparedStream, prepared_in_order
from agentmd.engine.index.reconcile import reconcile, walk_vault
from agentmd.engine.index.store import Store
from agentmd.vault_schema import sections
from agentmd.vault_schema.markdown import headings


def _name_key_by_characters(text: str) -> str:
    """name_key read character by character (the reading for any text, accents and all)."""
    text = text.strip()
    if text.lower().endswith(".md"):
        text = text[:-3]
    folded = unicodedata.normalize("NFKD", text.casefold().translate(dict.fromkeys(map(ord, "'\u2019`\u00b4"))))
    bare = "".join(ch if ch.isalnum() else " " for ch in folded if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", " ".join(bare.split()))


def test_ascii_names_are_keyed_as_by_characters() -> None:
    samples = [
        string.printable,
        "dendron.topic.sidebar.graph-panel.md",
        "Hume's Beliefs",
        "`code`_name__x",
        "  README.MD  ",
        "a.md.md",
        "tab\tand\nnew line\x0b\x0c\r",
        "C++ / C# & F#: 100% (v2.0) [draft] {x} <y> ~z^ |w| \\q @me $5 *bold* =eq ?!;,",
        "...",
        "",
    ]
    samples += [chr(i) * 3 + " x" + chr(i) for i in range(128)]
    for text in samples:
        assert name_key(text) == _name_key_by_characters(text), repr(text)


def _doc(path: str, body: str) -> IndexDoc:
    return IndexDoc(path, path, "", body, body, None, 20250101, {"title": path}, names=(("title", path),))


def _count(index: SearchIndex, word: str) -> int:
    return len(index.search([word], limit=10))


def test_a_path_twice_in_one_build_into_an_empty_index_keeps_the_last(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    index.apply([_doc("a.md", "apples"), _doc("b.md", "bananas"), _doc("a.md", "cherries")])
    assert index.doc_count() == 2
    assert _count(index, "apples") == 0 and _count(index, "cherries") == 1
    index.close()


def test_later_batches_of_a_build_add_and_ordinary_writes_replace(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    index.apply([_doc(f"n{i}.md", "first") for i in range(5)])
    index.apply([_doc(f"m{i}.md", "second") for i in range(5)], new=True)
    assert index.doc_count() == 10
    index.apply([_doc("n0.md", "edited"), _doc("m0.md", "edited")])  # the index is not empty: replaced
    assert index.doc_count() == 10
    assert _count(index, "edited") == 2 and _count(index, "first") == 4 and _count(index, "second") == 4
    index.close()


def test_rebuilds_from_scratch_leave_one_document_a_note(vault: Vault, cache_dir: Path) -> None:
    for i in range(30):
        vault.note(f"notes/n{i}.md", f"# Heading {i}\nshared orchard words {i}\n", title=f"Note {i}")
    for _ in range(2):
        with Store(cache_dir, from_scratch=True) as store:
            report = reconcile(vault.root, store)
            assert report.added == 30
            assert store.index.doc_count() == 30 == store.catalog.count()
            assert len(store.index.search(["orchard"], limit=50)) == 30
    vault.note("notes/n3.md", "# Heading 3\nedited pear words\n", title="Note 3")
    with Store(cache_dir) as store:
        report = reconcile(vault.root, store)
        assert report.updated == 1
        assert store.index.doc_count() == 30
        assert len(store.index.search(["orchard"], limit=50)) == 29


def test_headings_are_the_headings_sections_split_at() -> None:
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(CORPORA.rglob("*.md"))]
    texts += [
        "# A\n## B ##\n   ### C\n    # not (indented code)\n#no space\n#\n####### seven\n# trailing #  \n",
        "```\n# in code\n```\n# after\n~~~~\n# tilde code\n~~~~\n## last\r\n",
        "#### \t spaced \t\n\n# x\r\ntext # not a heading\n",
        "",
        "no heading at all",
    ]
    assert len(texts) > 4000
    expected = [[(s.level, s.heading) for s in sections(t) if s.level] for t in texts]
    mismatched = [i for i, t in enumerate(texts) if headings(t) != expected[i]]
    assert mismatched == []


def _vault_files(n: int) -> dict[str, str]:
    files = {}
    for i in range(n):
        dated = f"date: 2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}\n" if i % 3 else ""
        files[f"area{i % 7}/note-{i}.md"] = (
            f"---\ntitle: Note {i}\n{dated}tags: [t{i % 5}, shared]\naliases: [alias {i}]\n---\n"
            f"# Heading {i}\nOrchard words {i % 11} and [[note-{(i + 1) % n}]] with #inline{i % 4}.\n"
            f"## Part {i % 9}\nSee https://github.com/owner/repo{i % 3} for more.\n"
        )
    return files


def _state(store: Store, paths: list[str]) -> dict[str, object]:
    rows = {p: store.catalog.get(p) for p in paths}
    docs = {}
    for p in paths:
        found = store.index.hit_for(p)
        assert found is not None, p
        hit, hits = found
        docs[p] = (hit.facts, hits.text_of(hit))
    searches = {w: sorted(h.path for h in store.index.search([w], limit=500).hits) for w in ("orchard", "alias", "t3")}
    return {"rows": rows, "docs": docs, "searches": searches, "count": store.index.doc_count()}


def test_notes_read_by_worker_processes_build_what_one_process_builds(tmp_path: Path) -> None:
    files = _vault_files(260)  # more than one chunk of notes for the workers
    vault = make_repo(tmp_path / "vault", files)
    paths = sorted(files)
    later = time.time_ns() + 3600 * 10**9
    for rel in paths:  # files newer than their commit, as in a clone: the undated notes take the commit's date
        os.utime(vault / rel, ns=(later, later))
    with Store(tmp_path / "one") as one, Store(tmp_path / "pool") as pool:
        first = reconcile(vault, one, workers=0)
        second = reconcile(vault, pool, workers=2)
        assert first.to_dict() | {"seconds": 0} == second.to_dict() | {"seconds": 0}
        assert first.added == 260 and not first.errors
        state = _state(one, paths)
        assert state == _state(pool, paths)
        assert {r.captured_source for r in state["rows"].values()} == {"date", "git"}  # type: ignore[attr-defined]
        for rel in paths:  # every note touched (new stat, same bytes), three edited
            os.utime(vault / rel, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        for rel in paths[:3]:
            (vault / rel).write_text(files[rel].replace("Orchard", "Vineyard"), encoding="utf-8")
        first = reconcile(vault, one, workers=0)
        second = reconcile(vault, pool, workers=2)
        assert first.to_dict() | {"seconds": 0} == second.to_dict() | {"seconds": 0}
        assert first.updated == 3 and first.unchanged == 257
        assert _state(one, paths) == _state(pool, paths)


def _tables(store: Store) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(store.catalog.path)
    try:
        return {t: sorted(db.execute(f"SELECT * FROM {t}"), key=repr) for t in ("notes", *PER_DOC_TABLES)}
    finally:
        db.close()


def test_a_build_into_an_empty_catalog_writes_the_rows_an_update_writes(tmp_path: Path) -> None:
    files = _vault_files(40)
    vault = make_repo(tmp_path / "vault", files)
    with Store(tmp_path / "fresh") as fresh:
        assert fresh.catalog.is_empty()
        assert reconcile(vault, fresh, workers=0).added == 40
        built = _tables(fresh)
    # the same notes written by the update path: into a catalog and index that already hold another note
    other = tmp_path / "other"
    other.mkdir()
    (other / "gone.md").write_text("# Gone\nsoon removed, with #tag and [[link]]\n", encoding="utf-8")
    with Store(tmp_path / "updated") as updated:
        reconcile(other, updated, workers=0)
        assert not updated.catalog.is_empty()
        report = reconcile(vault, updated, workers=0, allow_mass_delete=True)
        assert (report.added, report.deleted) == (40, 1)
        assert _tables(updated) == built
    assert sum(len(rows) for rows in built.values()) > 40 * 4  # tags, aliases, links and entities were written


def _row(path: str, tags: tuple[str, ...] = ()) -> NoteRow:
    nothing = (None,) * 6  # status, lifecycle, type, project, superseded_by, wall
    return NoteRow(path, (1, 2, 3, 4), "h", "2025-01-01", "date", "A", *nothing, (), None, tags)


def test_the_catalog_rows_of_a_build_commit_after_the_index_and_only_with_it(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    seen: list[tuple[int, int]] = []
    row = _row("a.md")

    def stage() -> None:
        with catalog.adding([row]), Catalog.reader(catalog.path) as reader:
            seen.append((reader.count(), index.doc_count()))  # neither is visible yet

    index.apply([_doc("a.md", "apples")], new=True, alongside=stage)
    assert seen == [(0, 0)] and catalog.count() == 1 and index.doc_count() == 1

    def failing() -> None:
        with catalog.adding([replace(row, path="b.md")]):
            raise RuntimeError("the catalog could not be written")

    with pytest.raises(RuntimeError, match="could not be written"):
        index.apply([_doc("b.md", "bananas")], new=True, alongside=failing)
    assert catalog.paths() == ["a.md"]  # rolled back: the next pass finds b.md new and indexes it again
    catalog.close()
    index.close()


def test_usage_counts_leave_a_catalog_empty_for_a_build(tmp_path: Path) -> None:
    with Catalog(tmp_path / "catalog.sqlite3") as catalog:
        catalog.count_usage(["a.md"], "recall", "2025-01-01T00:00:00Z")
        assert catalog.is_empty()
        catalog.apply([_row("a.md", tags=("t",))], [], [])
        assert not catalog.is_empty()


def _tasks(vault: Path) -> list[tuple[str, StatKey, None]]:
    return [(rel, stat, None) for rel, stat in sorted(walk_vault(vault).files.items())]


def test_forked_and_spawned_workers_prepare_what_this_process_prepares(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in _vault_files(450).items():  # more than two chunks of notes for each worker
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    tasks = _tasks(vault)
    alone = list(prepared_in_order(vault, tasks, "obsidian", 0))
    assert len(alone) == 450 and all(p.doc is not None for p in alone)
    for fork in (True, False):
        stream = PreparedStream(vault, tasks, "obsidian", 2, fork=fork)
        try:
            assert list(stream) == alone, fork
        finally:
            stream.close()
    assert not multiprocessing.active_children()


def test_a_stream_closed_before_it_is_read_stops_its_workers(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in _vault_files(450).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    stream = PreparedStream(vault, _tasks(vault), "obsidian", 2, fork=True)
    assert multiprocessing.active_children()  # started, and given their first chunks, at once
    stream.close()
    assert not multiprocessing.active_children()


FORK_CHECK = """
import pathlib, sys, tempfile, threading
from agentmd.engine.index.notes import fork_is_safe
from agentmd.engine.index.store import Store
seen = [fork_is_safe()]
store = Store(pathlib.Path(tempfile.mkdtemp()))
seen.append(fork_is_safe())  # an open index: Tantivy's idle file watcher only
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
seen.append(fork_is_safe())  # a thread of this interpreter
stop.set()
thread.join()
store.index.small_commits()
store.index.clear()  # an index writer and its indexing threads
seen.append(fork_is_safe())
print(seen)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads are counted in /proc")
def test_workers_are_forked_only_from_a_process_free_of_other_threads() -> None:
    done = subprocess.run([sys.executable, "-c", FORK_CHECK], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[True, True, False, False]"


def test_a_build_into_an_empty_catalog_sweeps_the_usage_counts_of_notes_it_did_not_find(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kept.md").write_text("# Kept\nwith #tag and [[gone]]\n", encoding="utf-8")
    with Store(tmp_path / "cache") as store:
        store.catalog.count_usage(["kept.md", "gone.md"], "recall", "2025-01-01T00:00:00Z")
        assert store.catalog.is_empty()
        assert reconcile(vault, store).added == 1
        assert store.catalog.usage_counts(["kept.md", "gone.md"]) == {"kept.md": (0, 1)}
        counts = store.catalog.table_counts()
        assert counts == {"notes": 1, "tags": 1, "aliases": 0, "usage": 1, "links": 1, "entities": 0}


FORK_OUTPUT = """
import pathlib, sys
from agentmd.engine.index.notes import PreparedStream
from agentmd.engine.index.reconcile import walk_vault
vault = pathlib.Path(sys.argv[1])
tasks = [(rel, stat, None) for rel, stat in sorted(walk_vault(vault).files.items())]
print("before the workers", end="")  # still in this process's buffer when they are forked
stream = PreparedStream(vault, tasks, "obsidian", 2, fork=True)
print(" and after:", len(list(stream)))
stream.close()
"""


def test_forked_workers_repeat_nothing_this_process_printed_before_them(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in _vault_files(450).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", FORK_OUTPUT, str(vault)], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout == "before the workers and after: 450\n"
