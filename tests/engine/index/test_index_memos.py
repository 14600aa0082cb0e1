"""What the index remembers between searches (the terms of each run of text, word document counts, a note's
terms, parsed queries, documents' paths and facts, a note's sections) gives exactly what it would compute
afresh, and is forgotten when the index changes; the guard's one look at the folder serves its interval."""

from __future__ import annotations

from pathlib import Path

from conftest import CORPORA, Vault
from search_helpers import search

from agentmd.engine.index.fulltext import SearchIndex
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract


def test_analysis_by_runs_equals_the_analyzer_on_every_corpus_note(tmp_path: Path) -> None:
    index = SearchIndex(tmp_path / "ix")
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(CORPORA.rglob("*.md"))]
    texts += ["naïve café — 東京タワー、ひらがな\tfoo_bar-baz x\u00a0y \u2028 z" + "w" * 90, "", "   ", "Ünïcödé"]
    assert len(texts) > 4000
    mismatched = [i for i, t in enumerate(texts) if index.analyze(t) != index.analyze_whole(t)]
    assert mismatched == []
    sample = texts[0]
    assert index.term_set(sample) == set(index.analyze_whole(sample))


def test_doc_freq_and_note_terms_follow_every_change(vault: Vault, cache_dir: Path) -> None:
    vault.note("a.md", "Zanzibar harbour tides.\n", title="Harbour")
    vault.note("b.md", "Mountain passes in winter.\n", title="Passes")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        index = store.index
        assert index.doc_freq("zanzibar") == 1
        all_terms, title = index.note_terms("b.md")
        assert "mountain" in all_terms and "zanzibar" not in all_terms and "pass" in title
        vault.note("b.md", "Zanzibar in winter.\n", title="Passes")
        reconcile(vault.root, store)
        assert index.doc_freq("zanzibar") == 2
        assert "zanzibar" in index.note_terms("b.md")[0]
        vault.remove("a.md")
        reconcile(vault.root, store)
        assert index.doc_freq("zanzibar") == 1
        assert index.note_terms("a.md") == (frozenset(), frozenset())


def test_a_note_left_as_it_was_keeps_its_terms_across_index_changes(vault: Vault, cache_dir: Path) -> None:
    vault.note("a.md", "Zanzibar harbour tides.\n", title="Harbour")
    vault.note("b.md", "Mountain passes in winter.\n", title="Passes", tags=["alps"])
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        index = store.index
        before = index.note_terms("b.md")
        vault.note("a.md", "Zanzibar harbour tides, and the ferry.\n", title="Harbour")
        reconcile(vault.root, store)  # an index change: the per-state memo is forgotten
        assert "ferri" in index.note_terms("a.md")[0]
        after = index.note_terms("b.md")
        assert after is before  # b.md reads as it did: its terms were not analysed again
        hit, hits = index.hit_for("b.md") or (None, None)
        assert hit is not None and hits is not None
        text = f"{hit.facts.get('meta') or ''}\n{hits.text_of(hit)}"
        title = index.term_set(str(hit.facts["title"]))
        fresh = title | index.term_set(text)  # what a fresh analysis gives
        assert all(t in after[0] for t in fresh) and after[1] == frozenset(title)
        assert not any(t in after[0] for t in ("zanzibar", "ferri", "spring", "passes"))
        assert "alp" in after[0] and "pass" in after[1]
        vault.note("b.md", "Mountain passes in spring.\n", title="Passes", tags=["alps"])
        reconcile(vault.root, store)
        edited = index.note_terms("b.md")
        assert "spring" in edited[0] and "winter" not in edited[0]


def test_a_reader_answers_from_the_state_it_reads(vault: Vault, cache_dir: Path) -> None:
    """A reader in another process (or another index object) reloads only when it opens; what it remembers
    always belongs to the state it reads, and a reader opened after a writer's commit counts the new note."""
    vault.note("a.md", "Zanzibar harbour tides.\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
    reader = SearchIndex(cache_dir / "index")
    try:
        assert reader.doc_freq("zanzibar") == 1
        with Store(cache_dir) as store:
            vault.note("b.md", "Zanzibar again, and its spice.\n")
            reconcile(vault.root, store)
        assert reader.doc_freq("zanzibar") == 1 == reader.doc_count()  # its own, older state, consistently
    finally:
        reader.close()
    fresh = SearchIndex(cache_dir / "index")
    try:
        assert fresh.doc_freq("zanzibar") == 2
    finally:
        fresh.close()


def test_walled_counts_come_from_one_aggregation(vault: Vault, cache_dir: Path) -> None:
    for i in range(3):
        vault.note(f"old/{i}.md", "Harbour tides log.\n", status="archived")
    vault.note("new.md", "Harbour tides today.\n")
    vault.note("other.md", "Mountain passes.\n")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        found = search(store.index, default_contract(), SearchRequest("harbour tides", mode="fusion"), store.catalog)
        assert found["matched"] == 1 and found["archived_hidden"] == 3
        assert [r["note"] for r in found["results"]] == ["new.md"]
        shown = search(
            store.index, default_contract(), SearchRequest("harbour tides", mode="fusion", include_archived=True)
        )
        assert shown["matched"] == 4 and shown["archived_hidden"] == 0


def test_counts_taken_beside_the_ranking_match_the_rows_in_every_search_shape(vault: Vault, cache_dir: Path) -> None:
    """A search counts its matches on a worker thread while it ranks them (and ranks a fused search's lists
    side by side): with a limit above the number of matches, `matched` is the number of rows, and the walls
    hide exactly the notes they count, for a two-word fused query, a question and an all-words query, with a
    day range or without."""
    import random

    from agentmd.engine.search import searcher

    rng = random.Random(7)
    words = ["harbour", "tides", "lantern", "pier", "gull", "ferry", "rope", "beacon"]
    for i in range(60):
        body = " ".join(rng.sample(words, rng.randint(1, 4))) + ".\n"
        status = "archived" if i % 5 == 0 else None
        extra = {"status": status} if status else {}
        vault.note(f"n/{i:02d}.md", body, captured=f"2026-0{1 + i % 3}-10", **extra)
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        contract = default_contract()
        hidden: list[int] = []
        shapes = [
            ("harbour tides", "fusion"),
            ("harbour tides lantern", "fusion"),  # three words: the conjunction, its pairs and the evidence list
            ("harbour tides lantern pier gull", "fusion"),
            ("gull rope", "and"),
        ]
        for query, mode in shapes:
            for after in (None, "2026-02-01"):
                closed = searcher.search(
                    store.index, contract, SearchRequest(query, mode=mode, limit=200, after=after)
                ).to_json()
                opened = searcher.search(
                    store.index,
                    contract,
                    SearchRequest(query, mode=mode, limit=200, after=after, include_archived=True),
                ).to_json()
                assert closed["matched"] == len(closed["results"]) > 0, (query, after)
                assert opened["matched"] == len(opened["results"]) == closed["matched"] + closed["archived_hidden"]
                assert opened["archived_hidden"] == 0
                hidden.append(closed["archived_hidden"])
        assert sum(hidden) > 0 and len([h for h in hidden if h]) >= 4, hidden


def test_remembered_facts_and_sections_follow_every_change(vault: Vault, cache_dir: Path) -> None:
    """A search remembers each document's path and facts per reader state and each note's sections by its
    text; an edit (a commit and reload) is seen by the very next search, as if nothing were remembered."""
    contract = default_contract()
    request = SearchRequest("harbour tides", mode="fusion")
    vault.note("a.md", "# Intro\n\nNothing here.\n\n## Tides\n\nHarbour tides at dawn.\n", title="Old title")
    vault.note("b.md", "Harbour tides and ferries.\n", title="Ferries")
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        first = search(store.index, contract, request, store.catalog)
        again = search(store.index, contract, request, store.catalog)  # answered from what the first read
        assert again == first
        row = next(r for r in first["results"] if r["note"] == "a.md")
        assert row["title"] == "Old title" and row["path"] == "a.md#Tides" and "dawn" in row["snippet"]
        vault.note("a.md", "# Intro\n\nHarbour tides at noon.\n\n## Tides\n\nNothing now.\n", title="New title")
        reconcile(vault.root, store)
        edited = search(store.index, contract, request, store.catalog)
        row = next(r for r in edited["results"] if r["note"] == "a.md")
        assert row["title"] == "New title" and row["path"] == "a.md" and "noon" in row["snippet"]
        found = store.index.search(["ferries"], limit=5)
        hit = found.load(0)
        assert hit.path == "b.md" and found.load(0).doc is None  # the second load is answered from memory
        assert "ferries" in found.text_of(hit) and found.text_of(found.load(0)) == found.text_of(hit)


def test_one_look_at_the_index_folder_serves_the_guards_interval(tmp_path: Path) -> None:
    """Damage is seen by the first check after the interval since the last look (and at once by a refresh);
    checks within it answer from that look."""
    import os

    from agentmd.engine.index.fulltext.schema import IndexDoc
    from agentmd.engine.index.integrity import IndexGuard

    folder = tmp_path / "index"
    index = SearchIndex(folder)
    index.apply([IndexDoc(path="n.md", title="n", meta="", body="otters", text="t", wall=None, day=20260101)])
    index.close()
    now = [100.0]
    guard = IndexGuard(folder, min_interval=1.0, clock=lambda: now[0])
    assert guard.refresh() is None and guard.check() is None
    victim = next(p for p in sorted(folder.iterdir()) if p.suffix == ".store")
    os.truncate(victim, victim.stat().st_size - 1)
    now[0] += 0.5
    assert guard.check() is None  # within the interval of the refresh's look
    now[0] += 0.6
    assert "changed size" in (guard.check() or "")
    assert guard.check() is not None  # damage, once seen, stays
    fresh = IndexGuard(folder, min_interval=1.0, clock=lambda: now[0])
    assert fresh.refresh() is not None  # a refresh always looks
