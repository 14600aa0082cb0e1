"""What file-sync tools leave in a vault, read from a path alone: temp files, placeholders and conflict copies,
and the rules built on them (the watcher's, the note rule, the committer's scratch rule)."""

from __future__ import annotations

import pytest

from agentmd.engine.breaker import is_note
from agentmd.engine.daemon.watch_paths import is_ignored
from agentmd.engine.git.changes import is_scratch
from agentmd.engine.synctools import conflict_copy, evicted_note, is_sync_temp, may_be_copy, placeholder_of
from agentmd.vault_schema.markdown import has_conflict_markers

# The files beside the copies: an ambiguous shape is a copy only when its original is one of these.
BESIDE = {
    "notes/Note.md",
    "Note.md",
    "Meeting.md",
    "Plan.md",
    "Q4.md",
    "ADR.md",
    "a/b/Daily 2026-12-04.md",
    "Report.MD",
}

# (path, tool, original): None for a file that is no conflict copy
CONFLICT_TABLE = [
    ("notes/Note.sync-conflict-20261204-101500-ABCDEF7.md", "Syncthing", "notes/Note.md"),
    ("Other.sync-conflict-20261204-101500-ABCDEF7.md", "Syncthing", "Other.md"),  # no original needed
    ("a/Dotted.name.sync-conflict-20261204-101500-Z2X3C4V.md", "Syncthing", "a/Dotted.name.md"),
    ("Note (conflicted copy 2026-12-04).md", "Dropbox", "Note.md"),
    ("Note (Someone's conflicted copy 2026-12-04).md", "Dropbox", "Note.md"),
    ("x/Ideas (Ann Lee’s conflicted copy 2026-12-04 (1)).md", "Dropbox", "x/Ideas.md"),
    ("Note (conflicted copy 2026-12-04 101500).md", "Nextcloud", "Note.md"),
    ("Note_conflict-20261204-101500.md", "ownCloud", "Note.md"),
    ("Note (Conflicted copy Laptop 202612041015).md", "Obsidian Sync", "Note.md"),
    ("Note (Bob's conflicted copy, phone).md", "file-sync tool", "Note.md"),
    ("Note (1).md", "Google Drive", "Note.md"),
    ("notes/Note (12).md", "Google Drive", "notes/Note.md"),
    ("Note-DESKTOP-ABC123.md", "OneDrive", "Note.md"),
    ("notes/Note-LAPTOP7.md", "OneDrive", "notes/Note.md"),
    ("ADR-HOST.md", "OneDrive", "ADR.md"),
    ("Note 2.md", "iCloud", "Note.md"),
    ("Meeting 2.md", "iCloud", "Meeting.md"),
    ("a/b/Daily 2026-12-04 3.md", "iCloud", "a/b/Daily 2026-12-04.md"),
    ("Report 2.MD", "iCloud", "Report.MD"),
    # honest names: no original beside them, or a shape no tool writes
    ("Chapter (1).md", None, None),
    ("Meeting 3 notes.md", None, None),
    ("Standup 2.md", None, None),
    ("Q4-2026.md", None, None),  # a computer name has a letter
    ("Plan-2026.md", None, None),
    ("Plan-draft.md", None, None),  # lower case: no Windows computer name
    ("Plan-ABCDEFGHIJKLMNOP.md", None, None),  # 16 characters: longer than a computer name
    ("Meeting 1.md", None, None),  # iCloud counts from 2
    ("notes/Meeting 2.md", None, None),  # its original would be notes/Meeting.md, which is not there
    ("Note.md", None, None),
    ("Note.sync-conflict-2026-ABCDEF7.md", None, None),  # not Syncthing's date and time
    ("Note (copy 2026-12-04).md", None, None),
    ("Note (conflict).md", None, None),
    ("Daily 2026-12-04.md", None, None),
]


@pytest.mark.parametrize(("path", "tool", "original"), CONFLICT_TABLE)
def test_conflict_copies_name_their_tool_and_original(path: str, tool: str | None, original: str | None) -> None:
    found = conflict_copy(path, BESIDE.__contains__)
    if tool is None:
        assert found is None
    else:
        assert found is not None and (found.tool, found.original) == (tool, original)
        assert found.reason == f"conflict-copy: {tool} copy of {original}"


def test_the_cheap_first_test_lets_every_copy_through() -> None:
    """`may_be_copy` (which the reconcile walk runs inline on every note) never turns a copy away."""
    for path, tool, _original in CONFLICT_TABLE:
        name = path.rsplit("/", 1)[-1]
        if tool is not None:
            assert may_be_copy(name), path
    assert not any(may_be_copy(n) for n in ("Note.md", "daily-2026-12-04.md", "plan-draft-7.md", "Tasks (done.md"))


def test_the_table_covers_at_least_thirty_paths() -> None:
    assert len(CONFLICT_TABLE) + len(TEMP_TABLE) >= 30
    assert len(CONFLICT_TABLE) >= 30


def test_without_a_way_to_look_beside_only_the_unambiguous_shapes_are_copies() -> None:
    assert conflict_copy("Note.sync-conflict-20261204-101500-ABCDEF7.md") is not None
    assert conflict_copy("Note (conflicted copy 2026-12-04).md") is not None
    for ambiguous in ("Note (1).md", "Note 2.md", "Note-DESKTOP-ABC123.md"):
        assert conflict_copy(ambiguous) is None


def test_a_onedrive_stem_may_hold_hyphens() -> None:
    beside = {"Q4-Plan.md"}
    found = conflict_copy("Q4-Plan-DESKTOP-ABC.md", beside.__contains__)
    assert found is not None and found.original == "Q4-Plan.md"
    assert conflict_copy("Q4-Plan-DESKTOP-ABC.md", {"Q4-Plan-DESKTOP.md"}.__contains__).original == (  # type: ignore[union-attr]
        "Q4-Plan-DESKTOP.md"
    )


# (path, a sync tool's temp file, placeholder or folder?)
TEMP_TABLE = [
    (".syncthing.Note.md.tmp", True),
    ("notes/~syncthing~Note.md.tmp", True),
    (".stfolder", True),
    (".stversions/notes/Note~20261204-101500.md", True),
    (".dropbox", True),
    (".dropbox.attr", True),
    (".dropbox.cache/2026-12-04/abc", True),
    (".tmp.drivedownload/123", True),
    (".tmp.driveupload/456", True),
    ("notes/upload.tmp", True),
    ("~$Report.md", True),
    ("notes/.~Note.md", True),
    ("notes/.Note.md.~1a2b3c", True),
    (".sync_0123abcd.db", True),
    ("._sync_0123abcd.db-wal", True),
    ("notes/Note.md.!sync", True),
    ("notes/.Note.md.icloud", True),
    ("Icon\r", True),
    ("notes/Note.md", False),
    ("notes/tmp.md", False),
    ("notes/~draft.md", False),
    ("Meeting 2.md", False),
    ("sync_notes.md", False),
]


@pytest.mark.parametrize(("path", "temp"), TEMP_TABLE)
def test_temp_files_placeholders_and_tool_folders(path: str, temp: bool) -> None:
    assert is_sync_temp(path) is temp
    if temp:
        assert is_ignored(path), "the watcher ignores it"
        assert not is_note(path), "never a note"
        assert is_scratch(path), "never committed when untracked"
    else:
        assert is_note(path) and not is_ignored(path) and not is_scratch(path)


def test_a_placeholder_names_its_note_and_back() -> None:
    assert evicted_note("notes/.Note.md.icloud") == "notes/Note.md"
    assert evicted_note(".Top level.md.icloud") == "Top level.md"
    assert evicted_note(".icloud") is None and evicted_note("Note.md.icloud") is None
    assert placeholder_of("notes/Note.md") == "notes/.Note.md.icloud"
    assert placeholder_of("Note.md") == ".Note.md.icloud"


@pytest.mark.parametrize(
    ("text", "conflicted"),
    [
        ("a\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> origin/main\nb\n", True),
        ("<<<<<<< HEAD\r\nmine\r\n=======\r\ntheirs\r\n>>>>>>> 1a2b3c\r\n", True),
        ("<<<<<<< ours\nx\n||||||| base\ny\n=======\nz\n>>>>>>> theirs\n", True),  # diff3 style
        ("How a conflict looks:\n\n```\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> branch\n```\n", False),
        ("<<<<<<< HEAD\nmine, never closed\n", False),
        (">>>>>>> x\n=======\n<<<<<<< y\n", False),  # out of order
        ("Title\n=======\n\nA setext heading, no conflict.\n", False),
        ("<<<<<<<HEAD\n=======\n>>>>>>>x\n", False),  # git puts a space after the marker
        ("# Beta\n<<<<<<<< a:beta-A.md\nA\n========\nB\n>>>>>>>> b:beta-B.md\n", True),  # a conflict in a rename
        ("<<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n", False),  # markers of three lengths are no conflict git wrote
    ],
)
def test_conflict_markers_outside_code(text: str, conflicted: bool) -> None:
    assert has_conflict_markers(text) is conflicted


def test_two_versions_of_one_note_share_most_lines_and_two_notes_do_not() -> None:
    from agentmd.engine.synctools import versions_of_one_note

    note = b"---\ntitle: Plan\n---\n# Plan\n- one\n- two\n- three\n"
    assert versions_of_one_note(note, note.replace(b"two", b"deux"))
    assert versions_of_one_note(note, note + b"- four\n- five\n")
    assert not versions_of_one_note(note, b"---\ntitle: Plan 2\n---\n# Another plan\n- alpha\n- beta\n")
    assert versions_of_one_note(b"", b"\n\n") and not versions_of_one_note(b"", b"words\n")
