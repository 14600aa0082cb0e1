"""A vault kept in a file-sync tool's folder, with real files, a real index and the real committer: conflict
copies are reported with their originals and not indexed, temp files are never indexed or committed, an
evicted note stays searchable, a note with merge conflict markers is held back and named, and a file still
being written is left for the next pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Vault
from daemon_helpers import make_repo
from git_helpers import committer, tree

from agentmd.engine.index import reconcile as reconcile_module
from agentmd.engine.index.notes import prepare
from agentmd.engine.index.reconcile import WalkResult, reconcile, walk_vault
from agentmd.engine.index.store import Store

NOTES = {
    "notes/Note.md": "the original plan, pelicans\n",
    "notes/Budget.md": "the budget, quokkas\n",
    "Inbox.md": "inbox, narwhals\n",
    "Ideas.md": "ideas, axolotls\n",
    "Journal.md": "journal, wombats\n",
    "Report.md": "report, capybaras\n",
    "Meeting 2.md": "second meeting, honestly named, ocelots\n",  # no Meeting.md beside it
    "Chapter (1).md": "chapter one, honestly named, tapirs\n",  # no Chapter.md beside it
    "Q4-2026.md": "quarter four, honestly named, dugongs\n",  # no Q4.md beside it
}
COPIES = {  # copy -> (tool, original): the unambiguous shapes, left out of the index
    "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md": ("Syncthing", "notes/Note.md"),
    "notes/Budget (Ann's conflicted copy 2026-12-04).md": ("Dropbox", "notes/Budget.md"),
    "Report (conflicted copy 2026-12-04 101500).md": ("Nextcloud", "Report.md"),
}
# Google Drive's `Note (1).md`, iCloud's `Note 2.md` and OneDrive's `Note-PC.md` are also the names Obsidian and
# people give real notes (`Untitled 2`, a copied note): beside their would-be original, they are copies only
# when the two read as versions of one note (AMBIGUOUS_COPIES); these share no line with it and stay notes.
LOOKALIKES = {
    "Inbox (1).md": "Inbox.md",
    "Ideas-DESKTOP-ABC123.md": "Ideas.md",
    "Journal 2.md": "Journal.md",
}
PLAN = "---\ntitle: Plan\ntags: [q4]\n---\n# Plan\n\n- ship the importer\n- write the docs\n- cut the release\n"
AMBIGUOUS_COPIES = {  # copy -> (tool, original, text): another device's version of the original
    "plans/Plan (1).md": ("Google Drive", "plans/Plan.md", PLAN.replace("write the docs", "write the guide")),
    "plans/Plan 2.md": ("iCloud", "plans/Plan.md", PLAN + "- tell the team, herons\n"),
    "plans/Plan-LAPTOP-7Q2.md": ("OneDrive", "plans/Plan.md", PLAN.replace("cut the release", "herons first")),
}
TEMP = [
    ".syncthing.Note.md.tmp",
    "notes/~syncthing~Budget.md.tmp",
    "~$Report.md",
    "notes/.~Note.md",
    "upload.tmp",
    ".stfolder",
    ".stversions/notes/Note~20261203-090000.md",
    ".dropbox.cache/old.md",
    "notes/.Budget.md.~1a2b3c",
    "Ideas.md.!sync",
]


def _sync_vault(vault: Vault) -> None:
    for rel, text in NOTES.items():
        vault.write(rel, text)
    for rel, (tool, _original) in COPIES.items():
        vault.write(rel, f"the {tool} copy, conflicting words flamingos\n")
    for rel in LOOKALIKES:
        vault.write(rel, "a note with a copy's shape of name, gannets\n")
    for rel in TEMP:
        vault.write(rel, "half a download, flamingos\n")
    vault.write("plans/Plan.md", PLAN)
    for rel, (_tool, _original, text) in AMBIGUOUS_COPIES.items():
        vault.write(rel, text)


def _search(store: Store, *words: str) -> list[str]:
    return [h.path for h in store.index.search(list(words), limit=50).hits]


def test_conflict_copies_are_reported_with_their_originals_and_never_indexed(vault: Vault, cache_dir: Path) -> None:
    _sync_vault(vault)
    with Store(cache_dir) as store:
        report = reconcile(vault.root, store)
        indexed = store.index.paths()
        notes = set(NOTES) | set(LOOKALIKES) | {"plans/Plan.md"}
        assert indexed == notes, "the notes, honest names included; no copy, no temp file"
        assert report.added == len(notes) and report.errors == []
        reasons = {s["path"]: s["reason"] for s in report.skipped}
        copies = {rel: (tool, orig) for rel, (tool, orig, _text) in AMBIGUOUS_COPIES.items()} | COPIES
        assert reasons == {rel: f"conflict-copy: {tool} copy of {orig}" for rel, (tool, orig) in copies.items()}
        assert _search(store, "herons") == []  # five tools' copies, none indexed
        assert _search(store, "flamingos") == []  # the copies' and the temp files' words are nowhere
        assert _search(store, "ocelots") == ["Meeting 2.md"] and _search(store, "tapirs") == ["Chapter (1).md"]
        assert sorted(_search(store, "gannets")) == sorted(LOOKALIKES)

        # the copy goes once the owner has compared it and deleted it; an unchanged pass still names the rest
        (vault.root / "Report (conflicted copy 2026-12-04 101500).md").unlink()
        again = reconcile(vault.root, store)
        assert again.changed == 0 and len([s for s in again.skipped if s["reason"].startswith("conflict-copy")]) == 5

        # a file event naming a copy (the watcher's pass over a few paths) leaves it out as well
        copy = "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md"
        only = reconcile(vault.root, store, only={copy, "~$Report.md", "Meeting 2.md", "plans/Plan 2.md"})
        assert only.changed == 0 and sorted(s["path"] for s in only.skipped) == sorted([copy, "plans/Plan 2.md"])
        assert store.index.paths() == notes


def test_a_name_of_a_copys_shape_stays_a_note_beside_a_different_note_of_the_original_name(vault: Vault) -> None:
    vault.write("Meeting 2.md", "---\ntitle: Meeting 2\n---\nsecond meeting\n- budget\n")
    vault.write("Meeting.md", "---\ntitle: Meeting\n---\nfirst meeting\n- hiring\n")
    walk = walk_vault(vault.root)
    assert set(walk.files) == {"Meeting.md", "Meeting 2.md"} and walk.skipped == []
    vault.write("Meeting 2.md", "---\ntitle: Meeting\n---\nfirst meeting\n- hiring, from the phone\n")
    walk = walk_vault(vault.root)  # now a version of Meeting.md, as iCloud leaves one
    assert set(walk.files) == {"Meeting.md"}
    assert walk.skipped == [{"path": "Meeting 2.md", "reason": "conflict-copy: iCloud copy of Meeting.md"}]


def test_the_walk_finds_every_copy_of_the_pattern_table(vault: Vault) -> None:
    from test_synctools import BESIDE, CONFLICT_TABLE

    for rel in BESIDE | {path for path, _tool, _original in CONFLICT_TABLE}:
        vault.write(rel, "words\n")
    walk = walk_vault(vault.root)
    copies = {  # every file holds the same words: the ambiguous shapes beside their originals are copies too
        path: f"conflict-copy: {tool} copy of {original}" for path, tool, original in CONFLICT_TABLE if tool
    }
    assert {s["path"]: s["reason"] for s in walk.skipped} == copies
    assert set(walk.files) == (BESIDE | {path for path, _t, _o in CONFLICT_TABLE}) - set(copies)


def test_temp_files_and_placeholders_are_never_committed_and_an_evicted_note_stays(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "vault", {"notes/Note.md": "pelicans\n", "notes/Keep.md": "kept\n"})
    vault = Vault(repo)
    for rel in TEMP:
        vault.write(rel, "half a download\n")
    vault.write("notes/Note.sync-conflict-20261204-101500-ABCDEF7.md", "the other device's version\n")
    (repo / "notes/Keep.md").unlink()  # a real deletion, committed
    (repo / "notes/Note.md").unlink()  # evicted by iCloud: its placeholder lies beside it
    vault.write("notes/.Note.md.icloud", "bplist00 placeholder")

    result = committer(repo).commit_cycle()

    assert result.error is None and len(result.commits) == 1
    committed = set(result.commits[0].paths)
    assert committed == {"notes/Keep.md", "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md"}
    assert tree(repo) == {"notes/Note.md", "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md"}
    assert not any(rel in committed for rel in TEMP) and "notes/.Note.md.icloud" not in committed
    assert committer(repo).commit_cycle().commits == []  # nothing left to commit, cycle after cycle


def test_an_evicted_note_stays_in_the_index_and_searchable(vault: Vault, cache_dir: Path) -> None:
    vault.write("notes/Note.md", "the plan, pelicans\n")
    vault.write("notes/Other.md", "other\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        (vault.root / "notes/Note.md").unlink()
        vault.write("notes/.Note.md.icloud", "placeholder")

        full = reconcile(vault.root, store)
        assert (full.deleted, full.changed) == (0, 0)
        assert _search(store, "pelicans") == ["notes/Note.md"]
        only = reconcile(vault.root, store, only={"notes/Note.md", "notes/.Note.md.icloud"})
        assert (only.deleted, only.changed) == (0, 0)
        assert _search(store, "pelicans") == ["notes/Note.md"]

        # downloaded again, edited on this device: indexed as any note; deleted for real: gone
        (vault.root / "notes/.Note.md.icloud").unlink()
        vault.write("notes/Note.md", "the plan, pelicans and puffins\n")
        assert reconcile(vault.root, store).updated == 1
        assert _search(store, "puffins") == ["notes/Note.md"]
        (vault.root / "notes/Note.md").unlink()
        assert reconcile(vault.root, store).deleted == 1
        assert _search(store, "pelicans") == []


CONFLICTED = (
    "# Plan\n\nShared line.\n<<<<<<< HEAD\nShip on Monday, kingfishers.\n=======\nShip on Friday, kingfishers.\n"
    ">>>>>>> origin/main\n"
)


def test_a_note_with_conflict_markers_is_held_back_and_named(vault: Vault, cache_dir: Path) -> None:
    vault.write("plan.md", "# Plan\n\nShip on Monday, herons.\n")
    vault.write("howto.md", "How a conflict looks:\n\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\negrets\n")
    with Store(cache_dir) as store:
        first = reconcile(vault.root, store)
        assert first.added == 2 and _search(store, "egrets") == ["howto.md"]  # markers in a code block

        vault.write("plan.md", CONFLICTED)  # a merge left its markers in the note
        vault.write("new.md", CONFLICTED.replace("Plan", "New"))
        report = reconcile(vault.root, store)
        assert report.changed == 0
        assert {"path": "plan.md", "reason": "conflict-markers"} in report.skipped
        assert {"path": "new.md", "reason": "conflict-markers"} in report.skipped
        assert _search(store, "kingfishers") == []  # never indexed with its markers
        assert _search(store, "herons") == ["plan.md"]  # the version last read stays
        assert "new.md" not in store.index.paths()

        vault.write("plan.md", "# Plan\n\nShip on Friday, kingfishers.\n")  # resolved
        assert reconcile(vault.root, store).updated == 1
        assert _search(store, "kingfishers") == ["plan.md"]


def test_status_names_conflict_copies_and_conflicted_notes(cli, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "vault", {"notes/Note.md": "pelicans\n", "Journal.md": "journal\n"})
    vault = Vault(repo)
    vault.write("notes/Note.sync-conflict-20261204-101500-ABCDEF7.md", "other device\n")
    vault.write("Report (conflicted copy 2026-12-04 101500).md", "other device\n")
    vault.write("plan.md", CONFLICTED)
    args = ("--vault", str(repo), "--index", str(tmp_path / "idx"))
    assert cli("reindex", *args, "--no-dense").code == 0

    status = cli("status", *args, "--json").json()
    copies = next(y for y in status["yellow"] if y.startswith("sync-conflicts: "))
    assert copies.startswith("sync-conflicts: 2 conflict copies left by a file-sync tool")
    assert "Report (conflicted copy 2026-12-04 101500).md (Nextcloud copy of Report.md)" in copies
    assert "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md (Syncthing copy of notes/Note.md)" in copies
    assert copies.endswith("compare each with its original, keep what you want, delete the copy")
    marked = next(y for y in status["yellow"] if y.startswith("merge-conflicts: "))
    assert "1 note holds unresolved git conflict markers" in marked and ": plan.md;" in marked
    assert "resolve the merge" in marked and status["red"] == []
    text = cli("status", *args).out
    assert "yellow sync-conflicts: 2 conflict copies" in text and "yellow merge-conflicts: 1 note" in text

    (repo / "Report (conflicted copy 2026-12-04 101500).md").unlink()
    (repo / "notes/Note.sync-conflict-20261204-101500-ABCDEF7.md").unlink()
    vault.write("plan.md", "# Plan\n\nresolved\n")
    assert cli("reindex", *args, "--no-dense").code == 0
    status = cli("status", *args, "--json").json()
    assert not any(y.startswith(("sync-conflicts", "merge-conflicts")) for y in status["yellow"])


def test_a_file_that_changes_between_the_walk_and_the_read_waits_for_the_next_pass(
    vault: Vault, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("a.md", "steady\n")
    vault.write("syncing.md", "the first half of a long note, ")
    real_walk = walk_vault

    def walk_then_the_sync_client_writes(root: Path) -> WalkResult:
        walk = real_walk(root)
        with open(root / "syncing.md", "a", encoding="utf-8") as f:
            f.write("and its second half, cormorants\n")
        return walk

    monkeypatch.setattr(reconcile_module, "walk_vault", walk_then_the_sync_client_writes)
    with Store(cache_dir) as store:
        report = reconcile(vault.root, store)
        assert report.added == 1 and report.skipped == [{"path": "syncing.md", "reason": "still-changing"}]
        assert store.index.paths() == {"a.md"}
        monkeypatch.setattr(reconcile_module, "walk_vault", real_walk)
        after = reconcile(vault.root, store)
        assert after.added == 1 and after.skipped == []
        assert _search(store, "cormorants") == ["syncing.md"]


def test_a_file_whose_size_or_mtime_moves_during_the_read_is_held(vault: Vault) -> None:
    path = vault.write("n.md", "some words\n")
    st = path.stat()
    key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    assert prepare(vault.root, "n.md", key, None, "obsidian").doc is not None
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # same bytes, the mtime moved on
    assert prepare(vault.root, "n.md", key, None, "obsidian").held == "still-changing"


def test_a_file_written_to_while_it_is_read_is_held(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    path = vault.write("n.md", "the first half, ")
    st = path.stat()
    key = (st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)
    real_read = os.read
    appended = []

    def read_while_the_sync_client_appends(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        if chunk and not appended:  # the first chunk read, then the rest of the file lands
            with open(path, "a", encoding="utf-8") as f:
                f.write("and the second half\n")
            appended.append(True)
        return chunk

    monkeypatch.setattr(os, "read", read_while_the_sync_client_appends)
    assert prepare(vault.root, "n.md", key, None, "obsidian").held == "still-changing"
