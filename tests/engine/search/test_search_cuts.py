"""Rows cut into sections and snippets only when shown: the confidence floor drops rows before they are cut,
and the hybrid reads a row's words from the hit its search found. The answers are the ones a search that
cuts every row gives, and an edited note is read as it is now."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from conftest import Vault
from search_helpers import search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search import confidence, searcher
from agentmd.engine.search.hybrid import DenseArm
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()


class Letters:
    """Deterministic 4-dimensional vectors: counts of a, e, o and u in the text, normalised."""

    model_id = "letters"
    dim = 4

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.array(
            [[1.0 + t.count("a"), t.count("e"), t.count("o"), t.count("u")] for t in texts], dtype=np.float32
        )
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def tide_vault(vault: Vault) -> None:
    for i in range(12):
        vault.note(
            f"sea/tide{i:02d}.md",
            f"# Tides {i}\nThe opening.\n## Water\nwater tide shore {'rocky ' * (i % 4)}\n"
            f"## Other\nkelp and sand {i}\n",
        )
    for i in range(90):  # a vault of 100 notes and more: the search floor in full
        vault.note(f"sea/water{i:02d}.md", f"water {'filler ' * 40} entry {i}\n")


def cut_every_row(st: Store, request: SearchRequest) -> dict[str, Any]:
    """The lexical answer with every row cut by the search itself, then the confidence and its floor."""
    response = searcher.search(st.index, CONTRACT, request, st.catalog)
    response = confidence.annotate(st.index, request.query, response)
    floor = confidence.search_floor(st.index, CONTRACT.thresholds.search_floor)
    return confidence.apply_floor(response, floor).to_json()


def test_rows_cut_after_the_floor_are_the_rows_a_full_cut_gives(vault: Vault, cache_dir: Path) -> None:
    tide_vault(vault)
    with Store(cache_dir) as st:
        reconcile(vault.root, st)
        dropped = 0
        for query in ("water tide shore rocky", "rocky shore water at the tide", "water", "kelp sand", "filler entry"):
            request = SearchRequest(query=query, mode="fusion")
            got = search(st.index, CONTRACT, request, st.catalog)
            assert got == cut_every_row(st, request)
            assert not any("_fill" in r for r in got["results"])
            dropped += got["below_floor"]
        assert dropped  # some rows fell below the floor and were never cut
        shown = search(st.index, CONTRACT, SearchRequest("rocky shore"))["results"]
        assert shown and all(r["section"].endswith("> Water") for r in shown)  # the best section, not the opening
        assert all(r["path"].endswith("#Water") for r in shown)


def test_the_hybrid_reads_an_edited_note_as_it_is_now(vault: Vault, cache_dir: Path) -> None:
    tide_vault(vault)
    vault.note("sea/cove.md", "# Cove\nA quiet cove.\n## Notes\nnothing here yet\n")
    embedder = Letters()
    with Store(cache_dir) as st:
        reconcile(vault.root, st)
        vectors = VectorStore(cache_dir, embedder.model_id, dim=embedder.dim)

        def hybrid(query: str) -> dict[str, dict[str, Any]]:
            current = {p: h for p, (h, _c, _s) in st.catalog.hashes(st.catalog.paths()).items()}
            refresh(vectors, vault.root, current)
            while vectors.embed_pending(embedder, 64):
                pass
            got = search(
                st.index, CONTRACT, SearchRequest(query, mode="hybrid"), st.catalog, DenseArm(vectors, embedder)
            )
            assert not any("_fill" in r for r in got["results"])
            return {r["note"]: r for r in got["results"]}

        before = hybrid("quiet cove lagoon heron")
        assert before["sea/cove.md"]["word_share"] < 1.0
        vault.note("sea/cove.md", "# Cove\nA quiet cove.\n## Birds\nA heron fishes the lagoon at dawn.\n")
        reconcile(vault.root, st)
        after = hybrid("quiet cove lagoon heron")["sea/cove.md"]
        assert after["word_share"] == 1.0
        assert after["section"] == "Cove > Birds" and "heron" in after["snippet"], after
