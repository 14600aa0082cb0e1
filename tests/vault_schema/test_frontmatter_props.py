"""Property tests for frontmatter: no input crashes a parse, plain YAML round-trips, hostile YAML is refused fast."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentmd.vault_schema import Note, YamlRefused, load_yaml, parse_note, split_frontmatter

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HOSTILE_SECONDS = 1.0  # generous: each refusal takes milliseconds

# Text that looks like YAML and Markdown, so the parsers' edge cases are reached more often than with random text.
YAML_ALPHABET = st.sampled_from([*"abcxyz019 :-[]{},&*!|>#'\"?%@`~\\\n\t\r.", "\ufeff", "é", "\x00", "\u2028"])
yamlish = st.text(YAML_ALPHABET, max_size=300)
any_text = st.text(max_size=300)


def check_note(note: Note, path: str) -> None:
    """What every parse returns, whatever the input."""
    assert isinstance(note, Note)
    assert note.path == path
    assert note.title
    assert note.captured_source in ("captured", "date", "created", "mtime")
    assert note.captured_day > 0
    assert note.wall in (None, "archived", "superseded", "staged")
    assert all(isinstance(t, str) and t for t in note.tags)
    assert all(isinstance(a, str) and a for a in note.aliases)
    json.dumps(dict(note.frontmatter))  # plain data: safe to store and to print
    if note.frontmatter_error is not None:
        assert dict(note.frontmatter) == {}
    assert note.text in note.body


@SETTINGS
@given(data=st.binary(max_size=2000))
@example(data=b"---\n\xff\xfe: [\n---\n\x80")
@example(data=b"\xef\xbb\xbf---\r\na: 1\r\n---\r\n")
def test_parse_note_never_raises_on_bytes(data: bytes) -> None:
    check_note(parse_note("notes/any.md", data, 0), "notes/any.md")


@SETTINGS
@given(text=any_text)
def test_parse_note_never_raises_on_text(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    note = parse_note("n.md", data, 1_700_000_000 * 10**9)
    check_note(note, "n.md")


@SETTINGS
@given(yaml_text=st.one_of(yamlish, any_text), body=st.one_of(yamlish, any_text), crlf=st.booleans())
@example(yaml_text="date: 2024-02-30", body="", crlf=False)
@example(yaml_text="x: !!bool maybe", body="", crlf=False)
@example(yaml_text="x: !!timestamp nope", body="", crlf=False)
@example(yaml_text="x: 0x" + "f" * 4000, body="", crlf=False)
@example(yaml_text="? 0x" + "f" * 4000 + "\n: 1", body="", crlf=False)
@example(yaml_text="t: " + ":".join(["59"] * 3000), body="", crlf=False)
def test_parse_note_never_raises_with_a_frontmatter_block(yaml_text: str, body: str, crlf: bool) -> None:
    text = f"---\n{yaml_text}\n---\n{body}"
    if crlf:
        text = text.replace("\n", "\r\n")
    note = parse_note("dir/note-name.md", text.encode("utf-8", "surrogatepass"), 0)
    check_note(note, "dir/note-name.md")
    if split_frontmatter(text).yaml_text is not None:  # a closed block: the body is what follows it
        assert note.text == split_frontmatter(text).body


@SETTINGS
@given(yaml_text=st.one_of(yamlish, any_text))
def test_load_yaml_returns_plain_data_or_refuses(yaml_text: str) -> None:
    try:
        value = load_yaml(yaml_text)
    except YamlRefused as exc:
        assert str(exc)
        return
    assert isinstance(value, dict)
    assert all(isinstance(k, str) for k in value)
    json.dumps(value)


# --- round trip ------------------------------------------------------------------------------------------------

keys = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
# PyYAML folds NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR (YAML 1.1 line breaks) when it reads them back.
safe_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x85\u2028\u2029"), max_size=40)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
    safe_text,
    st.dates(),
    st.datetimes(),  # naive: YAML reads a timestamp without an offset back as naive
)
values = st.one_of(scalars, st.lists(scalars, max_size=5))


def expected(value: object) -> object:
    """What load_yaml gives back for a value: dates and date-times become ISO strings."""
    if isinstance(value, list):
        return [expected(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


@SETTINGS
@given(data=st.dictionaries(keys, values, max_size=8), body=any_text)
def test_safe_dump_round_trips(data: dict[str, object], body: str) -> None:
    dumped = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    want = {k: expected(v) for k, v in data.items()}
    assert load_yaml(dumped) == want
    text = f"---\n{dumped}---\n{body}"
    assert split_frontmatter(text).yaml_text == dumped
    note = parse_note("rt.md", text.encode("utf-8"), 0)
    assert note.frontmatter_error is None
    assert dict(note.frontmatter) == want
    assert note.text == body


@SETTINGS
@given(
    title=safe_text.filter(lambda s: s.strip()), tags=st.lists(st.from_regex(r"[a-z][a-z0-9/-]{0,10}", fullmatch=True))
)
def test_title_and_tags_round_trip(title: str, tags: list[str]) -> None:
    dumped = yaml.safe_dump({"title": title, "tags": tags}, allow_unicode=True)
    note = parse_note("stem-name.md", f"---\n{dumped}---\n".encode(), 0)
    assert note.frontmatter_error is None
    if not (title.strip().startswith("[[") and title.strip().endswith("]]")):
        assert note.title == title.strip()
    assert "stem name" in note.title_terms
    assert note.tags == tuple(dict.fromkeys(tags))


# --- hostile YAML ----------------------------------------------------------------------------------------------


def billion_laughs(levels: int, width: int) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


HOSTILE: dict[str, Callable[[], str]] = {
    "billion laughs, 9 levels of 9 aliases": lambda: billion_laughs(9, 9),
    "alias bomb under the alias cap (8 x 8)": lambda: billion_laughs(8, 8),
    "recursive alias": lambda: "a: &a [*a, *a]\n",
    "python tag": lambda: "x: !!python/object/apply:os.system ['echo pwned']\n",
    "python name tag": lambda: "x: !!python/name:os.system\n",
    "1 MB block": lambda: "x: " + "a" * (1 << 20) + "\n",
    "1 MB of lines": lambda: "".join(f"k{i}: value\n" for i in range(80_000)),
    "10,000-deep flow nesting": lambda: "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "10,000-deep flow mappings": lambda: "x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
    "unclosed 10,000-deep nesting": lambda: "x: " + "[" * 10_000 + "\n",
    "huge single-line key (under the size cap)": lambda: "k" * 60_000 + ": v\n",
    "huge single-line key (over the size cap)": lambda: "k" * 200_000 + ": v\n",
    "huge number": lambda: "x: 0x" + "f" * 8_000 + "\n",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_yaml_is_refused_fast(name: str) -> None:
    text = HOSTILE[name]()
    start = time.process_time()
    with pytest.raises(YamlRefused):
        load_yaml(text)
    assert time.process_time() - start < HOSTILE_SECONDS


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_frontmatter_is_recorded_not_raised(name: str) -> None:
    data = f"---\n{HOSTILE[name]()}---\nThe body is still indexed #kept\n".encode()
    start = time.process_time()
    note = parse_note("hostile.md", data, 0)
    assert time.process_time() - start < HOSTILE_SECONDS
    assert note.frontmatter_error
    assert dict(note.frontmatter) == {}
    assert note.text == "The body is still indexed #kept\n"
    assert note.tags == ("kept",)


def test_backtick_runs_in_the_body_parse_fast() -> None:
    """Inline-code stripping must stay linear: runs of many different lengths once took seconds per few KB."""
    body = " ".join("`" * k for k in range(1, 450)) + "\n#after\n"  # about 100 KB
    start = time.process_time()
    note = parse_note("ticks.md", body.encode(), 0)
    assert time.process_time() - start < HOSTILE_SECONDS
    assert note.tags == ("after",)
