"""The catalog's handles and queries on real sqlite files: the indexer's handle, the read-only reader the
hooks use, the usage counter, and the light import the hook path relies on."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentmd.engine.index.catalog import Catalog, CatalogError
from agentmd.engine.index.catalog_schema import SCHEMA_VERSION, USAGE_SINCE_KEY, NoteRow
from agentmd.engine.index.catalog_usage import NoteUsage
from agentmd.vault_schema import EntityRef, Link


def note(
    path: str,
    captured: str,
    *,
    wall: str | None = None,
    flags: tuple[str, ...] = (),
    links: tuple[Link, ...] = (),
    entities: tuple[EntityRef, ...] = (),
) -> NoteRow:
    return NoteRow(
        path=path,
        stat=(1, 2, 3, 4),
        hash="h-" + path,
        captured=captured,
        captured_source="frontmatter",
        title=path.rsplit("/", 1)[-1].removesuffix(".md"),
        status="unfiled" if path.startswith("inbox/") else None,
        lifecycle=None,
        type=None,
        project=None,
        superseded_by=None,
        wall=wall,
        flags=flags,
        frontmatter_error=None,
        links=links,
        entities=entities,
    )


@pytest.fixture
def catalog_path(tmp_path: Path) -> Path:
    path = tmp_path / "cache" / "catalog.sqlite3"
    with Catalog(path) as catalog:
        catalog.apply(
            [
                note("memory/a.md", "2025-01-01", links=(Link("b", None, None, None, False, "wiki", 3, False),)),
                note("memory/b.md", "2025-01-02", entities=(EntityRef("lib:tantivy", "lib", "tantivy", 5),)),
                note("memory/old.md", "2024-06-01", wall="archived"),
                note("memory/probe.md", "2025-01-03", flags=("probe",)),
                note("inbox/c.md", "2025-01-04"),
            ],
            [],
            [],
        )
    return path


def test_handle_is_a_context_manager_and_keeps_the_schema(catalog_path: Path) -> None:
    with Catalog(catalog_path) as catalog:
        assert catalog.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert catalog.count() == 5
    with pytest.raises(CatalogError):
        catalog.count()  # closed on leaving the block


def test_title_look_ups_use_an_index(catalog_path: Path) -> None:
    with Catalog(catalog_path) as catalog:
        assert catalog.paths_with_title("b") == ["memory/b.md"]
        assert catalog.paths_with_title("no such title") == []
        plan = " ".join(
            str(row[-1]) for row in catalog._db.execute("EXPLAIN QUERY PLAN SELECT path FROM notes WHERE title = 'b'")
        )
    assert "notes_title" in plan, plan  # not a scan of the whole table


@pytest.mark.parametrize(
    ("version", "dropped"),
    [("2", ("notes_title", "notes_captured")), ("3", ("notes_captured",))],
)
def test_a_catalog_of_an_older_schema_gains_its_indexes_and_keeps_its_rows(
    catalog_path: Path, version: str, dropped: tuple[str, ...]
) -> None:
    # what a catalog written before an index looks like: schema 2 had neither, schema 3 no `notes_captured`
    db = sqlite3.connect(catalog_path, isolation_level=None)
    for name in dropped:
        db.execute(f"DROP INDEX {name}")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.close()
    with Catalog(catalog_path) as catalog:
        assert catalog.reset_reason is None  # migrated, not recreated
        assert catalog.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert catalog.count() == 5
        assert catalog.paths_with_title("a") == ["memory/a.md"]
    names = {r[0] for r in sqlite3.connect(catalog_path).execute("SELECT name FROM sqlite_master")}
    assert set(dropped) <= names


def test_notes_of_a_span_newest_first_through_the_captured_index(catalog_path: Path) -> None:
    with Catalog(catalog_path) as catalog:
        # 2025-01-01 to 2025-01-04 (the day after excluded): the archived note and the probe are left out
        assert catalog.captured_within("2025-01-01", "2025-01-05") == (
            ["inbox/c.md", "memory/b.md", "memory/a.md"],
            3,
            {},
        )
        assert catalog.captured_within(None, "2025-01-02", limit=1) == (["memory/a.md"], 1, {"archived": 1})
        assert catalog.captured_within(None, None, walled=True, probes=True, limit=2)[1] == 5
        assert catalog.captured_within(None, None, month=6, walled=True) == (["memory/old.md"], 1, {})
        plan = " ".join(
            str(row[-1])
            for row in catalog._db.execute("EXPLAIN QUERY PLAN SELECT path FROM notes WHERE captured >= '2025'")
        )
    assert "notes_captured" in plan, plan


def test_a_catalog_of_an_unknown_older_schema_is_recreated(catalog_path: Path) -> None:
    db = sqlite3.connect(catalog_path, isolation_level=None)
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.close()
    with Catalog(catalog_path) as catalog:
        assert catalog.reset_reason is not None and "schema 1" in catalog.reset_reason
        assert catalog.count() == 0
        assert catalog.get_meta("schema_version") == str(SCHEMA_VERSION)


def test_links_and_entities_round_trip(catalog_path: Path) -> None:
    with Catalog.reader(catalog_path) as catalog:
        [link] = catalog.links_from("memory/a.md")
        assert (link.target, link.kind, link.line, link.embed) == ("b", "wiki", 3, False)
        assert catalog.all_links() == [("memory/a.md", link)]
        assert catalog.links_with_keys(["b"]) == [("memory/a.md", link)]
        assert catalog.entities_of("memory/b.md") == [EntityRef("lib:tantivy", "lib", "tantivy", 5)]
        assert catalog.get("memory/a.md") is not None


def test_a_row_read_without_its_per_document_rows_holds_the_notes_columns(catalog_path: Path) -> None:
    from dataclasses import replace

    with Catalog.reader(catalog_path) as catalog:
        for path in ("memory/a.md", "memory/b.md", "memory/old.md", "memory/probe.md", "inbox/c.md"):
            whole, head = catalog.get(path), catalog.get(path, whole=False)
            assert whole is not None and head is not None
            assert head == replace(whole, tags=(), aliases=(), links=(), entities=(), entity_page=None), path
        assert catalog.get("memory/a.md", whole=False).links == ()  # type: ignore[union-attr]
        assert catalog.get("memory/missing.md", whole=False) is None


def test_reader_never_writes_nor_creates(catalog_path: Path, tmp_path: Path) -> None:
    with Catalog.reader(catalog_path, timeout=0.05) as catalog:
        assert catalog.unfiled() == [("inbox/c.md", "2025-01-04")]
        assert catalog.stat_keys()["memory/a.md"] == (1, 2, 3, 4)
        with pytest.raises(CatalogError):
            catalog.set_meta("k", "v")
    missing = tmp_path / "elsewhere" / "catalog.sqlite3"
    missing.parent.mkdir()
    with pytest.raises(CatalogError):
        Catalog.reader(missing)
    with pytest.raises(CatalogError):
        Catalog.counter(missing)
    assert not missing.exists()


def test_counter_counts_uses_and_the_first_stamp(catalog_path: Path) -> None:
    with Catalog.counter(catalog_path) as catalog:
        assert catalog.usage_since() is None
        catalog.count_usage(["memory/a.md", "memory/b.md"], "injection", "2026-01-01T00:00:00Z")
        catalog.count_usage(["memory/a.md"], "injection", "2026-01-02T00:00:00Z")
        catalog.count_usage(["memory/b.md"], "recall", "2026-01-03T00:00:00Z")
        with pytest.raises(ValueError):
            catalog.count_usage(["memory/a.md"], "peek", "2026-01-04T00:00:00Z")
    with Catalog.reader(catalog_path) as catalog:
        assert catalog.usage_counts(["memory/a.md", "memory/b.md", "inbox/c.md"]) == {
            "memory/a.md": (2, 0),
            "memory/b.md": (1, 1),
        }
        assert catalog.usage_since() == catalog.get_meta(USAGE_SINCE_KEY) == "2026-01-01T00:00:00Z"
        used = {n.path: n for n in catalog.note_usage()}
    assert used["memory/a.md"] == NoteUsage("memory/a.md", "a", "2025-01-01", 2, 0, "2026-01-02T00:00:00Z", None)
    assert used["memory/b.md"].last_used == "2026-01-03T00:00:00Z"
    assert used["memory/b.md"].to_dict()["last_used"] == "2026-01-03T00:00:00Z"


def test_usage_counts_of_many_paths(catalog_path: Path) -> None:
    paths = [f"memory/n{i}.md" for i in range(1200)]  # more than one IN (...) chunk
    with Catalog.counter(catalog_path) as catalog:
        catalog.count_usage(paths, "recall", "2026-01-01T00:00:00Z")
        got = catalog.usage_counts([*paths, "memory/a.md"])
    assert len(got) == 1200 and got["memory/n1199.md"] == (0, 1)


def test_note_usage_leaves_out_walled_and_probe_notes(catalog_path: Path) -> None:
    with Catalog.reader(catalog_path) as catalog:
        rows = catalog.note_usage()
    assert [n.path for n in rows] == ["memory/a.md", "memory/b.md", "inbox/c.md"]  # by captured date
    assert all(n.injections == n.recalls == 0 and n.last_used is None for n in rows)


def test_a_locked_catalog_fails_the_counter_within_its_wait(catalog_path: Path) -> None:
    holder = sqlite3.connect(catalog_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Catalog.counter(catalog_path, timeout=0.05) as catalog, pytest.raises(CatalogError):
            catalog.count_usage(["memory/a.md"], "injection", "2026-01-01T00:00:00Z")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Catalog.reader(catalog_path) as catalog:
        assert catalog.usage_counts(["memory/a.md"]) == {}
        assert catalog.usage_since() is None  # rolled back together


def test_the_usage_path_loads_no_note_model() -> None:
    """Counting an injection from the light hook path must not load the YAML parser or the note model."""
    code = (
        "import sys, agentmd.engine.index.usage, agentmd.hooks.entry\n"
        "heavy = sorted(m for m in sys.modules if m == 'yaml' or m.startswith(('agentmd.vault_schema', 'tantivy')))\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == ""
