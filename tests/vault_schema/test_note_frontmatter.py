"""The note model on awkward bytes: encodings, BOMs, fence pairs, broken or hostile YAML, CRLF, the real vaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPORA, md_files
from note_helpers import MTIME_ISO, fm, parse

from agentmd.vault_schema import (
    YamlRefused,
    fenced_blocks,
    inline_tags,
    load_yaml,
    parse_note,
    section_text,
    sections,
    split_frontmatter,
)

# --- bytes and fences ----------------------------------------------------------------------------------------


def test_non_utf8_bytes_are_replaced_and_flagged() -> None:
    data = "---\ntitle: Café\n---\nLatin-1 text: café #tag\n".encode("latin-1")
    note = parse(data)
    assert note.decode_error
    assert "decode_error" in note.flags
    assert note.title == "Caf\ufffd"
    assert "\ufffd" in note.text
    assert note.tags == ("tag",)


@pytest.mark.parametrize("data", [b"\xff\xfe\x00\x00", b"\x80" * 100, b"---\n\xff: \xfe\n---\n\xc3", b"\xed\xa0\x80"])
def test_garbage_bytes_never_raise(data: bytes) -> None:
    note = parse(data)
    assert note.decode_error


def test_utf8_bom_is_skipped() -> None:
    note = parse(b"\xef\xbb\xbf" + fm("title: With BOM\ntags: [b]").encode())
    assert note.frontmatter_error is None
    assert note.title == "With BOM"
    assert note.tags == ("b",)
    assert not note.decode_error
    assert not parse(b"\xef\xbb\xbfplain").text.startswith("\ufeff")


def test_empty_file() -> None:
    note = parse(b"", path="inbox/empty-note.md")
    assert note.title == "empty note"
    assert (note.body, note.text, note.tags, note.aliases) == ("", "", (), ())
    assert dict(note.frontmatter) == {}
    assert note.flags == ()
    assert (note.captured, note.captured_source) == (MTIME_ISO, "mtime")


@pytest.mark.parametrize(
    "data",
    [
        "---\ntitle: never closed\n\nBody #tag\n",
        "---\n",
        "---",
        "--- \ntitle: x\n",
        "----\ntitle: x\n----\nbody\n",
        "\n---\ntitle: x\n---\nbody\n",
        "text first\n---\ntitle: x\n---\n",
    ],
)
def test_no_closed_leading_fence_means_all_body(data: str) -> None:
    note = parse(data)
    assert dict(note.frontmatter) == {}
    assert note.frontmatter_error is None
    assert note.text == data
    assert note.body == data
    assert note.title == "note"


def test_unclosed_frontmatter_body_is_indexed() -> None:
    note = parse("---\ntitle: never closed\n\nBody #tag\n")
    assert note.tags == ("tag",)
    assert "never closed" in note.body


@pytest.mark.parametrize(
    ("data", "yaml_text", "body"),
    [
        ("---\n---\nbody\n", "", "body\n"),
        ("---\na: 1\n...\nbody\n", "a: 1\n", "body\n"),
        ("---\na: 1\n---", "a: 1\n", ""),
        ("---  \na: 1\n---  \nbody", "a: 1\n", "body"),
        ("---\na: 1\n---\n---\nb: 2\n---\n", "a: 1\n", "---\nb: 2\n---\n"),
    ],
)
def test_split_frontmatter(data: str, yaml_text: str, body: str) -> None:
    split = split_frontmatter(data)
    assert (split.yaml_text, split.body) == (yaml_text, body)


def test_frontmatter_that_is_a_list_is_an_error() -> None:
    note = parse("---\n- a\n- b\n---\nBody #tag\n")
    assert note.frontmatter_error is not None
    assert "list" in note.frontmatter_error
    assert "frontmatter_error" in note.flags
    assert note.tags == ("tag",)
    assert note.text == "Body #tag\n"


@pytest.mark.parametrize("yaml_text", ["just a string", "42", "~", ""])
def test_scalar_or_empty_frontmatter(yaml_text: str) -> None:
    note = parse(f"---\n{yaml_text}\n---\nbody\n")
    assert dict(note.frontmatter) == {}
    if yaml_text in ("~", ""):
        assert note.frontmatter_error is None
    else:
        assert "not a mapping" in (note.frontmatter_error or "")


def test_broken_yaml_still_indexes_the_body() -> None:
    data = "---\ntitle: Good\ntags: [a, b\nstatus: archived\n---\nThe body stays searchable #inline\n"
    note = parse(data, path="notes/broken-yaml.md")
    assert note.frontmatter_error is not None
    assert "at line 4," in note.frontmatter_error  # the file line where the parser gave up: `status: archived`
    assert "fix the YAML syntax" in note.frontmatter_error
    assert dict(note.frontmatter) == {}
    assert note.title == "broken yaml"
    assert note.tags == ("inline",)
    assert note.wall is None
    assert "The body stays searchable" in note.body
    assert "title: Good" in note.body  # the frontmatter's text is still searchable
    assert note.text == "The body stays searchable #inline\n"


@pytest.mark.parametrize(
    "yaml_text",
    [
        "title: 'unterminated",
        "a: b: c",
        "\tindented: with tab",
        "key: [1, 2\nother: 3",
        "x: !!python/object/apply:os.system ['true']",
        "x: !custom tag",
        "x: !!bool maybe",
        "x: !!int notanumber",
        "x: *undefined_alias",
        "a: 1\na: 2\n? [x]\n: y",
        "x: 0x" + "f" * 400,  # a number too large to turn into text
        "x: \x00",
    ],
)
def test_unreadable_yaml_is_an_error_not_an_exception(yaml_text: str) -> None:
    note = parse(f"---\n{yaml_text}\n---\nbody\n")
    assert note.frontmatter_error
    assert note.text == "body\n"


def test_duplicate_keys_keep_the_last() -> None:
    assert parse(fm("a: 1\na: 2")).frontmatter["a"] == 2


def test_crlf_line_endings() -> None:
    data = "---\r\ntitle: Windows\r\ntags: [win, crlf]\r\nstatus: archived\r\n---\r\n# Heading\r\nText #inline\r\n"
    note = parse(data)
    assert note.frontmatter_error is None
    assert note.title == "Windows"
    assert note.tags == ("win", "crlf", "inline")
    assert note.wall == "archived"
    assert note.text == "# Heading\r\nText #inline\r\n"
    assert note.body_line == 5
    assert [(s.level, s.heading) for s in sections(note.text)] == [(1, "Heading")]
    assert section_text(note.text, "heading") == "Text #inline"


def test_crlf_fenced_code() -> None:
    text = "```yaml\r\nkey: 1\r\n```\r\n#after\r\n"
    assert [(b.info, b.content) for b in fenced_blocks(text)] == [("yaml", "key: 1\r\n")]
    assert inline_tags(text) == ["after"]


def test_frontmatter_values_are_plain_data() -> None:
    note = parse(fm("d: 2024-01-02\nt: 2024-01-02 03:04:05\nn: null\nf: 1.5\nb: yes\n2024-01-01: k"))
    assert dict(note.frontmatter) == {
        "d": "2024-01-02",
        "t": "2024-01-02T03:04:05",
        "n": None,
        "f": 1.5,
        "b": True,
        "2024-01-01": "k",
    }


def test_load_yaml_is_strict_where_parse_note_is_tolerant() -> None:
    assert load_yaml("") == {}
    assert load_yaml("a: [1, {b: c}]") == {"a": [1, {"b": "c"}]}
    with pytest.raises(YamlRefused, match="not valid YAML at line 2, column 1"):
        load_yaml("a: [")
    with pytest.raises(YamlRefused, match="not valid YAML at line 11, column 1"):
        load_yaml("a: [", first_line=10)
    assert sorted(load_yaml("s: !!set {a, b}")["s"]) == ["a", "b"]


# --- the real vaults -------------------------------------------------------------------------------------------


def test_every_corpus_note_parses() -> None:
    assert CORPORA.is_dir(), f"the shared corpora are missing at {CORPORA}"
    paths = sorted(md_files(CORPORA))
    assert len(paths) >= 4265
    with_frontmatter = errors = non_ascii = 0
    for rel in paths:
        file = CORPORA / rel
        note = parse_note(rel, file.read_bytes(), file.stat().st_mtime_ns)
        assert note.path == rel
        assert (CORPORA / Path(note.path)).is_file()  # the path leads back to the file, non-ASCII names too
        assert note.title
        assert note.captured_day > 0
        non_ascii += not rel.isascii()
        with_frontmatter += bool(note.frontmatter)
        errors += note.frontmatter_error is not None
    assert non_ascii > 150
    assert with_frontmatter > 1200  # SOURCES.md counts 1,248 notes with frontmatter
    assert errors <= with_frontmatter // 100
