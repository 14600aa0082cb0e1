"""The recall gathering (engine/search/recall.py) and the facts it reads (engine/index/digest.py): walls,
links, summaries from what reconcile stored, never from the note files."""

from __future__ import annotations

import sqlite3

import pytest

from agentmd.engine.daemon.service import Daemon
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.recall import Walls, search_and_gather, summary_of
from agentmd.engine.search.searcher import SearchRequest
from agentmd.engine.settings import Settings
from agentmd.rules import default_contract
from agentmd.vault_schema import parse_note
from agentmd.vault_schema.digest import digest, plain
from recall.helpers import usage_rows


def facts(text: str, path: str = "n.md") -> dict[str, object]:
    note = parse_note(path, text.encode("utf-8"), 0)
    return digest(note.frontmatter, note.text)


def test_frontmatter_summary_and_opening_line() -> None:
    folded = facts("---\ntitle: A\nsummary: >\n  folded summary\n  on two lines\n---\n# A\n\nBody.\n")
    assert summary_of(folded, None) == "folded summary on two lines"
    callout = facts("---\ntitle: B\n---\n# B\n\n> [!note] Callout first line\n")
    assert summary_of(callout, None) == "Callout first line"
    assert summary_of(callout, "the snippet") == "the snippet"
    assert summary_of(callout, "# B heading only") == "Callout first line"
    assert summary_of(facts("```\ncode\n```\n- first item\n"), None) == "first item"
    crlf = facts("---\r\ntitle: C\r\nsummary: The real summary.\r\n---\r\n# C\r\n\r\nBody.\r\n")
    assert summary_of(crlf, "Body.") == "The real summary."
    assert Walls().exempt("../etc/passwd") and Walls().exempt("/etc/passwd")  # never a vault note


@pytest.mark.parametrize(
    ("markdown", "prose"),
    [
        (
            "# Retry storm see [[webhook-retries]], [[a#h|the alias]] and [[charter",
            "Retry storm see webhook-retries, the alias and charter",
        ),
        ("```sql ALTER TABLE x; ``` The default waits", "The default waits"),
        ("> [!note] 1. first **bold** [text](https://x.example/y) `code`", "first bold text `code`"),
        ("- [ ] TW-4 config - [x] TW-5 cache", "TW-4 config TW-5 cache"),
        ("C# keeps #tags and version 2. Then", "C# keeps #tags and version 2. Then"),
    ],
)
def test_plain_reads_markdown_as_prose(markdown: str, prose: str) -> None:
    assert plain(markdown) == prose


def test_summaries_come_from_the_index_not_the_files(indexed: Settings) -> None:
    """Once reconciled, a note's summary is what the index stored: the file is not read again."""
    request = {"query": "ledger postgresql", "limit": 5, "mode": "fusion", "project": "ledgerline"}
    path = "memory/decisions/postgres-over-mysql.md"
    (indexed.vault / path).write_text("---\nsummary: changed on disk, not reconciled\n---\nx\n")
    _response, walls, gathered = search_and_gather(indexed, request, max_direct=5, deadline=float("inf"))
    assert walls.recall_exempt_areas == ("private",)
    by_path = {c["path"]: c for c in gathered["direct"]}
    assert by_path[path]["summary"].startswith("We chose PostgreSQL for the ledger")


def test_daemon_gathers_recall_candidates_without_counting(daemon: Daemon, indexed: Settings) -> None:
    request = SearchRequest(query="postgres journal vacuum", limit=15, project="ledgerline")
    response = daemon.search(request, count_usage=False, recall=True).to_json()
    gathered = response["recall"]
    by_path = {c["path"]: c for c in gathered["direct"]}
    assert "private/journal-thoughts.md" not in by_path
    assert "private/journal-thoughts.md: recall-exempt area" in gathered["left_out"]
    assert "memory/decisions/old-postgres-choice.md" not in by_path  # archived: walled by the search itself
    cheatsheet = by_path["references/postgres-vacuum-cheatsheet.md"]
    assert cheatsheet["project"] is None and cheatsheet["summary"].startswith("Dead tuples pile up")
    assert cheatsheet["confidence"] >= Walls.from_contract(default_contract()).recall_floor
    # the decision holds two of the three words, one of them the commonest: below the recall floor
    assert "memory/decisions/postgres-over-mysql.md" not in by_path
    assert any(x.startswith("memory/decisions/postgres-over-mysql.md: confidence") for x in gathered["left_out"])
    from agentmd.engine.index import usage

    usage.flush()
    assert usage_rows(indexed) == {}


def test_memory_search_counts_recalls(daemon: Daemon, indexed: Settings) -> None:
    from agentmd.engine.index import usage

    response = daemon.search(SearchRequest(query="webhook retries")).to_json()
    assert response["results"]
    assert usage.flush()
    assert usage_rows(indexed)["memory/conventions/webhook-retries.md"] == (0, 1)


def test_catalog_reader_never_writes(indexed: Settings) -> None:
    catalog = Catalog.reader(indexed.catalog_path)
    try:
        assert catalog.get("memory/conventions/webhook-retries.md") is not None
        with pytest.raises(sqlite3.OperationalError):
            catalog.set_meta("x", "y")
    finally:
        catalog.close()
    with pytest.raises(sqlite3.OperationalError):
        Catalog.reader(indexed.cache_dir / "missing.sqlite3")


def test_an_index_from_before_the_trust_facts_is_rebuilt(indexed: Settings) -> None:
    """An index whose schema predates the stored facts it needs now (summaries, names, trust and probe) is set
    aside and rebuilt on open."""
    from agentmd.engine.index.fulltext import SCHEMA_VERSION

    marker = indexed.index_dir / "agentmd-index.json"
    old = marker.read_text().replace(f'"schema_version": {SCHEMA_VERSION}', f'"schema_version": {SCHEMA_VERSION - 1}')
    assert old != marker.read_text()
    marker.write_text(old)
    with Store(indexed.cache_dir) as store:
        assert store.index.set_aside is not None and store.index.doc_count() == 0
        reconcile(indexed.vault, store)
        found = store.index.hit_for("memory/decisions/postgres-over-mysql.md")
        assert found is not None and found[0].facts["summary"].startswith("We chose PostgreSQL")
        assert found[0].facts["probe"] is False and "trust" in found[0].facts
