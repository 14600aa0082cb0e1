"""Reconcile against a real vault folder and a real index: every way a vault changes converges."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import Vault

from agentmd.engine.breaker import MASS_DELETE_MIN_NOTES
from agentmd.engine.index.reconcile import reconcile, walk_vault
from agentmd.engine.index.store import Store


def _paths(store: Store) -> set[str]:
    assert store.index.paths() == set(store.catalog.stat_keys()), "index and catalog disagree"
    return store.index.paths()


def _search_paths(store: Store, *words: str) -> list[str]:
    return [h.path for h in store.index.search(list(words), limit=50).hits]


def test_add_edit_delete_rename_converge(vault: Vault, cache_dir: Path) -> None:
    vault.note("a.md", "alpha apples\n", title="First")
    vault.note("sub/b.md", "bravo bananas\n")
    with Store(cache_dir) as store:
        r = reconcile(vault.root, store)
        assert (r.added, r.updated, r.deleted, r.unchanged) == (2, 0, 0, 0)
        assert _paths(store) == {"a.md", "sub/b.md"}

        vault.note("a.md", "alpha apricots\n", title="First")
        r = reconcile(vault.root, store)
        assert (r.added, r.updated, r.deleted, r.unchanged) == (0, 1, 0, 1)
        assert _search_paths(store, "apricots") == ["a.md"]
        assert _search_paths(store, "apples") == []

        os.rename(vault.root / "sub/b.md", vault.root / "sub/c.md")
        r = reconcile(vault.root, store)
        assert (r.added, r.deleted) == (1, 1)
        assert _paths(store) == {"a.md", "sub/c.md"}
        assert _search_paths(store, "bananas") == ["sub/c.md"]

        vault.remove("a.md")
        r = reconcile(vault.root, store)
        assert r.deleted == 1
        assert _paths(store) == {"sub/c.md"}
        assert _search_paths(store, "alpha") == []


def test_same_size_edit_with_restored_mtime_is_seen(vault: Vault, cache_dir: Path) -> None:
    path = vault.note("n.md", "the colour is red\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        st = path.stat()
        path.write_text("the colour is tan\n", encoding="utf-8")  # same length
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back, as some sync tools do
        assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
        r = reconcile(vault.root, store)
        assert r.updated == 1
        assert _search_paths(store, "tan") == ["n.md"]
        assert _search_paths(store, "red") == []


def test_touch_without_content_change_reindexes_nothing(vault: Vault, cache_dir: Path) -> None:
    path = vault.note("n.md", "steady text\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        r = reconcile(vault.root, store)
        assert (r.added, r.updated, r.unchanged) == (0, 0, 1)
        again = reconcile(vault.root, store)
        assert again.unchanged == 1 and again.changed == 0


def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs /proc/self/io")
def test_unchanged_pass_reads_no_note(vault: Vault, cache_dir: Path) -> None:
    filler = "lorem ipsum dolor sit amet " * 800  # ~21 KB a note
    for i in range(150):
        vault.note(f"d{i % 7}/note-{i}.md", f"note number {i}\n{filler}\n")
    total = sum(p.stat().st_size for p in vault.root.rglob("*.md"))
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        before = _rchar()
        r = reconcile(vault.root, store)
        read = _rchar() - before
    assert r.unchanged == 150 and r.changed == 0
    # Reading even one note would cost ~21 KB; the catalog and directory reads are far smaller than the notes.
    assert read < total * 0.05, f"unchanged pass read {read} bytes of a {total}-byte vault"


def test_dot_dirs_and_non_markdown_are_skipped(vault: Vault, cache_dir: Path) -> None:
    vault.note("keep.md", "visible\n")
    vault.note(".obsidian/workspace.md", "hidden\n")
    vault.note(".trash/old.md", "hidden\n")
    vault.note(".git/x.md", "hidden\n")
    vault.note("sub/.hidden.md", "hidden\n")
    vault.write("image.png", b"\x89PNG")
    vault.write("notes.txt", "hidden\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        assert _paths(store) == {"keep.md"}


def test_symlinks_are_reported_not_followed(vault: Vault, cache_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside the vault\n")
    vault.note("real.md", "inside\n")
    os.symlink(outside, vault.root / "linked")
    result = walk_vault(vault.root)
    assert set(result.files) == {"real.md"}
    assert any(s["path"] == "linked" for s in result.skipped)


def test_the_walk_gives_each_note_its_own_stat_key_and_reports_what_it_leaves_out(vault: Vault, tmp_path: Path) -> None:
    """Notes in nested folders carry the key of their own file (as lstat gives it); a folder whose name ends
    in `.md` is walked into; a link named like a note, a linked folder and a FIFO are reported, not read."""
    vault.note("top.md", "top\n")
    vault.note("a/b/deep.md", "deep\n")
    vault.note("odd.md/inner.md", "inside a folder named like a note\n")
    vault.write("a/readme.txt", "not a note\n")
    os.symlink(vault.root / "top.md", vault.root / "a" / "link.md")
    os.symlink(tmp_path, vault.root / "a" / "elsewhere")
    os.mkfifo(vault.root / "a" / "pipe.md")
    result = walk_vault(vault.root)
    assert set(result.files) == {"top.md", "a/b/deep.md", "odd.md/inner.md"}
    for rel, key in result.files.items():
        st = os.lstat(vault.root / rel)
        assert key == (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    reasons = {s["path"]: s["reason"] for s in result.skipped}
    assert reasons == {
        "a/link.md": "symbolic link (not followed)",
        "a/elsewhere": "symbolic link (not followed)",
        "a/pipe.md": "not a regular file (FIFO, socket or device)",
    }


def test_deleting_cache_and_reindexing_gives_same_results(vault: Vault, tmp_path: Path) -> None:
    for i in range(40):
        vault.note(f"n{i}.md", f"topic {i % 5} shared words orchard {'pear ' * (i % 3)}\n", title=f"Note {i}")
    queries = [["orchard"], ["topic", "3"], ["pear"], ["note"]]
    cache = tmp_path / "c1"
    with Store(cache) as store:
        reconcile(vault.root, store)
        first = [sorted(_search_paths(store, *q)) for q in queries]
    shutil.rmtree(cache)
    with Store(cache) as store:
        r = reconcile(vault.root, store)
        assert r.added == 40
        second = [sorted(_search_paths(store, *q)) for q in queries]
    assert first == second
    assert all(first)


def test_corrupted_index_is_set_aside_and_rebuilt(vault: Vault, cache_dir: Path) -> None:
    vault.note("a.md", "resilient content\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
    (cache_dir / "index" / "meta.json").write_text("{ not json")
    with Store(cache_dir) as store:
        assert any("set aside" in n for n in store.notices)
        r = reconcile(vault.root, store)
        assert r.added == 1
        assert _search_paths(store, "resilient") == ["a.md"]
    assert list(cache_dir.glob("index.broken-*")), "the damaged index is kept for inspection"


def test_corrupted_catalog_is_recreated(vault: Vault, cache_dir: Path) -> None:
    vault.note("a.md", "catalog content\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
    (cache_dir / "catalog.sqlite3").write_bytes(b"this is not a database" * 100)
    for extra in ("catalog.sqlite3-wal", "catalog.sqlite3-shm"):
        (cache_dir / extra).unlink(missing_ok=True)
    with Store(cache_dir) as store:
        r = reconcile(vault.root, store)
        assert r.added == 1
        assert _paths(store) == {"a.md"}


def test_mass_delete_is_refused_then_allowed(vault: Vault, cache_dir: Path) -> None:
    n = MASS_DELETE_MIN_NOTES + 10
    for i in range(n):
        vault.note(f"n{i}.md", f"note {i}\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        for i in range(n - 5):
            vault.remove(f"n{i}.md")
        r = reconcile(vault.root, store)
        assert r.refused and "allow-mass-delete" in r.refused
        assert len(_paths(store)) == n, "a refused pass changes nothing"
        r = reconcile(vault.root, store, allow_mass_delete=True)
        assert r.refused is None and r.deleted == n - 5
        assert len(_paths(store)) == 5


def test_small_deletions_are_not_refused(vault: Vault, cache_dir: Path) -> None:
    for i in range(30):
        vault.note(f"n{i}.md", f"note {i}\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        for i in range(10):
            vault.remove(f"n{i}.md")
        r = reconcile(vault.root, store)
        assert r.refused is None and r.deleted == 10


def test_a_vault_emptied_a_few_notes_at_a_time_is_refused_once_half_is_gone(vault: Vault, cache_dir: Path) -> None:
    # a sync client deleting the vault in batches: no pass alone removes half, but within the hour they do
    for i in range(30):
        vault.note(f"n{i}.md", f"note {i}\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        for batch in range(3):  # 15 of 30: half, not more
            for i in range(batch * 5, batch * 5 + 5):
                vault.remove(f"n{i}.md")
            assert reconcile(vault.root, store).refused is None
        for i in range(15, 20):
            vault.remove(f"n{i}.md")
        r = reconcile(vault.root, store)
        assert r.refused and "would leave 10 notes of the 30 the index held within the last 1 hour" in r.refused
        assert "allow-mass-delete" in r.refused and len(_paths(store)) == 15  # the refused pass changed nothing
        # and it says that the deletions before it went through, with the way to take them back
        assert "this pass changed nothing, but the 15 deletions before it in that hour went through" in r.refused
        assert "`agentmd undo`" in r.refused
        r = reconcile(vault.root, store, allow_mass_delete=True)
        assert r.refused is None and len(_paths(store)) == 10
        vault.remove("n20.md")  # the window starts afresh from the 10 left
        assert reconcile(vault.root, store).refused is None


def test_a_vault_checked_out_at_an_old_commit_or_another_branch_is_said_so_not_called_emptied(
    tmp_path: Path, cache_dir: Path
) -> None:
    from git_helpers import git, make_repo

    root = make_repo(tmp_path / "vault", {f"n{i}.md": f"note {i}\n" for i in range(5)})
    old = git(root, "rev-parse", "HEAD").stdout.strip()
    for i in range(5, 30):
        (root / f"n{i}.md").write_text(f"note {i}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more notes")
    with Store(cache_dir) as store:
        assert reconcile(root, store).refused is None  # on main: the branch the index sees the vault on
        git(root, "checkout", "-q", old)  # the person looks at an old state of the vault
        r = reconcile(root, store)
        assert r.refused and r.refused.startswith(f"the vault is checked out at commit {old[:10]} (a detached HEAD)")
        assert "25 of the 30 indexed notes are not in it" in r.refused and "`git checkout main`" in r.refused
        assert "nothing is deleted" in r.refused and "unmounted" not in r.refused
        assert len(_paths(store)) == 30  # the index keeps its notes meanwhile
        git(root, "checkout", "-q", "-b", "few", old)  # a branch of its own, with far fewer notes
        r = reconcile(root, store)
        assert r.refused and "checked out at branch few, not main, the branch the index last saw" in r.refused
        assert "`git checkout main`" in r.refused and "allow-mass-delete" in r.refused
        git(root, "checkout", "-q", "main")
        assert reconcile(root, store).refused is None and len(_paths(store)) == 30
        for i in range(20):  # on its branch, a deletion is what it looks like
            (root / f"n{i}.md").unlink()
        r = reconcile(root, store)
        assert r.refused and "looks like an unmounted or emptied vault" in r.refused


def test_notes_moved_a_few_at_a_time_are_no_deletion(vault: Vault, cache_dir: Path) -> None:
    for i in range(30):
        vault.note(f"old/n{i}.md", f"note {i}\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        (vault.root / "new").mkdir()
        for batch in range(5):  # 25 of 30 moved to another folder, five at a time
            moved = [(f"old/n{i}.md", f"new/n{i}.md") for i in range(batch * 5, batch * 5 + 5)]
            for old, new in moved:
                (vault.root / old).rename(vault.root / new)
            # as the daemon's watcher hands them over: the old names in one pass, the new ones in the next
            assert reconcile(vault.root, store, only={old for old, _ in moved}).refused is None
            assert reconcile(vault.root, store, only={new for _, new in moved}).refused is None
        assert reconcile(vault.root, store).refused is None and len(_paths(store)) == 30


def test_a_deletion_window_is_counted_within_the_hour_only() -> None:
    from agentmd.engine.breaker import DELETION_WINDOW, RecentDeletions

    window = RecentDeletions.load(None, 1000.0, 30)
    assert not window.trips(15) and window.trips(14)  # half left is no breach; less than half is
    later = RecentDeletions.load(window.dump(), 1000.0 + DELETION_WINDOW - 1, 15)
    assert later.peak == 30 and later.trips(14)
    fresh = RecentDeletions.load(window.dump(), 1000.0 + DELETION_WINDOW + 1, 15)
    assert fresh.peak == 15 and not fresh.trips(8)
    assert RecentDeletions.load(window.dump(), 900.0, 15).peak == 15  # the clock went back: afresh
    assert RecentDeletions.load("not json", 1000.0, 30).peak == 30


def test_captured_from_mtime_never_moves(vault: Vault, cache_dir: Path) -> None:
    path = vault.note("n.md", "first version\n")
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        row = store.catalog.get("n.md")
        assert row is not None and row.captured_source == "mtime" and row.captured.startswith("2020-09-13")
        path.write_text("second version, edited later\n", encoding="utf-8")  # mtime is now
        reconcile(vault.root, store)
        row = store.catalog.get("n.md")
        assert row is not None and row.captured.startswith("2020-09-13")
        path.write_text("---\ncaptured: 2021-01-02\n---\nthird\n", encoding="utf-8")
        reconcile(vault.root, store)
        row = store.catalog.get("n.md")
        assert row is not None and (row.captured, row.captured_source) == ("2021-01-02", "captured")


def test_unreadable_vault_folder_refuses(tmp_path: Path, cache_dir: Path) -> None:
    with Store(cache_dir) as store:
        r = reconcile(tmp_path / "missing", store)
        assert r.refused and "not a directory" in r.refused


def test_catalog_rows_and_per_document_tables_follow_notes(vault: Vault, cache_dir: Path) -> None:
    vault.note("t.md", "body with #inline-tag\n", tags=["one", "two/three"], aliases=["Tee"])
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        row = store.catalog.get("t.md")
        assert row is not None
        assert set(row.tags) == {"one", "two/three", "inline-tag"} and row.aliases == ("Tee",)
        vault.remove("t.md")
        reconcile(vault.root, store)
        assert store.catalog.get("t.md") is None
        counts = store.catalog.table_counts()
        assert {"notes", "tags", "aliases"} <= set(counts) and set(counts.values()) == {0}, counts


def test_a_pass_leaves_the_garbage_collector_as_it_found_it(vault: Vault, cache_dir: Path) -> None:
    """The walk holds the cyclic collector off while it runs (its tuples make no cycles); afterwards it runs
    again, and a collector the caller turned off stays off."""
    import gc

    vault.note("notes/a.md", "alpha", title="A")
    with Store(cache_dir) as store:
        assert gc.isenabled()
        assert reconcile(vault.root, store).added == 1
        assert gc.isenabled()
        assert reconcile(vault.root, store).unchanged == 1  # (a pass that finds nothing to do ends early)
        assert gc.isenabled()
        gc.disable()
        try:
            vault.note("notes/b.md", "beta", title="B")
            assert reconcile(vault.root, store).added == 1
            assert not gc.isenabled()
            assert reconcile(vault.root, store).unchanged == 2
            assert not gc.isenabled()
        finally:
            gc.enable()


def _key(path: Path) -> tuple[int, int, int, int]:
    st = os.lstat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)


@pytest.mark.parametrize("kept", [True, False], ids=["one store kept open (the daemon)", "a fresh store a pass"])
def test_every_change_is_seen_by_the_next_pass_whether_the_keys_come_from_memory_or_the_snapshot(
    vault: Vault, cache_dir: Path, kept: bool
) -> None:
    """An edit that keeps the size and the modification time (only the change time tells), an edit written by
    another process, a rename and a deletion: each is seen by the next pass, whether it reads the stat keys
    held from the pass before or the snapshot that pass left beside the catalog."""
    import subprocess
    import sys

    for name in ("same.md", "other.md", "moved.md", "gone.md", "still.md"):
        vault.note(name, f"{name} original words\n")
    stores: list[Store] = []

    def store() -> Store:
        if not kept or not stores:
            if stores and not kept:
                stores.pop().close()
            stores.append(Store(cache_dir))
        return stores[-1]

    try:
        assert reconcile(vault.root, store()).added == 5
        assert reconcile(vault.root, store()).unchanged == 5
        assert Path(str(store().catalog.path) + ".statkeys").is_file()

        same = vault.root / "same.md"
        before = os.stat(same)
        same.write_text("same.md replaced words\n")  # the same size
        os.utime(same, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same modification time
        assert os.stat(same).st_size == before.st_size and os.stat(same).st_mtime_ns == before.st_mtime_ns
        r = reconcile(vault.root, store())
        assert (r.updated, r.unchanged) == (1, 4)
        assert _search_paths(store(), "replaced") == ["same.md"]

        script = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text('other.md edited elsewhere\\n')"
        subprocess.run([sys.executable, "-c", script, str(vault.root / "other.md")], check=True)
        r = reconcile(vault.root, store())
        assert (r.updated, r.unchanged) == (1, 4)
        assert _search_paths(store(), "elsewhere") == ["other.md"]

        os.rename(vault.root / "moved.md", vault.root / "sub-moved.md")
        vault.remove("gone.md")
        r = reconcile(vault.root, store())
        assert (r.added, r.deleted, r.unchanged) == (1, 2, 3)
        assert _paths(store()) == {"same.md", "other.md", "sub-moved.md", "still.md"}

        r = reconcile(vault.root, store())
        assert (r.changed, r.unchanged) == (0, 4)
        keys = store().catalog.stat_keys()
        assert keys == {p: _key(vault.root / p) for p in keys}
    finally:
        for s in stores:
            s.close()


@pytest.mark.parametrize("workers", [0, 2])
def test_a_stopped_pass_keeps_what_it_read_and_the_next_one_finishes(
    vault: Vault, cache_dir: Path, workers: int
) -> None:
    for i in range(60):
        vault.note(f"notes/n{i:02d}.md", f"note {i} about herons\n")
    asked = 0

    def stop() -> bool:  # a shutdown that comes once 25 notes were read
        nonlocal asked
        asked += 1
        return asked > 25

    with Store(cache_dir) as store:
        first = reconcile(vault.root, store, stop=stop, workers=workers)
        assert first.interrupted and first.added == 25
        assert len(_paths(store)) == 25  # index and catalog agree on what was kept
        second = reconcile(vault.root, store, workers=workers)
        assert not second.interrupted and second.added == 35 and second.unchanged == 25
        assert len(_paths(store)) == 60 and len(_search_paths(store, "herons")) == 50  # the search's own limit


def test_a_rebuild_from_scratch_forgets_the_last_pass_until_its_own_ends(tmp_path: Path) -> None:
    """`reindex --from-scratch` empties the index and catalog: cut short there (a kill), status must not show the
    last pass of the index that is gone beside 0 notes, but say the index was never built."""
    import datetime as dt

    from agentmd.engine.daemon.status import index_section
    from agentmd.engine.index.reconcile import last_pass

    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(5):
        (vault / f"n{i}.md").write_text(f"# N{i}\n", encoding="utf-8")
    with Store(tmp_path / "cache") as store:
        reconcile(vault, store)
        assert (last_pass(store) or {}).get("added") == 5
    with Store(tmp_path / "cache", from_scratch=True) as emptied:  # the rebuild's first step, and no pass after it
        assert last_pass(emptied) is None
        section = index_section(emptied, vault, daemon_running=False, stale=False, now=dt.datetime.now(dt.UTC))
        assert section["documents"] == 0 and section["red"][0].startswith("index-never-built")
        reconcile(vault, emptied)
        assert (last_pass(emptied) or {}).get("added") == 5
