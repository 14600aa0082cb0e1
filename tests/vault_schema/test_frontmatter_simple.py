"""Simple frontmatter is read without the YAML loader, and always exactly as the loader reads it: on every
frontmatter block of the shared corpora, on values YAML reads in surprising ways, and on random blocks."""

from __future__ import annotations

import random

import pytest
from conftest import CORPORA

from agentmd.vault_schema.errors import YamlRefused
from agentmd.vault_schema.frontmatter import load_yaml, simple_mapping, split_frontmatter, yaml_mapping


def loaded(text: str) -> object:
    try:
        return yaml_mapping(text)
    except YamlRefused:
        return "refused"


def test_every_corpus_block_the_simple_reader_takes_reads_as_yaml_does() -> None:
    blocks = []
    for path in sorted(CORPORA.rglob("*.md")):
        split = split_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        if split.yaml_text is not None and split.yaml_text.strip():
            blocks.append(split.yaml_text)
    assert len(blocks) > 1000
    taken = [b for b in blocks if simple_mapping(b) is not None]
    assert len(taken) > 100  # the common case is common
    assert [b for b in taken if simple_mapping(b) != loaded(b)] == []


ROUNDS = 4000
SURPRISES = [
    "a: yes", "a: No", "a: ON", "a: off", "a: null", "a: Null", "a: ~", "on: x", "Null: x", "y: 1", "a: y",
    "a: 012", "a: 0x1F", "a: 1_000", "a: 12:30", "a: 1e5", "a: .inf", "a: -1", "a: +1", "a: 0", "a: 7",
    "a: 2025-02-30", "a: 2025-1-2", "a: 2025-01-02", "a: 2025-01-02 10:00", "a: 2025-01-02T10:00:00Z",
    "a: b: c", "a: b #c", "a: b#c", "a: 'x''y'", "a: 'it is: fine'", 'a: "x\\ny"', 'a: "q # r"', "a: ''",
    'a: ""', "a:  two  spaces", "a: it's", "a: (x)", "a: x/y", "a: e", "a: etc.", "a: a - b", "a: -",
    "a: x-", "t: [yes, b]", "t: [a, [b]]", "t: [a, ]", "t: []", "t: [ a , b ]", "t: [a b, c-d, e_f]",
    "t: [1, 2]", "t: [a,b,c]", "a:", "a:   ", "a: b\na: c", "a: b\n c: d", "- a", "a: b\n\nc: d",
    "a: b\n# note", "a: b # note", "a:\tb", "a: b\r\nc: d", "a: b\n---", "a: |\n  x", "a: >", "a: &x b",
    "a: *x", "a: !!str 1", "a: @b", "a: `b`", "a: %b", "a: b\n...", "? a", "a_b-c: d", "A: B", "é: x",
    "k" * 300 + ": v", "k" * 1100 + ": v", "a: é", "a: [é]",
    "title: The title (draft)\ndate: 2024-06-01\ntags: [x, y]\naliases: [Other name]",
]


@pytest.mark.parametrize("text", SURPRISES)
def test_values_yaml_reads_in_surprising_ways(text: str) -> None:
    simple = simple_mapping(text)
    if simple is not None:
        assert simple == loaded(text)


def test_random_blocks_read_as_yaml_does() -> None:
    rng = random.Random(16)
    keys = ["a", "title", "on", "No", "x_y", "k-1", "a b", "1a", "date"]
    values = [
        "", " ", "word", "two words", "yes", "Off", "NULL", "~", "7", "0", "012", "1_0", "3:4", "1.5", "-", "x-",
        "2024-02-29", "2023-02-29", "2024-2-9", "'q'", "'q: r'", "'it''s'", '"d"', '"e\\t"', "[a, b]", "[]",
        "[yes]", "[a, [b]]", "[a,]", "a: b", "a #b", "a#b", "(p)", "x/y", "it's", "etc.", "  lead", "trail  ",
        "é", "[é]", "*ref", "&anc v", "!tag v", "|", ">", "a  b", "b,c", "{a: b}", "[a b, c-d]",
    ]
    compared = taken = 0
    for _ in range(ROUNDS):
        lines = []
        for _ in range(rng.randint(1, 5)):
            kind = rng.random()
            if kind < 0.05:
                lines.append("")
            elif kind < 0.08:
                lines.append("  " + rng.choice(keys) + ": " + rng.choice(values))
            else:
                lines.append(rng.choice(keys) + ":" + rng.choice(["", " ", "  "]) + rng.choice(values))
        text = "\n".join(lines) + rng.choice(["", "\n"])
        simple = simple_mapping(text)
        compared += 1
        if simple is not None:
            taken += 1
            assert simple == loaded(text), text
    assert taken > 100 and compared == ROUNDS


def test_the_loader_checks_still_come_first() -> None:
    with pytest.raises(YamlRefused, match="values"):
        load_yaml("t: [" + ", ".join(["a"] * 20_001) + "]")
    assert load_yaml("title: Plain\ntags: [a, b]") == {"title": "Plain", "tags": ["a", "b"]}
