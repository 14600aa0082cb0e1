"""The vector store as the vault grows: the embedding queue's order, rows reused across edits, renames and
restarts, and hybrid search while only part of the vault has vectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import Vault

from agentmd.engine.daemon.embedding import embedding_order
from agentmd.engine.index import usage
from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.embedder import shared_embedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_codes import quantize
from agentmd.engine.index.vector_refresh import note_chunks, refresh
from agentmd.engine.index.vector_types import Coverage
from agentmd.engine.index.vectors import VectorStore, chunk_key
from agentmd.vault_schema import EmbedChunk


class Counted:
    """Deterministic 4-dimensional vectors: the text's count of x, y and z, normalised; records each call."""

    model_id = "counted"
    dim = 4

    def __init__(self, during: Callable[[], None] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.during = during

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if self.during is not None:
            during, self.during = self.during, None
            during()
        rows = np.array([[1.0, t.count("x"), t.count("y"), t.count("z")] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def chunks(*texts: str) -> list[EmbedChunk]:
    return [EmbedChunk(i, (f"part {i}",), t) for i, t in enumerate(texts)]


def store(tmp_path: Path) -> VectorStore:
    return VectorStore(tmp_path / "cache", Counted.model_id, dim=Counted.dim)


def test_the_queue_follows_the_given_order_then_the_path(tmp_path: Path) -> None:
    s = store(tmp_path)
    for n in range(5):
        s.set_note(f"n{n}.md", str(n), chunks(f"n{n} a", f"n{n} b"))
    assert s.pending_texts(3) == ["n0 a", "n0 b", "n1 a"]  # by path until told otherwise
    s.prioritise(["n3.md", "n1.md"])
    assert s.pending_texts() == ["n3 a", "n3 b", "n1 a", "n1 b", "n0 a", "n0 b", "n2 a", "n2 b", "n4 a", "n4 b"]
    embedder = Counted()
    assert s.embed_pending(embedder, 3) == 3
    assert embedder.calls == [["n3 a", "n3 b", "n1 a"]]
    assert s.pending_texts(2) == ["n1 b", "n0 a"]  # a note taken in part is finished first
    cov = s.coverage()
    assert (cov.done, cov.total, cov.notes, cov.notes_done) == (3, 10, 5, 1)
    # an edit queues the note again at its rank; a removed note leaves the queue
    s.set_note("n3.md", "3b", chunks("n3 a", "n3 changed"))
    s.remove(["n1.md"])
    assert s.pending_texts(3) == ["n3 changed", "n0 a", "n0 b"]
    while s.embed_pending(embedder, 2):
        pass
    assert not s.has_pending() and s.coverage().share == 1.0 and s.coverage().notes_done == 4


def test_the_daemon_embeds_the_most_used_notes_first_then_the_newest(tmp_path: Path, vault: Vault) -> None:
    order = embedding_order(
        {
            "old.md": "2023-01-05",
            "new.md": "2025-06-01",
            "newer.md": "2025-06-02T10:00",
            "used.md": "2020-01-01",
            "undated.md": "",
            "also-new.md": "2025-06-01",
        },
        {"used.md": (3, 1), "old.md": (0, 1)},
    )
    assert order == ["used.md", "old.md", "newer.md", "also-new.md", "new.md", "undated.md"]

    # the counts come from the catalog's usage table, as the daemon reads them before each refresh
    vault.note("a.md", "alpha", title="A", captured="2024-01-01")
    vault.note("b.md", "beta", title="B", captured="2025-01-01")
    vault.note("c.md", "gamma", title="C", captured="2023-01-01")
    cache = tmp_path / "c"
    with Store(cache) as st:
        reconcile(vault.root, st)
    usage.record(cache / "catalog.sqlite3", ["c.md"], "recall")
    with Catalog.reader(cache / "catalog.sqlite3") as catalog:
        rows = catalog.hashes(catalog.paths())
        uses = catalog.usage_counts(rows)
    assert embedding_order({p: c for p, (_h, c, _s) in rows.items()}, uses) == ["c.md", "b.md", "a.md"]


def test_known_vectors_are_reused_across_edits_renames_and_restarts(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.set_note("a.md", "1", chunks("x", "xy", "xyz"))
    s.set_note("b.md", "1", chunks("y", "xy"))  # shares a chunk with a.md
    embedder = Counted()
    while s.embed_pending(embedder, 8):
        pass
    assert sorted(t for call in embedder.calls for t in call) == ["x", "xy", "xyz", "y"]  # "xy" once
    query = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
    before = s.search(query, 2)
    # a rename (removed, then added under its new path) and an edit keep every known vector
    s.remove(["a.md"])
    assert s.set_note("moved/a.md", "1", chunks("x", "xy", "xyz")) == 0
    assert s.set_note("b.md", "2", chunks("y", "xy", "zz")) == 1
    assert s.embed_pending(embedder, 8) == 1 and embedder.calls[-1] == ["zz"]
    hits = s.search(query, 2)
    assert [h.path for h in hits] == ["b.md", "moved/a.md"] and hits[1].cosine == pytest.approx(before[0].cosine)
    assert hits[0].heading == "part 2" and hits[0].ordinal == 2
    s.save()
    again = store(tmp_path)
    assert [(h.path, h.ordinal, round(h.cosine, 3)) for h in again.search(query, 2)] == [
        (h.path, h.ordinal, round(h.cosine, 3)) for h in hits
    ]
    assert again.coverage() == s.coverage() and again.note_hashes() == {"moved/a.md": "1", "b.md": "2"}
    assert again.cosines(query, ["b.md", "gone.md"]) == {"b.md": pytest.approx(hits[0].cosine)}
    assert again.search(query, 5, allowed={"moved/a.md"})[0].path == "moved/a.md"


def test_a_note_replaced_while_its_slice_is_embedded_keeps_its_new_chunks_queued(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.set_note("a.md", "1", chunks("x", "y"))
    embedder = Counted(during=lambda: s.set_note("a.md", "2", chunks("x", "zzz")))
    assert s.embed_pending(embedder, 8) == 2
    assert s.note_hashes() == {"a.md": "2"} and s.pending_texts() == ["zzz"]
    assert s.embed_pending(embedder, 8) == 1 and embedder.calls[-1] == ["zzz"]  # "x" was kept for reuse
    assert s.coverage().share == 1.0


def test_searches_beside_the_background_embedding_see_a_consistent_store(tmp_path: Path) -> None:
    s = store(tmp_path)
    for n in range(300):
        s.set_note(f"n{n:03d}.md", str(n), chunks("x" * n, "y" * (n % 7)))
    embedder = Counted()
    errors: list[BaseException] = []
    done = threading.Event()

    def searching() -> None:
        query = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)
        try:
            while not done.is_set():
                hits = s.search(query, 5)
                assert len({h.path for h in hits}) == len(hits)
                assert [h.cosine for h in hits] == sorted((h.cosine for h in hits), reverse=True)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=searching)
    thread.start()
    try:
        while s.embed_pending(embedder, 8):
            pass
    finally:
        done.set()
        thread.join()
    assert not errors
    assert s.coverage().share == 1.0 and sum(map(len, embedder.calls)) == 306  # each distinct text once
    assert s.search(np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32), 1)[0].cosine > 0.999


class HeldWrite(VectorStore):
    """A store whose write of a save waits until told to go on (a slow disk, or megabytes of queued texts)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.writing = threading.Event()
        self.go_on = threading.Event()

    def _write(self, data: bytes) -> None:
        self.writing.set()
        assert self.go_on.wait(10), "the test never let the write go on"
        super()._write(data)


def test_searches_and_embedding_go_on_while_a_save_writes(tmp_path: Path) -> None:
    s = HeldWrite(tmp_path / "cache", Counted.model_id, dim=Counted.dim)
    for n in range(20):
        s.set_note(f"n{n:02d}.md", str(n), chunks("x" * n, "y"))
    embedder = Counted()
    s.embed_pending(embedder, 16)
    saving = threading.Thread(target=s.save)
    saving.start()
    try:
        assert s.writing.wait(10)
        answered: list[int] = []
        worker = threading.Thread(  # a search and a slice of embedding while the save's write is held
            target=lambda: answered.extend(
                [len(s.search(np.array([0.0, 1.0, 0.0, 0.0], np.float32), 3)), s.embed_pending(embedder, 8)]
            )
        )
        worker.start()
        worker.join(10)
        assert not worker.is_alive(), "the search waited on the save's write"
        assert answered[0] == 3 and answered[1] > 0
        assert s.dirty  # what was embedded after the copy is saved next time
    finally:
        s.go_on.set()
        saving.join(10)
    again = VectorStore(tmp_path / "cache", Counted.model_id, dim=Counted.dim)
    assert 0 < again.coverage().done < s.coverage().done  # the save wrote the store as it was when copied
    s.save()
    assert VectorStore(tmp_path / "cache", Counted.model_id, dim=Counted.dim).coverage().done == s.coverage().done


def test_a_scan_answers_for_the_store_it_read_and_refuses_after_any_change(tmp_path: Path) -> None:
    s = store(tmp_path)
    s.set_note("a.md", "1", chunks("x", "xx y"))
    s.set_note("b.md", "1", chunks("y"))
    embedder = Counted()
    while s.embed_pending(embedder, 8):
        pass
    query = np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32)
    scan = s.scan(query, 2)
    hits, cosines = s.search_and_score(query, 2, ["a.md", "b.md"])
    assert scan.hits == hits  # the same nearest notes as the one-pass search
    assert s.best_cosines(scan, ["a.md", "b.md", "gone.md"]) == cosines and set(cosines) == {"a.md", "b.md"}
    # a note added (rows handed out), a vector arrived, a note removed: each makes the scan stale
    s.set_note("c.md", "1", chunks("xyz"))
    assert s.best_cosines(scan, ["a.md"]) is None
    scan = s.scan(query, 2)
    s.embed_pending(embedder, 8)
    assert s.best_cosines(scan, ["a.md"]) is None
    scan = s.scan(query, 2)
    s.remove(["b.md"])
    assert s.best_cosines(scan, ["a.md"]) is None
    assert s.best_cosines(s.scan(query, 2), ["a.md", "b.md"]) == s.search_and_score(query, 2, ["a.md", "b.md"])[1]
    assert s.scan(query, 0).hits == [] and VectorStore(tmp_path / "empty", "counted", 4).scan(query, 3).hits == []


class Hashed:
    """Deterministic unit vectors drawn from each text's hash (16 dimensions)."""

    model_id = "hashed"
    dim = 16

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(text.encode("utf-8")[:8].ljust(8, b"."), "little") ^ len(text)
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.array(rows, dtype=np.float32)


def test_hybrid_cosines_stay_true_while_the_store_changes_under_the_search(vault: Vault, cache_dir: Path) -> None:
    from search_helpers import hybrid_search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    words = ["harbour", "lantern", "granite", "meadow", "copper", "willow", "ember", "tide"]
    for n in range(48):
        text = f"{words[n % 8]} {words[(n * 3) % 8]} note {n} about the {words[(n + 5) % 8]}."
        vault.note(f"notes/n{n:02d}.md", text)
    embedder = Hashed()
    with Store(cache_dir) as st:
        reconcile(vault.root, st)
        current = {p: h for p, (h, _c, _s) in st.catalog.hashes(st.catalog.paths()).items()}
        vectors = VectorStore(cache_dir, embedder.model_id, dim=embedder.dim)
        refresh(vectors, vault.root, current)
        while vectors.embed_pending(embedder, 64):
            pass
        arm, contract = DenseArm(vectors, embedder), default_contract()
        done = threading.Event()

        cut = {p: note_chunks(vault.root, p) for p in sorted(current)}

        def churn() -> None:
            # Two notes leave the store and come back in the other order, so each takes the rows the other had
            # (their vectors are reused, nothing is embedded): a scan taken before the swap reads the wrong rows
            # for both, and must be refused.
            k = 0
            paths = sorted(cut)
            while not done.is_set():
                a, b = paths[k % len(paths)], paths[(k + 1) % len(paths)]
                vectors.remove([a, b])
                for p in (a, b):
                    got = cut[p]
                    assert got is not None
                    vectors.set_note(p, got[0], got[1])
                k += 1

        thread = threading.Thread(target=churn)
        thread.start()
        try:
            answers = []
            for n in range(60):
                query = f"{words[n % 8]} and {words[(n + 3) % 8]} by the {words[(n + 6) % 8]} {n}"
                res = hybrid_search(st.index, contract, SearchRequest(query, mode="hybrid", limit=5), arm=arm)
                answers.append((query, res))
        finally:
            done.set()
            thread.join()
        checked = 0
        for query, res in answers:
            assert res["dense"]["used"] is True and res["results"], query
            qvec = embedder.embed([query])[0]
            for row in res["results"]:
                if row["cosine"] is None:
                    continue  # the note was out of the store at that moment
                true = vectors.cosines(qvec, [row["note"]])[row["note"]]
                assert row["cosine"] == pytest.approx(true, abs=1e-5), (query, row["note"])
                checked += 1
        assert checked >= 100


def test_hybrid_search_finds_a_note_without_vectors_by_its_words(vault: Vault, cache_dir: Path) -> None:
    from search_helpers import search

    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.search.searcher import SearchRequest
    from agentmd.rules import default_contract

    for n, text in enumerate(
        [
            "Bake the loaf in a hot oven for forty minutes.",
            "Preheat the oven before the bread goes in.",
            "A pizza stone holds heat in the oven.",
            "Roast vegetables at a high oven temperature.",
            "Let the dough rise twice before baking.",
            "Cool the bread on a rack after baking.",
        ]
    ):
        vault.note(f"kitchen/n{n}.md", text, title=f"Kitchen {n}")
    vault.note("studio/kiln.md", "The kiln firing schedule for cone six stoneware ramps slowly.", title="Glazes")
    embedder = shared_embedder()
    with Store(cache_dir) as st:
        reconcile(vault.root, st)
        current = {p: h for p, (h, _c, _s) in st.catalog.hashes(st.catalog.paths()).items()}
        vectors = VectorStore(cache_dir, embedder.model_id)
        vectors.prioritise(sorted(p for p in current if p != "studio/kiln.md"))
        refresh(vectors, vault.root, current)
        while vectors.pending_texts(1) and "kiln" not in vectors.pending_texts(1)[0]:
            vectors.embed_pending(embedder, 1)
        assert vectors.note_hashes().keys() == current.keys() and 0 < vectors.coverage().share < 1
        question = "what is the firing schedule of the kiln for cone six stoneware in the oven"
        res = search(
            st.index,
            default_contract(),
            SearchRequest(question, mode="hybrid", limit=3),
            dense=DenseArm(vectors, embedder),
        )
    assert res["dense"]["used"] is True and "vectors cover" in res["note"]
    top = res["results"][0]
    assert top["note"] == "studio/kiln.md" and top["arms"] == ["lexical"] and top["cosine"] is None


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_store_of_the_first_format_opens_searches_and_is_written_anew(tmp_path: Path, dtype: type) -> None:
    """A vectors.npz written before vectors were kept as int8 (float vectors, format 1; float32 in the first
    releases, float16 after) opens with its vectors and queue, searches as it did, and is saved as int8."""
    embedder = Counted()
    floats = embedder.embed(["x", "xy", "y"])
    meta = {
        "format": 1,
        "model_id": Counted.model_id,
        "dim": Counted.dim,
        "notes": [
            ["a.md", "h1", [chunk_key("x"), chunk_key("xy")], ["", "part 1"]],
            ["b.md", "h2", [chunk_key("y"), chunk_key("zz")], ["", ""]],
        ],
        "pending": {chunk_key("zz"): "zz"},
        "chunks": "all",
    }
    vectors = np.vstack([floats, np.zeros((1, Counted.dim), dtype=np.float32)]).astype(dtype)
    cache = tmp_path / "cache"
    cache.mkdir()
    np.savez(
        cache / "vectors.npz",
        meta=np.array(json.dumps(meta)),
        vectors=vectors,
        has=np.array([True, True, True, False]),
        row_note=np.array([0, 0, 1, 1], dtype=np.int32),
    )
    s = store(tmp_path)
    assert s.reset_reason is None and s.dirty
    assert s.coverage() == Coverage(3, 4, 2, 1) and s.note_hashes() == {"a.md": "h1", "b.md": "h2"}
    query = embedder.embed(["xy"])[0]
    hits = s.search(query, 2)
    assert [(h.path, h.ordinal, h.heading) for h in hits] == [("a.md", 1, "part 1"), ("b.md", 0, "")]
    assert hits[0].cosine == pytest.approx(1.0, abs=0.01) and hits[1].cosine == pytest.approx(
        float(floats[2] @ query), abs=0.01
    )
    assert s.pending() == [chunk_key("zz")] and s.embed_pending(embedder, 8) == 1
    s.save()
    with np.load(cache / "vectors.npz") as data:
        assert json.loads(str(data["meta"]))["format"] == 2 and data["vectors"].dtype == np.int8
    again = store(tmp_path)
    assert again.reset_reason is None and not again.dirty and again.coverage() == Coverage(4, 4, 2, 2)
    assert [(h.path, round(h.cosine, 4)) for h in again.search(query, 2)] == [
        (h.path, round(h.cosine, 4)) for h in s.search(query, 2)
    ]


def test_int8_vectors_keep_their_cosines_and_survive_a_second_quantizing(tmp_path: Path) -> None:
    rows = np.random.default_rng(3).standard_normal((200, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    codes, scales = quantize(rows)
    back = codes.astype(np.float32) * scales[:, None]
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    assert np.min(np.sum(back * rows, axis=1) / np.linalg.norm(back, axis=1)) > 0.9999
    again, again_scales = quantize(back)
    assert np.array_equal(again, codes) and np.allclose(again_scales, scales)
    zero_codes, zero_scales = quantize(np.zeros((1, 4), dtype=np.float32))
    assert not zero_codes.any() and zero_scales[0] == 1


def test_sameness_is_the_mean_cosine_between_two_chunks(tmp_path: Path) -> None:
    s = store(tmp_path)
    assert s.sameness() == 0.0  # no vectors yet
    s.set_note("a.md", "1", chunks("xxxx", "xxxx"))
    s.set_note("b.md", "1", chunks("xxxx"))
    s.embed_pending(Counted(), 100)
    assert s.sameness() == pytest.approx(1.0, abs=0.02)  # every chunk says the same
    for n in range(4):
        s.set_note(f"y{n}.md", "1", chunks("yyyyyyyyyyyyyyyyyyyy", "zzzzzzzzzzzzzzzzzzzz"))
    s.embed_pending(Counted(), 100)
    # 11 chunks: 3 along x, 4 along y, 4 along z (each with a little of the first axis)
    mixed = s.sameness()
    assert 0.1 < mixed < 0.5
    s.remove([f"y{n}.md" for n in range(4)])
    assert s.sameness() == pytest.approx(1.0, abs=0.02)  # read again after the count moved
