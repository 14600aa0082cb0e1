"""A note is found by its own name: a query that is its title, file name (Dendron hierarchies and their last
segments too), an alias or a heading puts it first, in any mode and at any length, and says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Vault
from search_helpers import lexical_search as search

from agentmd.engine.index.fulltext import name_key
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()
NOISE = "graph panel sidebar topic dendron links view " * 6


@pytest.fixture
def store(vault: Vault, cache_dir: Path):  # type: ignore[no-untyped-def]
    vault.note("vault/dendron.topic.sidebar.graph-panel.md", "Shows the links of the open note.\n", title="Graph Panel")
    vault.note("vault/dendron.topic.sidebar.md", f"The sidebar holds panels. {NOISE}\n", title="Sidebar")
    vault.note("vault/dendron.topic.graph-view.md", f"{NOISE}\nThe graph view of the whole vault.\n")
    vault.note("infra/cluster.md", "Three nodes behind the load balancer.\n", aliases=["K8s cluster"])
    vault.note("infra/kubernetes.md", "k8s cluster k8s cluster k8s cluster: how a k8s cluster schedules pods.\n")
    vault.note(
        "ops/runbook.md", "# Runbook\nStart here.\n## Rollback procedure\nRevert the release tag, then redeploy.\n"
    )
    vault.note("ops/rollback.md", "rollback procedure rollback procedure: every rollback needs a procedure.\n")
    vault.note(
        "billing/migration.md",
        "We moved in two weekends.\n",
        title="How we migrated the billing database to Postgres",
    )
    vault.note(
        "billing/notes.md",
        "How we migrated: the billing database went to Postgres; we migrated the billing database tables, "
        "migrated billing jobs and the database of billing to Postgres.\n",
    )
    vault.note("philosophy/Free Will.md", "A short note.\n")
    vault.note("philosophy/Free Will 2.md", "A stronger note on the same question.\n")
    vault.note(
        "philosophy/Determinism essay.md",
        "Does free will survive determinism in physics? Free will survives determinism: physics leaves the "
        "will free, and determinism in physics is no proof against free will.\n",
    )
    vault.note("old/Deploy checklist.md", "The old checklist.\n", status="archived")
    vault.note("ops/deploy.md", "deploy checklist deploy checklist for every deploy.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        yield s


def top(store: Store, query: str, **kw: object) -> list[dict]:
    return search(store.index, CONTRACT, SearchRequest(query=query, **kw))["results"]  # type: ignore[arg-type]


def test_names_are_read_without_case_accents_punctuation_or_md() -> None:
    assert name_key("dendron.topic.sidebar.graph-panel.md") == "dendron topic sidebar graph panel"
    assert name_key("  Café_Müller: Notes!  ") == "cafe muller notes"
    assert name_key("Hume's Beliefs") == name_key("humes beliefs")
    assert name_key("...") == ""


@pytest.mark.parametrize("mode", ["fusion", "and"])
def test_a_file_name_read_as_words_finds_its_note_first(store: Store, mode: str) -> None:
    for query in ("dendron topic sidebar graph panel", "Dendron.Topic.Sidebar.Graph-Panel.md"):
        first = top(store, query, mode=mode)[0]
        assert (first["note"], first["name"]) == ("vault/dendron.topic.sidebar.graph-panel.md", "file name")
        assert first["path"] == first["note"]


def test_a_dendron_hierarchys_last_segments_and_the_title_name_the_note(store: Store) -> None:
    first = top(store, "sidebar graph panel")[0]
    assert (first["note"], first["name"]) == ("vault/dendron.topic.sidebar.graph-panel.md", "file name")
    first = top(store, "graph panel")[0]
    assert (first["note"], first["name"]) == ("vault/dendron.topic.sidebar.graph-panel.md", "title")


def test_an_alias_names_its_note(store: Store) -> None:
    results = top(store, "K8s Cluster!")
    assert (results[0]["note"], results[0]["name"]) == ("infra/cluster.md", "alias")
    assert "name" not in results[1]


def test_a_heading_points_at_its_section(store: Store) -> None:
    first = top(store, "Rollback procedure")[0]
    assert first["path"] == "ops/runbook.md#Rollback procedure"
    assert first["name"] == "heading" and first["section"] == "Runbook > Rollback procedure"
    assert "Revert the release tag" in first["snippet"]


def test_one_word_that_is_only_a_heading_names_no_note(vault: Vault, cache_dir: Path) -> None:
    # a prompt of one word ("fix it" reduces to "fix") that some note's section is called names a part of many
    # notes, not one; two words that a heading is still name its section, and one word that is a title its note
    vault.note("lessons/tz.md", "# Timezone bug\n\n## Cause\nNaive dates.\n\n## Fix now\nStore UTC.\n")
    vault.note("tools/fix.md", "A note called fix.\n", title="Fix")
    vault.note("lessons/other.md", "# Other\n\n## Cause\nA race.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        assert s.index.name_hits("cause") == []
        assert [h.hit.path for h in s.index.name_hits("fix now")] == ["lessons/tz.md"]
        assert [(h.hit.path, h.kind) for h in s.index.name_hits("fix")] == [("tools/fix.md", "title")]


def test_a_long_title_is_a_name_not_a_question(store: Store) -> None:
    results = top(store, "how we migrated the billing database to postgres", explain=True)
    assert (results[0]["note"], results[0]["name"]) == ("billing/migration.md", "title")
    assert {k: results[0]["explain"]["name"][k] for k in ("kind", "match")} == {"kind": "title", "match": "exact"}
    assert results[0]["explain"]["rank_score"] >= results[1]["explain"]["rank_score"]


def test_two_notes_of_one_name_exact_before_prefix(store: Store) -> None:
    results = top(store, "free will", explain=True)
    assert [r["note"] for r in results[:2]] == ["philosophy/Free Will.md", "philosophy/Free Will 2.md"]
    assert [r["explain"]["name"]["match"] for r in results[:2]] == ["exact", "prefix"]
    assert top(store, "Free Will 2")[0]["note"] == "philosophy/Free Will 2.md"


def test_notes_of_the_same_name_follow_their_lexical_score(vault: Vault, cache_dir: Path) -> None:
    vault.note("a/Setup.md", "Setup of the tool.\n")
    vault.note("b/Setup.md", "Setup: the setup steps, setup again, setup once more.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        results = search(s.index, CONTRACT, SearchRequest("setup"))["results"]
    assert [r["note"] for r in results] == ["b/Setup.md", "a/Setup.md"]
    assert all(r["name"] == "title" for r in results)


def test_a_question_containing_a_title_is_answered_by_content(store: Store) -> None:
    results = top(store, "does free will survive determinism in physics")
    assert results[0]["note"] == "philosophy/Determinism essay.md"
    assert not any("name" in r for r in results)


def test_a_walled_note_is_not_named_unless_asked(store: Store) -> None:
    assert "old/Deploy checklist.md" not in {r["note"] for r in top(store, "deploy checklist")}
    first = top(store, "deploy checklist", include_archived=True)[0]
    assert (first["note"], first["name"]) == ("old/Deploy checklist.md", "title")


def test_per_note_keeps_the_named_note_s_other_sections(store: Store) -> None:
    results = top(store, "rollback procedure", per_note=2)
    assert results[0]["path"] == "ops/runbook.md#Rollback procedure"
    assert len([r for r in results if r["note"] == "ops/runbook.md"]) <= 2
    assert len({r["path"] for r in results}) == len(results)


def test_hybrid_keeps_the_named_note_first(store: Store, vault: Vault) -> None:
    from search_helpers import search as any_search

    from agentmd.engine.index.embedder import shared_embedder
    from agentmd.engine.index.vector_refresh import refresh
    from agentmd.engine.index.vectors import VectorStore
    from agentmd.engine.search.hybrid import DenseArm

    embedder = shared_embedder()
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    refresh(vectors, vault.root, hashes)
    vectors.embed_pending(embedder, 100)
    arm = DenseArm(vectors, embedder)
    for query, note, kind in [
        ("K8s cluster", "infra/cluster.md", "alias"),
        ("dendron topic sidebar graph panel", "vault/dendron.topic.sidebar.graph-panel.md", "file name"),
        ("free will", "philosophy/Free Will.md", "title"),
    ]:
        request = SearchRequest(query, mode="hybrid", limit=3, explain=True)
        res = any_search(store.index, CONTRACT, request, dense=arm)
        assert res["dense"]["used"] is True
        first = res["results"][0]
        assert (first["note"], first["name"]) == (note, kind) and first["cosine"] is not None
        assert first["explain"]["rank_score"] >= max(r["explain"]["rank_score"] for r in res["results"])
        assert first["score"] >= 0.9  # a note the query names keeps at least NAME_CONFIDENCE
    heading = any_search(store.index, CONTRACT, SearchRequest("rollback procedure", mode="hybrid"), dense=arm)
    assert heading["results"][0]["path"] == "ops/runbook.md#Rollback procedure"


def test_a_deleted_note_names_nothing_though_the_dictionary_holds_its_names(vault: Vault, cache_dir: Path) -> None:
    vault.note("tides/Tide Tables North.md", "When the water turns.\n")
    for i in range(20):  # notes beside it in its segment, which stays when the note is deleted
        vault.note(f"tides/other{i}.md", "Nothing about the name.\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        assert [n.hit.path for n in s.index.name_hits("tide tables north")] == ["tides/Tide Tables North.md"]
        assert [n.exact for n in s.index.name_hits("tide tables")] == [False]  # a title's beginning
        (vault.root / "tides/Tide Tables North.md").unlink()
        reconcile(vault.root, s)  # the note is deleted; its segment, and so its names' terms, may stay
        assert s.index.name_hits("tide tables north") == [] and s.index.name_hits("tide tables") == []


def test_more_notes_of_one_name_than_the_limit_show_the_best_of_them(vault: Vault, cache_dir: Path) -> None:
    for i in range(6):
        vault.note(f"n{i}/Setup.md", "Setup of the tool. " + "setup again. " * i + "\n## Steps\nrun it\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        shown = search(s.index, CONTRACT, SearchRequest("setup", limit=3))["results"]
        every = search(s.index, CONTRACT, SearchRequest("setup", limit=6))["results"]
    assert [r["note"] for r in shown] == ["n5/Setup.md", "n4/Setup.md", "n3/Setup.md"]
    assert shown == every[:3] and all(r["name"] == "title" and r["section"] is None for r in every)
