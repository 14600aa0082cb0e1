"""Index the real vaults in ../shared/corpora (written by other people) and find known notes in them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import corpus, md_files

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store

KNOWN_ITEMS = {
    "dendron-site": [
        ("senior frontend engineer", "vault/careers.senior-webdev.md"),
        ("developer advocate", "vault/careers.developer-advocate.md"),
    ],
    "obsidian-tasks": [
        ("regular expressions", "docs/Queries/Regular Expressions.md"),
        ("line continuations", "docs/Queries/Line Continuations.md"),
    ],
    "vaultofknowledge": [
        ("3D rotation group", "06. Collected Knowledge/3D Rotation Group.md"),
        ("2-body systems", "06. Collected Knowledge/2-body systems.md"),
    ],
    "ailurus-zh": [
        ("tar 压缩命令", "200-note/02-Linux技术/常用命令/tar 压缩命令.md"),
        ("压缩命令", "200-note/02-Linux技术/常用命令/tar 压缩命令.md"),
    ],
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Store]:
    stores: dict[str, Store] = {}
    for name in KNOWN_ITEMS:
        root = corpus(name)
        store = Store(tmp_path_factory.mktemp(name) / "cache")
        report = reconcile(root, store)
        assert report.errors == [], report.errors
        stores[name] = store
    yield stores
    for store in stores.values():
        store.close()


@pytest.mark.parametrize("name", sorted(KNOWN_ITEMS))
def test_every_note_is_indexed_and_dot_folders_skipped(indexed: dict[str, Store], name: str) -> None:
    root = corpus(name)
    expected = md_files(root)
    store = indexed[name]
    assert store.index.paths() == expected
    assert set(store.catalog.stat_keys()) == expected
    assert not any(p.startswith((".obsidian/", ".trash/")) for p in expected)


@pytest.mark.parametrize(("name", "query", "path"), [(n, q, p) for n, items in KNOWN_ITEMS.items() for q, p in items])
def test_known_item_is_the_first_result(indexed: dict[str, Store], name: str, query: str, path: str) -> None:
    hits = indexed[name].index.search(query.split(), limit=5).hits
    assert hits, f"{query!r} found nothing"
    assert hits[0].path == path, [h.path for h in hits]


def test_non_ascii_paths_round_trip(indexed: dict[str, Store]) -> None:
    root = corpus("ailurus-zh")
    store = indexed["ailurus-zh"]
    non_ascii = [p for p in store.index.paths() if not p.isascii()]
    assert len(non_ascii) > 100
    for p in non_ascii[:20]:
        assert (root / p).is_file()
        assert store.catalog.get(p) is not None


def test_empty_notes_are_indexed(indexed: dict[str, Store]) -> None:
    root = corpus("ailurus-zh")
    empty = [p for p in md_files(root) if (root / p).stat().st_size == 0]
    assert empty, "the corpus has empty notes"
    paths = indexed["ailurus-zh"].index.paths()
    assert all(p in paths for p in empty)
    # an empty note is still found by its file name
    stem = Path(empty[0]).stem
    hits = indexed["ailurus-zh"].index.search([stem], limit=10).hits
    assert empty[0] in [h.path for h in hits]


def test_trash_exists_in_corpus_but_is_not_indexed(indexed: dict[str, Store]) -> None:
    root = corpus("vaultofknowledge")
    assert any((root / ".trash").glob("*.md"))
    assert not any(p.startswith(".trash/") for p in indexed["vaultofknowledge"].index.paths())
