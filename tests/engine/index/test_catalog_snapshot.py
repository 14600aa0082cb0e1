"""The stat keys' snapshot beside the catalog, on real sqlite files: read in place of the table only while it
carries the catalog's current stat token, passed over when stale, torn or damaged, and never written from
keys another handle has changed under it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.catalog_schema import STAT_TOKEN_KEY, NoteRow, StatKey


def row(path: str, stat: StatKey) -> NoteRow:
    return NoteRow(
        path=path,
        stat=stat,
        hash="h-" + path,
        captured="2025-01-01",
        captured_source="frontmatter",
        title=path,
        status=None,
        lifecycle=None,
        type=None,
        project=None,
        superseded_by=None,
        wall=None,
        flags=(),
        frontmatter_error=None,
    )


KEYS: dict[str, StatKey] = {
    "a.md": (1_700_000_000_123_456_789, 120, 1_700_000_000_223_456_789, 41),
    "sub/b.md": (-5, 0, 7, 2**63 - 1),  # a date before 1970, an empty file, the largest inode sqlite stores
    "dossier/café.md": (3, 4, 5, 6),
}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "cache" / "catalog.sqlite3"
    with Catalog(path) as catalog:
        catalog.apply([row(p, k) for p, k in KEYS.items()], [], [])
    return path


def set_table_key(path: Path, note: str, stat: StatKey) -> None:
    """Change a stat key in the table behind the catalog's back (the stat token left as it is)."""
    with sqlite3.connect(path) as db:
        db.execute("UPDATE notes SET mtime_ns=?, size=?, ctime_ns=?, inode=? WHERE path=?", (*stat, note))


def saved(path: Path) -> Catalog:
    """A handle whose stat keys were read and written to the snapshot."""
    catalog = Catalog(path)
    catalog.stat_keys()
    assert catalog.save_stat_snapshot()
    return catalog


def test_a_snapshot_of_the_current_token_is_read_in_place_of_the_table(path: Path) -> None:
    saved(path).close()
    assert Path(str(path) + ".statkeys").is_file()
    set_table_key(path, "a.md", (9, 9, 9, 9))  # the snapshot, not the table, answers while the token holds
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == KEYS
        assert not catalog.save_stat_snapshot(), "a snapshot that holds the keys is not written again"
    with Catalog.reader(path) as reader:
        assert reader.stat_keys() == KEYS


def test_a_change_makes_the_snapshot_stale_until_a_new_one_is_saved(path: Path) -> None:
    saved(path).close()
    with Catalog(path) as catalog:  # a pass that changed a note and ended before saving (a hint pass, a crash)
        catalog.apply([row("new.md", (1, 1, 1, 1))], ["a.md"], [("sub/b.md", (2, 2, 2, 2))])
    expected = {"new.md": (1, 1, 1, 1), "sub/b.md": (2, 2, 2, 2), "dossier/café.md": KEYS["dossier/café.md"]}
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == expected
        assert catalog.save_stat_snapshot()
    set_table_key(path, "new.md", (8, 8, 8, 8))
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == expected  # the new snapshot is read


def test_a_kept_handle_keeps_its_keys_exact_through_its_own_writes(path: Path) -> None:
    with Catalog(path) as catalog:
        catalog.stat_keys()
        catalog.apply([row("c.md", (5, 5, 5, 5))], ["a.md"], [])
        with catalog.adding([row("d.md", (6, 6, 6, 6))]):
            pass
        held = catalog.stat_keys()
        assert catalog.save_stat_snapshot()
    with Catalog(path) as fresh:
        assert fresh.stat_keys() == held
        assert "a.md" not in held and held["c.md"] == (5, 5, 5, 5) and held["d.md"] == (6, 6, 6, 6)
        with sqlite3.connect(path) as db:
            table = {
                p: (m, s, c, i)
                for p, m, s, c, i in db.execute("SELECT path, mtime_ns, size, ctime_ns, inode FROM notes")
            }
        assert table == held


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="torn"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data[:-9] + bytes([data[-9] ^ 1]) + data[-8:], id="a flipped bit"),
        pytest.param(lambda data: b"not a snapshot at all" * 10, id="garbage"),
        pytest.param(lambda data: data + b"\0" * 32, id="too long"),
    ],
)
def test_a_damaged_snapshot_is_passed_over_for_the_table(path: Path, damage: object) -> None:
    saved(path).close()
    snapshot = Path(str(path) + ".statkeys")
    assert callable(damage)
    snapshot.write_bytes(damage(snapshot.read_bytes()))
    set_table_key(path, "a.md", (9, 9, 9, 9))
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == KEYS | {"a.md": (9, 9, 9, 9)}
        assert catalog.save_stat_snapshot(), "a damaged snapshot is replaced"
    with Catalog(path) as catalog:
        assert catalog.stat_keys()["a.md"] == (9, 9, 9, 9)


def test_a_deleted_snapshot_or_token_falls_back_to_the_table(path: Path) -> None:
    saved(path).close()
    Path(str(path) + ".statkeys").unlink()
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == KEYS
    saved(path).close()
    with sqlite3.connect(path) as db:  # a catalog from before stat tokens
        db.execute("DELETE FROM meta WHERE key=?", (STAT_TOKEN_KEY,))
    set_table_key(path, "a.md", (9, 9, 9, 9))
    with Catalog(path) as catalog:
        assert catalog.stat_keys()["a.md"] == (9, 9, 9, 9)
        assert catalog.save_stat_snapshot(), "such a catalog gets a token and a snapshot on its first save"
        assert catalog.get_meta(STAT_TOKEN_KEY)
    set_table_key(path, "a.md", (7, 7, 7, 7))
    with Catalog(path) as catalog:
        assert catalog.stat_keys()["a.md"] == (9, 9, 9, 9)


def test_another_handles_write_is_seen_and_never_saved_over(path: Path) -> None:
    with Catalog(path) as kept, Catalog(path) as other:
        assert kept.stat_keys() == KEYS
        other.apply([], ["a.md"], [])
        assert "a.md" not in kept.stat_keys(), "the kept keys are read again after another handle's write"
        other.apply([row("e.md", (3, 3, 3, 3))], [], [])
        assert not kept.save_stat_snapshot(), "keys read before another handle's write are not saved"
        kept.apply([row("f.md", (4, 4, 4, 4))], [], [])
        keys = kept.stat_keys()
        assert set(keys) == {"sub/b.md", "dossier/café.md", "e.md", "f.md"}
        assert kept.save_stat_snapshot()
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == keys


def test_clearing_the_catalog_makes_the_snapshot_stale(path: Path) -> None:
    saved(path).close()
    with Catalog(path) as catalog:
        catalog.clear()
    with Catalog(path) as catalog:
        assert catalog.stat_keys() == {}


def test_the_pass_record_lives_beside_the_catalog_and_earlier_catalogs_keep_theirs(path: Path) -> None:
    with Catalog(path) as catalog:
        assert catalog.pass_record() is None
        catalog.set_meta("last_pass", '{"at": "earlier"}')  # where catalogs of earlier versions kept it
        assert catalog.pass_record() == '{"at": "earlier"}'
        catalog.set_pass_record('{"at": "now"}')
    assert Path(str(path) + ".lastpass").read_text() == '{"at": "now"}'
    with Catalog.reader(path) as reader:
        assert reader.pass_record() == '{"at": "now"}'


def test_a_new_catalog_drops_the_files_a_deleted_one_left_beside_it(path: Path) -> None:
    with Catalog(path) as catalog:
        catalog.stat_keys()
        assert catalog.save_stat_snapshot()
        catalog.set_pass_record('{"at": "then"}')
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with Catalog(path) as catalog:
        assert catalog.pass_record() is None and catalog.stat_keys() == {}
    assert not Path(str(path) + ".statkeys").exists() and not Path(str(path) + ".lastpass").exists()
