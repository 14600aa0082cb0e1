"""The Markdown scanner: fenced code blocks, code stripping, ATX sections."""

from __future__ import annotations

import pytest

from agentmd.vault_schema import code_lines, fenced_blocks, inline_tags, section_text, sections, strip_code

# --- markdown helpers ------------------------------------------------------------------------------------------


def test_fenced_blocks_backticks_and_tildes() -> None:
    text = "intro\n```yaml\na: 1\n```\nmiddle\n~~~ Python extra\nprint(1)\n~~~\n```\n\n```\n"
    blocks = fenced_blocks(text)
    assert [(b.info, b.content, b.start_line) for b in blocks] == [
        ("yaml", "a: 1\n", 1),
        ("Python extra", "print(1)\n", 5),
        ("", "\n", 8),
    ]
    assert [b.content for b in fenced_blocks(text, "python")] == ["print(1)\n"]
    assert [b.content for b in fenced_blocks(text, "YAML")] == ["a: 1\n"]
    assert fenced_blocks(text, "json") == []


def test_fence_closes_only_with_same_character_at_least_as_long() -> None:
    text = "````md\n```\ninner\n```\n~~~~\n`````\nafter\n"
    blocks = fenced_blocks(text)
    assert len(blocks) == 1
    assert blocks[0].info == "md"
    assert blocks[0].content == "```\ninner\n```\n~~~~\n"
    assert "after" in strip_code(text)


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "before\n~~~\ncode #notatag\n# not a heading\n"
    blocks = fenced_blocks(text)
    assert [(b.info, b.content, b.start_line) for b in blocks] == [("", "code #notatag\n# not a heading\n\n", 1)]
    assert inline_tags(text) == []
    assert [s.heading for s in sections(text)] == [""]


@pytest.mark.parametrize(
    "text",
    [
        "``` with ` backtick in info\nnot code\n",  # a backtick fence's info may not contain a backtick
        "    ```\n    indented four spaces\n    ```\n",  # indented code, not a fence
        "``\ntwo backticks\n``\n",
    ],
)
def test_not_fences(text: str) -> None:
    assert fenced_blocks(text) == []


def test_strip_code_keeps_line_count() -> None:
    text = "a\n```\nb\nc\n```\nd `e` f\n"
    stripped = strip_code(text)
    assert stripped.count("\n") == text.count("\n")
    assert "b" not in stripped.split("\n")
    assert "`e`" not in stripped


def test_code_spans_end_at_a_blank_line() -> None:
    text = "a stray ` backtick\n\n[[Kept]] and #tag\n\r\nlater `code [[x]]` end\n"
    stripped = strip_code(text)
    assert "[[Kept]]" in stripped and "#tag" in stripped
    assert "[[x]]" not in stripped
    assert inline_tags(text) == ["tag"]
    assert strip_code("` across a\nline break `") == " \n"  # one line break does not end a paragraph


def test_sections() -> None:
    text = "preamble\n# One\none text\n## Sub ##\nsub text\n```\n# not a heading\n```\n#nospace is a tag\n# Two\n"
    secs = sections(text)
    assert [(s.level, s.heading, s.start_line) for s in secs] == [
        (0, "", 0),
        (1, "One", 1),
        (2, "Sub", 3),
        (1, "Two", 9),
    ]
    assert secs[0].content == "preamble"
    assert secs[1].content == "one text"
    assert "# not a heading" in secs[2].content
    assert secs[3].content == ""
    assert [(s.level, s.content) for s in sections("")] == [(0, "")]
    assert [(s.level, s.heading) for s in sections("# Only\n")] == [(1, "Only")]


def test_section_text() -> None:
    text = "# Rules\nintro\n## Importance\nhigh\n### Detail\nmore\n## Other\nx\n# Next\ny\n"
    assert section_text(text, "importance") == "high\n\n### Detail\nmore"
    assert section_text(text, " IMPORTANCE ") == "high\n\n### Detail\nmore"
    assert section_text(text, "Rules").startswith("intro\n\n## Importance\nhigh")
    assert "y" not in (section_text(text, "Rules") or "").split("\n")
    assert section_text(text, "Next") == "y"
    assert section_text(text, "missing") is None
    assert section_text("```\n# Fenced\n```\n", "Fenced") is None
    assert section_text("# Empty\n# After\n", "Empty") == ""


def test_code_lines_marks_each_line_fenced_or_not() -> None:
    text = "prose\n```python\n# a comment\n~~~\n```\n## After\n~~~~\nunclosed\n"
    assert list(code_lines(text)) == [
        ("prose", False),
        ("```python", True),
        ("# a comment", True),
        ("~~~", True),  # another character closes nothing
        ("```", True),
        ("## After", False),
        ("~~~~", True),
        ("unclosed", True),  # an unclosed fence runs to the end
        ("", True),
    ]
    assert list(code_lines("")) == [("", False)]
