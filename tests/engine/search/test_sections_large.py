"""A huge note's best section is found through its outline: the same heading and passage as a small note's
would be, for the words that locate it, and at a cost that does not grow with the note's sections."""

from __future__ import annotations

from pathlib import Path

from conftest import Vault
from search_helpers import lexical_search as search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import sections
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

WORDS = ("quartz", "amber", "cobalt", "saffron", "indigo", "umber", "viridian", "ochre")


def log_body(groups: int, per_group: int) -> str:
    """A long log: `# Year g` headings, each over `## Entry g.i` sections of one line."""
    parts = ["Opening words of the station log.\n\n"]
    for g in range(groups):
        parts.append(f"# Year {g}\n\nSummary of year {g}.\n\n")
        for i in range(per_group):
            parts.append(f"## Entry {g}.{i}\nreading {g}x{i} of the {WORDS[(g + i) % len(WORDS)]} gauge\n\n")
    return "".join(parts)


class Plain:
    """Analysis by lower-cased words: enough to score sections in a unit test."""

    def analyze(self, text: str) -> list[str]:
        return [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if w]

    def snippet_of(self, text: str) -> str:
        return " ".join(text.split())[:120]


def test_outline_gives_each_heading_its_parent() -> None:
    text = "intro\n# A\nx\n## B\ny\n### C\nz\n## D\nw\n# E\n"
    shape = sections.outline(text)
    assert list(shape.levels) == [1, 2, 3, 2, 1]
    assert list(shape.parents) == [-1, 0, 1, 0, -1]
    assert [text[s : text.index("\n", s)] for s in shape.starts] == ["# A", "## B", "### C", "## D", "# E"]


def test_a_large_note_shows_the_section_that_holds_the_words_with_its_heading_path() -> None:
    body = log_body(40, 400)
    assert len(body) > sections.LARGE
    plain = Plain()
    rows = sections.best(plain, plain, "log.md", body, ["reading", "31x277"], 1)
    assert rows == [("Year 31 > Entry 31.277", f"reading 31x277 of the {WORDS[(31 + 277) % 8]} gauge")]
    # words of the heading line find it too, and a word in no section falls back to the opening
    assert sections.best(plain, plain, "log.md", body, ["entry", "12.5"], 1)[0][0] == "Year 12 > Entry 12.5"
    assert sections.best(plain, plain, "log.md", body, ["nowhere"], 1)[0][0] is None


def test_a_large_note_agrees_with_the_small_note_path_on_the_same_sections() -> None:
    """The same note cut small (below LARGE) and large (above it, by adding years after the ones asked about)
    gives the same heading and snippet for words that occur once."""
    small = log_body(3, 40)
    large = small + log_body(60, 300).split("\n\n", 1)[1].replace("Year ", "Later year ")
    assert len(small) < sections.LARGE < len(large)
    plain = Plain()
    for words in (["1x7"], ["reading", "2x39"], ["summary", "year", "0"]):
        cut_small = sections.best(plain, plain, "s.md", small, words, 1)
        assert cut_small == sections.best(plain, plain, "l.md", large, words, 1)


def test_search_of_a_huge_note_links_the_deep_section(vault: Vault, cache_dir: Path) -> None:
    vault.note("log.md", log_body(30, 700), title="Station log")
    vault.note("other.md", "a note about the weather at the coast\n", title="Coast weather")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        response = search(store.index, default_contract(), SearchRequest(query="reading 29x650 gauge"))
        top = response["results"][0]
        assert top["path"] == "log.md#Entry 29.650"
        assert top["section"] == "Year 29 > Entry 29.650"
        assert "29x650" in top["snippet"]
