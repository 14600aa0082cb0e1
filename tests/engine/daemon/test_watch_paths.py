"""The watcher's ignore rules, path by path: notes and folders pass; dot components, editor swap and backup
files and download temporaries are ignored."""

from __future__ import annotations

import pytest

from agentmd.engine.daemon.watch_paths import is_ignored

IGNORE_TABLE = [
    # plain notes and folders
    ("note.md", False),
    ("folder/note.md", False),
    ("a/b/c/deep note.md", False),
    ("folder/", False),
    ("attachments/image.png", False),
    ("2024/4913 days.md", False),
    ("4913/x.md", False),  # a folder named like vim's probe is still a folder
    ("notes/tmp.md", False),
    ("notes/tmp/x.md", False),
    ("part.md", False),
    ("sql.sql", False),
    ("diagram.svg", False),
    ("nota bene~ draft.md", False),
    ("#tag.md", False),
    ("4914", False),
    ("ünïcödé.md", False),
    # dot components
    (".git/objects/ab/cdef", True),
    (".git/", True),
    (".obsidian/workspace.json", True),
    (".trash/old.md", True),
    (".tmp.driveupload/1234", True),
    ("sub/.hidden.md", True),
    ("sub/.cache/x.md", True),
    (".DS_Store", True),
    ("./", True),
    ("../outside.md", True),
    ("", True),
    # vim
    (".note.md.swp", True),
    ("dir/.note.md.swx", True),
    (".note.md.swo", True),
    ("note.md.swp", True),
    ("note.md~", True),
    ("dir/note.md~", True),
    ("4913", True),
    ("dir/4913", True),
    ("5036", True),  # vim's next probe name when 4913 exists
    # emacs
    (".#note.md", True),
    ("#note.md#", True),
    ("dir/#note.md#", True),
    # temporaries and partial downloads
    ("note.tmp", True),
    ("NOTE.TMP", True),
    ("video.mp4.crdownload", True),
    ("file.zip.part", True),
    ("~$report.docx", True),
    ("file.kate-swp", True),
    # atomic-save temporaries
    (".note.md.tmp.123", True),
    (".something.md.tmp.4567", True),
    ("note.md.tmp", True),
    ("note.md.tmp.123", True),
    ("dir/note.md.tmp-8f3a", True),
    ("note.markdown.tmp.9", True),
]


@pytest.mark.parametrize(("rel", "expected"), IGNORE_TABLE)
def test_is_ignored(rel: str, expected: bool) -> None:
    assert is_ignored(rel) is expected
