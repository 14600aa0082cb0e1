"""Which section a result points at: the query's words weighed by how few of the note's sections hold them,
then the dense arm's cosine between sections holding the same words, then density."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import Vault
from search_helpers import search

from agentmd.engine.index.embedder import shared_embedder
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search import sections
from agentmd.engine.search.hybrid import DenseArm
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract
from agentmd.vault_schema import EmbedChunk


class Plain:
    """Analysis by lower-cased words: enough to score sections in a unit test."""

    def analyze(self, text: str) -> list[str]:
        return [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if w]

    def snippet_of(self, text: str) -> str:
        return " ".join(text.split())[:120]


CHAT = (
    "A chat.\n\n"
    "## Turn 1 Caroline\nCaroline here, painting all day, painting again.\n\n"
    "## Turn 2 Melanie\nMelanie says the sunrise was lovely.\n\n"
    "## Turn 3 Caroline\nCaroline saw a sunrise too.\n\n"
    "## Turn 4 Melanie\nMelanie went for a run.\n"
)


def test_a_word_every_section_holds_does_not_choose_the_section() -> None:
    plain = Plain()
    # "caroline" is in half the turns and "painting" in one: turn 1 holds the rarer word twice over; turn 3
    # holds "caroline" and "sunrise", two words of the query, each in two turns
    best = sections.best(plain, plain, "chat.md", CHAT, ["Caroline", "painting"], 1)
    assert best[0][0] == "Turn 1 Caroline"
    # the speaker's name is in two of four turns and "run" in one: the turn with the run wins though another
    # holds the name more often
    assert sections.best(plain, plain, "chat.md", CHAT, ["Melanie", "run"], 1)[0][0] == "Turn 4 Melanie"
    # a word in every section then tells nothing, and the denser section wins
    assert sections.best(plain, plain, "chat.md", CHAT, ["turn", "painting"], 1)[0][0] == "Turn 1 Caroline"


def test_nearness_chooses_between_sections_holding_the_same_words() -> None:
    plain = Plain()
    # turns 2 and 3 each hold "sunrise" once; turn 3 is the denser (fewer words), so it wins on density alone
    assert sections.best(plain, plain, "chat.md", CHAT, ["sunrise"], 1)[0][0] == "Turn 3 Caroline"
    near = {"Turn 2 Melanie": 0.7, "Turn 3 Caroline": 0.2}
    assert sections.best(plain, plain, "chat.md", CHAT, ["sunrise"], 1, near)[0][0] == "Turn 2 Melanie"
    # nearness never outweighs the words: a section holding more of them wins whatever its cosine
    near = {"Turn 2 Melanie": 0.9, "Turn 3 Caroline": 0.1}
    assert sections.best(plain, plain, "chat.md", CHAT, ["Caroline", "sunrise"], 1, near)[0][0] == "Turn 3 Caroline"


def test_section_cosines_name_each_section_of_the_notes_asked_for() -> None:
    class Axis:
        model_id = "axis"
        dim = 2

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] if "east" in t else [0.0, 1.0] for t in texts], dtype=np.float32)

    store = VectorStore(Path("/nonexistent-agentmd-test"), "axis", dim=2)
    store.set_note(
        "a.md",
        "1",
        [EmbedChunk(0, (), "intro"), EmbedChunk(1, ("Go", "East"), "east"), EmbedChunk(2, ("West",), "west")],
    )
    store.set_note("b.md", "1", [EmbedChunk(0, (), "east")])
    store.embed_pending(Axis(), 100)
    near = store.section_cosines(np.array([1.0, 0.0], dtype=np.float32), ["a.md", "missing.md"])
    assert set(near) == {"a.md"}
    assert near["a.md"]["Go > East"] == pytest.approx(1.0, abs=0.02)
    assert near["a.md"]["West"] == pytest.approx(0.0, abs=0.02) and near["a.md"][""] == pytest.approx(0.0, abs=0.02)


def test_a_hybrid_result_points_at_the_section_nearest_in_meaning(vault: Vault, cache_dir: Path) -> None:
    vault.note(
        "art/log.md",
        "Two kinds of painting.\n\n"
        "## Class\nPainting class: painting jugs of water in hard light, painting fruit.\n\n"
        "## Weekend\nPainting outdoors: the first light of the sun rising over the water of the lake.\n\n"
        "## Chores\nCleaned the brushes and bought more canvas.\n",
        title="Art log",
    )
    vault.note("dev/ports.md", "The server listens on 127.0.0.1 port 8765 by default.", title="Daemon port")
    embedder = shared_embedder()
    with Store(cache_dir) as store:
        reconcile(vault.root, store)
        vectors = VectorStore(store.cache_dir, embedder.model_id)
        refresh(vectors, vault.root, {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()})
        vectors.embed_pending(embedder, 100)
        question = "painting the light on the water"
        contract = default_contract()
        lexical = search(store.index, contract, SearchRequest(question, limit=1), floor=0.0)
        assert lexical["results"][0]["section"] == "Class"  # the words alone: the denser section
        arm = DenseArm(vectors, embedder)
        hybrid = search(store.index, contract, SearchRequest(question, mode="hybrid", limit=1), dense=arm, floor=0.0)
        assert hybrid["results"][0]["path"] == "art/log.md#Weekend"
