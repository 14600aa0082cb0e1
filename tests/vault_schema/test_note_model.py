"""The note model: one Markdown file parsed into an immutable `Note` (SPEC §4 and the foundation issue)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from note_helpers import MTIME_ISO, fm, parse

from agentmd.vault_schema import (
    WALLS,
    inline_tags,
    is_progress_log,
    parse_date,
    parse_note,
    spaced_stem,
)
from agentmd.vault_schema.note import PROGRESS_HEAD_BYTES

# --- the value itself ----------------------------------------------------------------------------------------


def test_note_is_immutable() -> None:
    note = parse(fm("title: T\ntags: [a]"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.title = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        note.frontmatter["title"] = "other"  # type: ignore[index]
    assert isinstance(note.tags, tuple)
    assert isinstance(note.aliases, tuple)


def test_path_is_kept_vault_relative_and_posix() -> None:
    note = parse("x", path="Projects/Ünïcödé ノート/2024 plan.md")
    assert note.path == "Projects/Ünïcödé ノート/2024 plan.md"
    assert note.title == "2024 plan"


def test_hash_and_size_describe_the_bytes_on_disk() -> None:
    a, b = parse("one"), parse("two")
    assert a.content_hash != b.content_hash
    assert parse("one").content_hash == a.content_hash
    assert a.size == 3


# --- title -----------------------------------------------------------------------------------------------------


def test_frontmatter_title_and_stem_are_both_indexed() -> None:
    note = parse(fm("title: Deploy Checklist"), path="ops/release-steps_v2.md")
    assert note.title == "Deploy Checklist"  # display title is the frontmatter title
    assert "Deploy Checklist" in note.title_terms
    assert "release steps v2" in note.title_terms


def test_title_falls_back_to_spaced_stem() -> None:
    note = parse("just text", path="ops/release-steps_v2.md")
    assert note.title == "release steps v2"
    assert note.title_terms == "release steps v2"


def test_title_equal_to_stem_is_not_indexed_twice() -> None:
    note = parse(fm("title: Release Steps"), path="release-steps.md")
    assert note.title == "Release Steps"
    assert note.title_terms == "release steps"


def test_non_string_title_is_text() -> None:
    assert parse(fm("title: 2024")).title == "2024"


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("vault/dendron.topic.cli.md", "dendron topic cli"),
        ("a.b.c.md", "a b c"),
        ("dir.with.dots/plain.md", "plain"),
        ("x--y__z..w.md", "x y z w"),
        ("Mixed Case-Name.MD", "Mixed Case Name"),
        ("tar 压缩命令.md", "tar 压缩命令"),
    ],
)
def test_spaced_stem(path: str, stem: str) -> None:
    assert spaced_stem(path) == stem
    assert parse("", path=path).title == stem


# --- tags and aliases ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "tags"),
    [
        ("tags: [alpha, beta]", ("alpha", "beta")),
        ("tags:\n  - alpha\n  - beta", ("alpha", "beta")),
        ("tags: alpha, beta", ("alpha", "beta")),
        ("tags: 'alpha, #beta'", ("alpha", "beta")),
        ("tags: '#alpha'", ("alpha",)),
        ("tags: alpha beta", ("alpha", "beta")),
        ("tags: project/sub/leaf", ("project/sub/leaf",)),
        ("tags: ['#a/b', c-d]", ("a/b", "c-d")),
        ("tag: solo", ("solo",)),
        ("tags:", ()),
        ("tags: []", ()),
    ],
)
def test_frontmatter_tags(yaml_text: str, tags: tuple[str, ...]) -> None:
    note = parse(fm(yaml_text, body="no inline tags here\n"))
    assert note.frontmatter_error is None
    assert note.tags == tags


def test_nested_and_kebab_tags_are_spaced_in_meta() -> None:
    note = parse(fm("tags: [project/agent-memory]\naliases: [AM]"))
    assert note.tags == ("project/agent-memory",)
    assert note.meta.split("\n") == ["AM", "project agent memory"]


def test_inline_tags_follow_frontmatter_tags_without_duplicates() -> None:
    note = parse(fm("tags: [alpha]", body="Text #beta and #alpha again, then #gamma/delta.\n"))
    assert note.tags == ("alpha", "beta", "gamma/delta")


@pytest.mark.parametrize(
    "body",
    [
        "```\n#fenced\n```\n",
        "~~~python\n#fenced\n~~~\n",
        "````\n```\n#fenced\n```\n````\n",
        "use `#inline` code\n",
        "use ``#inline ` code`` spans\n",
        "# Heading\n",
        "## Heading two\n",
        "###### Deep heading ######\n",
        "see https://example.org/page#anchor for more\n",
        "see https://example.org/#anchor for more\n",
        "a [markdown link](#anchor) to a heading\n",
        "a [[Note#Heading]] link and [[#Local heading]]\n",
        "the year #2024 and #2024-01-02 and #12_34\n",
        "an email me#example or C#sharp inside words\n",
        "an html entity &#8212; here\n",
        "",
    ],
)
def test_not_inline_tags(body: str) -> None:
    assert inline_tags(body) == []
    assert parse(body).tags == ()


@pytest.mark.parametrize(
    ("body", "tags"),
    [
        ("#tag at line start\n", ["tag"]),
        ("word #tag.\n", ["tag"]),
        ("(#paren) and list, #comma; #semi\n", ["paren", "comma", "semi"]),
        ("> #quoted in a callout\n", ["quoted"]),
        ("- [ ] #task do it\n", ["task"]),
        ("#nested/tag/ and #kebab-tag-\n", ["nested/tag", "kebab-tag"]),
        ("#y2024 and #2024y and #_private\n", ["y2024", "2024y", "_private"]),
        ("#Heading without a space is a tag in Obsidian\n", ["Heading"]),
        ("#标签 and #café\n", ["标签", "café"]),
        ("#dup #dup #dup\n", ["dup"]),
        ("tag\tafter\ttab\t#tab\n", ["tab"]),
        ("after code `x` #real\n", ["real"]),
        ("```\ncode\n```\n#after-fence\n", ["after-fence"]),
    ],
)
def test_inline_tags(body: str, tags: list[str]) -> None:
    assert inline_tags(body) == tags


def test_inline_tags_are_read_from_the_body_only() -> None:
    note = parse(fm("summary: 'not #atag'", body="body #btag\n"))
    assert note.tags == ("btag",)


@pytest.mark.parametrize(
    ("yaml_text", "aliases"),
    [
        ("aliases: [One, Two]", ("One", "Two")),
        ("aliases:\n  - One\n  - Two", ("One", "Two")),
        ("aliases: One, Two", ("One", "Two")),
        ("aliases: Just One", ("Just One",)),
        ("alias: Singular Key", ("Singular Key",)),
        ("aliases: [Dup, Dup, Other]", ("Dup", "Other")),
        ("aliases: [2024, ' padded ']", ("2024", "padded")),
        ("aliases:", ()),
    ],
)
def test_aliases(yaml_text: str, aliases: tuple[str, ...]) -> None:
    note = parse(fm(yaml_text))
    assert note.aliases == aliases
    for alias in aliases:
        assert alias in note.meta.split("\n")


# --- scalar fields -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "project"),
    [
        ("project: [[Proj]]", "Proj"),  # unquoted: YAML reads a nested list
        ("project: [[Big Project|alias]]", "Big Project"),
        ('project: "[[Proj]]"', "Proj"),
        ('project: "[[Proj|alias]]"', "Proj"),
        ("project: Proj", "Proj"),
        ("project: [first, second]", "first"),
        ("project:", None),
        ("project: {a: 1}", None),
    ],
)
def test_project_from_wikilink(yaml_text: str, project: str | None) -> None:
    note = parse(fm(yaml_text))
    assert note.frontmatter_error is None
    assert note.project == project


def test_scalar_fields() -> None:
    note = parse(
        fm(
            "status: active\nlifecycle: pinned\ntype: convention\nsuperseded_by: [[Newer Note]]\n"
            "project: agentmd\ncustom: [1, 2]"
        )
    )
    assert (note.status, note.lifecycle, note.type, note.project) == ("active", "pinned", "convention", "agentmd")
    assert note.superseded_by == "Newer Note"
    assert note.frontmatter["custom"] == [1, 2]
    assert parse("no frontmatter").status is None


def test_body_is_frontmatter_text_then_body() -> None:
    note = parse(fm("type: convention\ntags: [x]", body="# Rule\nAlways do it.\n"))
    assert "type: convention" in note.body
    assert note.body.endswith("# Rule\nAlways do it.\n")
    assert note.text == "# Rule\nAlways do it.\n"
    assert "convention" not in note.text
    assert note.body_line == 4  # 0-based line of "# Rule"


# --- captured --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "captured", "source"),
    [
        ("captured: 2024-03-05\ndate: 2023-01-01", "2024-03-05", "captured"),
        ("date: 2023-01-01", "2023-01-01", "date"),
        ("title: no dates", MTIME_ISO, "mtime"),
        ("captured: 2024-03-05 10:20:30", "2024-03-05T10:20:30", "captured"),
        ("captured: 2024-03-05T10:20:30Z", "2024-03-05T10:20:30+00:00", "captured"),
        ("captured: '2024-03-05T10:20'", "2024-03-05T10:20:00", "captured"),
        ("captured: '2024-03-05 10:20:30Z'", "2024-03-05T10:20:30Z", "captured"),
        ("captured: '2024-03-05T10:20:30+0100'", "2024-03-05T10:20:30+01:00", "captured"),
        ("captured: '2024-03-05T10:20:30.123-05:00'", "2024-03-05T10:20:30-05:00", "captured"),
        # invalid dates fall through to the next source
        ("captured: '2024-13-01'\ndate: 2023-01-01", "2023-01-01", "date"),
        ("captured: 2024-02-30\ndate: 2023-01-01", "2023-01-01", "date"),  # unquoted impossible date
        ("captured: yesterday\ndate: not a date", MTIME_ISO, "mtime"),
        ("captured: 20240305", MTIME_ISO, "mtime"),
        ("captured: '2024-3-5'", MTIME_ISO, "mtime"),
        ("captured: [2024-03-05]\ndate: 2023-01-01", "2023-01-01", "date"),
        ("captured:\ndate: 2023-01-01", "2023-01-01", "date"),
        ("captured: '2024-03-05T25:00'", MTIME_ISO, "mtime"),
        ("created: 2022-01-10", "2022-01-10", "created"),  # as Obsidian templates write it
        ("date: 2023-01-01\ncreated: 2022-01-10", "2023-01-01", "date"),
        ("created: 1642564062835", "2022-01-19T03:47:42Z", "created"),  # Dendron's milliseconds since 1970
    ],
)
def test_captured_precedence(yaml_text: str, captured: str, source: str) -> None:
    note = parse(fm(yaml_text))
    assert note.frontmatter_error is None
    assert (note.captured, note.captured_source) == (captured, source)
    assert note.captured_day == int(captured[:10].replace("-", ""))


@pytest.mark.parametrize(
    ("path", "yaml_text", "captured", "source"),
    [
        ("daily/2023-11-04.md", "", "2023-11-04", "title"),  # a daily note: the day it names
        ("journal/Entry of 29th Jan, 2023.md", "", "2023-01-29", "title"),
        ("notes/note.md", "title: January 29, 2023 standup", "2023-01-29", "title"),
        ("notes/Meeting 3 May 2023.md", "", "2023-05-03", "title"),
        ("notes/daily.journal.2023.02.01.md", "", "2023-02-01", "title"),  # Dendron's journal names
        ("daily/2023-11-04.md", "created: 2022-01-10", "2022-01-10", "created"),  # a date property comes first
        ("notes/Plans for 2024-06-01.md", "", MTIME_ISO, "mtime"),  # after the last save: a plan, not a date
        ("notes/2023-11-04 to 2023-11-05.md", "", MTIME_ISO, "mtime"),  # two days: neither
        ("notes/release v2023.11.04.md", "", MTIME_ISO, "mtime"),  # a version
        ("notes/2023-02-30.md", "", MTIME_ISO, "mtime"),  # no such day
        ("notes/May 2023 goals.md", "", MTIME_ISO, "mtime"),  # a month is no day
    ],
)
def test_a_whole_date_in_the_file_name_or_title_dates_a_note_without_a_date_property(
    path: str, yaml_text: str, captured: str, source: str
) -> None:
    note = parse(fm(yaml_text) if yaml_text else "# Body\n", path=path)
    assert (note.captured, note.captured_source) == (captured, source)


def test_impossible_unquoted_date_keeps_the_rest_of_the_frontmatter() -> None:
    note = parse(fm("title: Kept\ntags: [kept]\ndate: 2024-02-30"))
    assert note.frontmatter_error is None
    assert note.title == "Kept"
    assert note.tags == ("kept",)
    assert note.frontmatter["date"] == "2024-02-30"
    assert note.captured_source == "mtime"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.date(2024, 1, 2), "2024-01-02"),
        (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        ("2024-01-02", "2024-01-02"),
        (" 2024-01-02 ", "2024-01-02"),
        ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"),
        ("2024-02-29", "2024-02-29"),
        ("2023-02-29", None),
        ("0000-01-01", None),
        ("2024-01-02T24:00", None),
        (20240102, None),
        (1636492098692, "2021-11-09T21:08:18Z"),  # milliseconds since 1970, as Dendron writes `created:`
        (1636492098, "2021-11-09T21:08:18Z"),  # seconds
        (9999999999999, None),  # 2286: an id, not a moment
        (True, None),
        (None, None),
        ("", None),
    ],
)
def test_parse_date(value: object, expected: str | None) -> None:
    assert parse_date(value) == expected


def test_a_dendron_note_is_dated_by_its_created_milliseconds() -> None:
    note = parse_note("notes.office-hours.md", b"---\nid: abc\ncreated: 1636492098692\n---\n# Office hours\n", 0)
    assert note.captured == "2021-11-09T21:08:18Z" and note.captured_source == "created"


# --- walls -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yaml_text", "wall"),
    [
        ("lifecycle: archived", "archived"),
        ("status: archived", "archived"),
        ("status: Archived", "archived"),
        ("lifecycle: superseded", "superseded"),
        ("status: superseded", "superseded"),
        ("superseded_by: [[Newer]]", "superseded"),
        ("superseded_by: '[[Newer]]'\nlifecycle: active", "superseded"),
        ("lifecycle: archived\nsuperseded_by: Newer", "superseded"),
        ("lifecycle: staged", "staged"),
        ("status: staged", "staged"),
        ("lifecycle: archived\nstatus: staged", "archived"),
        ("lifecycle: active", None),
        ("status: done", None),
        ("superseded_by:", None),
        ("title: nothing", None),
        # a conflict sibling waits in plain sight, whatever the version it holds said of itself
        ("status: conflict\nconflict_of: '[[Note]]'\nsuperseded_by: '[[Newer]]'", None),
        ("status: conflict\nstatus_before_conflict: archived\nlifecycle: archived", None),
    ],
)
def test_wall(yaml_text: str, wall: str | None) -> None:
    note = parse(fm(yaml_text))
    assert note.wall == wall
    assert wall is None or wall in WALLS


def test_no_frontmatter_has_no_wall() -> None:
    assert parse("status: archived\n").wall is None  # not frontmatter, just text


# --- progress logs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("progress.md", True),
        ("notes/progress.md", True),
        ("progress-my-thing.md", True),
        ("notes/progress-report.md", True),  # `progress-<slug>.md` anywhere in the vault
        ("PROGRESS.md", True),
        ("progress-2024-q1.md", True),
        ("my-progress.md", False),
        ("progress_notes.md", False),
        ("progress-.md", False),
        ("progress-my thing.md", False),
        ("progressive.md", False),
        ("progress.md.bak", False),
        ("progress/notes.md", False),
    ],
)
def test_is_progress_log(path: str, expected: bool) -> None:
    assert is_progress_log(path) is expected


def _long_log(total: int) -> bytes:
    line = b"- 2024-01-01 did a thing, \xc3\xa9t\xc3\xa9 \xe2\x82\xac\n"  # 34 bytes with multi-byte characters
    data = b"---\ntype: log\n---\n" + line * (total // len(line) + 1)
    return data[:total]


@pytest.mark.parametrize("path", ["progress.md", "progress-my-thing.md", "notes/progress-report.md"])
def test_progress_log_is_cut_to_its_head_at_a_line_break(path: str) -> None:
    data = _long_log(200_000)
    note = parse(data, path=path)
    assert note.truncated
    assert "truncated" in note.flags
    kept = data[: data.rfind(b"\n", 0, PROGRESS_HEAD_BYTES) + 1]
    assert data[PROGRESS_HEAD_BYTES - 1 : PROGRESS_HEAD_BYTES] != b"\n"  # the cut really falls mid-line
    assert PROGRESS_HEAD_BYTES - 40 < len(kept) <= PROGRESS_HEAD_BYTES
    assert note.text.encode("utf-8") == kept.split(b"---\n", 2)[2]
    assert note.text.endswith("\n")
    assert not note.decode_error
    assert note.type == "log"  # frontmatter still read
    assert note.size == len(data)  # size and hash describe the whole file
    assert note.content_hash == parse(data, path="other.md").content_hash


def test_other_notes_are_not_truncated() -> None:
    data = _long_log(200_000)
    note = parse(data, path="my-progress.md")
    assert not note.truncated
    assert len(note.body.encode("utf-8")) > 190_000


@pytest.mark.parametrize(("size", "truncated"), [(PROGRESS_HEAD_BYTES, False), (PROGRESS_HEAD_BYTES + 1, True)])
def test_progress_log_limit_is_exact(size: int, truncated: bool) -> None:
    data = b"first line\n" + b"x" * (size - 12) + b"\n"
    note = parse(data, path="progress.md")
    assert note.truncated is truncated
    assert note.text.encode() == (b"first line\n" if truncated else data)


def test_progress_log_with_no_line_break_is_cut_at_a_character_boundary() -> None:
    data = "€".encode() * 40_000  # 3 bytes each; 88,192 is not a multiple of 3
    note = parse(data, path="progress.md")
    assert note.truncated
    assert not note.decode_error
    assert set(note.text) == {"€"}
    assert len(note.text.encode()) == PROGRESS_HEAD_BYTES - PROGRESS_HEAD_BYTES % 3
