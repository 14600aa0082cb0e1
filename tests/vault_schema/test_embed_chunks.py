"""Chunks for the text embedder: heading splits outside code, token windows with overlap, title prefix."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from agentmd.engine.index.vector_refresh import note_chunks, refresh
from agentmd.engine.index.vectors import FIRST_CUT, VectorStore
from agentmd.vault_schema import clean_for_embedding, embedding_chunks, scripts, token_windows
from agentmd.vault_schema.chunks import SUMMARY_TOKENS


def test_short_text_is_one_window_with_original_spacing() -> None:
    assert token_windows("one  two\nthree") == ["one  two\nthree"]
    assert token_windows("   ") == []


def test_windows_overlap_and_the_last_ends_at_the_end() -> None:
    words = [f"w{i}" for i in range(450)]
    pieces = token_windows(" ".join(words), window=200, overlap=50)
    assert [p.split()[0] for p in pieces] == ["w0", "w150", "w300"]
    assert [len(p.split()) for p in pieces] == [200, 200, 150]
    assert pieces[-1].split()[-1] == "w449"
    with pytest.raises(ValueError):
        token_windows("a b", window=10, overlap=10)


def test_each_cjk_character_counts_as_one_token() -> None:
    pieces = token_windows("東京都に住む", window=4, overlap=1)
    assert pieces == ["東京都に", "に住む"]


def test_links_comments_tags_and_urls_are_reduced_to_their_words() -> None:
    text = "See [the guide](https://x.test/a) and [[notes/Setup|set-up]] <!-- hidden --> <b>bold</b> https://y.test"
    assert clean_for_embedding(text).split() == ["See", "the", "guide", "and", "set-up", "bold"]
    assert clean_for_embedding("[[Target#Part]]").strip() == "Target"


def test_sections_get_the_title_and_heading_path_and_fenced_hashes_are_not_headings() -> None:
    body = "Intro words.\n# Install\nRun it.\n## Linux\n```sh\n# not a heading\napt install x\n```\n# Empty\n"
    chunks = embedding_chunks(body, "My Tool")
    assert [c.heading_path for c in chunks] == [(), ("Install",), ("Install", "Linux")]
    assert chunks[0].text == "My Tool\nIntro words."
    assert chunks[2].text.startswith("My Tool > Install > Linux\n```sh\n# not a heading")
    assert [c.ordinal for c in chunks] == [0, 1, 2]


def test_long_sections_are_windowed_under_the_same_heading() -> None:
    body = "# Notes\n" + " ".join(f"w{i}" for i in range(300))
    chunks = embedding_chunks(body, "T")
    assert len(chunks) == 2
    assert all(c.text.startswith("T > Notes\n") for c in chunks)


def test_a_note_with_only_a_title_still_has_one_chunk() -> None:
    assert [c.text for c in embedding_chunks("", "Lonely title")] == ["Lonely title"]
    assert embedding_chunks("", "") == []


def test_a_notes_description_is_embedded_as_a_chunk_of_its_own() -> None:
    body = "> **{{fm.title}}** merges the active note into another.\n\n## Summary\n\n{{ fm.desc }}\n"
    fm = {"title": "Merge Note", "desc": "Merge a note into another and update all backlinks", "n": True}
    chunks = embedding_chunks(body, "Merge Note", frontmatter=fm)
    assert chunks[0].heading_path == ()
    assert chunks[0].text == "Merge Note\nMerge a note into another and update all backlinks"
    assert "**Merge Note** merges" in chunks[1].text  # Dendron's variables read as their values
    assert chunks[2].text.endswith("Merge a note into another and update all backlinks")
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert embedding_chunks(body, "Merge Note")[0].text.startswith("Merge Note\n> **{{fm.title}}**")  # no frontmatter
    assert embedding_chunks("text", "T", frontmatter={"description": ["not", "text"]})[0].text == "T\ntext"
    long = " ".join(f"w{i}" for i in range(500))
    assert len(embedding_chunks("x", "T", frontmatter={"summary": long})[0].text.split()) == 1 + SUMMARY_TOKENS


def test_a_store_cut_the_older_way_is_cut_again_once(tmp_path: Path) -> None:
    """A store saved before its notes' descriptions were embedded gains their summary chunks at the next
    refresh, keeps the vectors of the chunks whose text is unchanged, and is not cut again after that."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("---\ntitle: A\ndesc: what a is for\n---\nbody of a\n", encoding="utf-8")
    (vault / "b.md").write_text("---\ntitle: B\n---\nbody of b\n", encoding="utf-8")
    current = {"a.md": "ha", "b.md": "hb"}
    cache = tmp_path / "cache"
    old = VectorStore(cache, _Counting.model_id, 4)
    for path in current:  # as the first cut left it: no summary chunk
        got = note_chunks(vault, path)
        assert got is not None
        old.set_note(path, current[path], [c for c in got[1] if "what a is for" not in c.text])
    old.chunks = FIRST_CUT
    model = _Counting()
    old.embed_pending(model, 100)
    old.save()
    assert model.seen == 2
    again = VectorStore(cache, _Counting.model_id, 4)
    assert again.chunks == FIRST_CUT
    assert refresh(again, vault, current, chunks=scripts.ALL_CHUNKS) == (2, 0)
    again.embed_pending(model, 100)
    assert model.seen == 3  # only the new summary chunk was embedded
    again.save()
    reopened = VectorStore(cache, _Counting.model_id, 4)
    assert reopened.chunks == scripts.ALL_CHUNKS and reopened.coverage().done == 3
    assert refresh(reopened, vault, current, chunks=scripts.ALL_CHUNKS) == (0, 0)


class _Counting:
    """An embedder that counts the texts it is given and returns fixed unit vectors."""

    model_id = "counting"
    dim = 4

    def __init__(self) -> None:
        self.seen = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += len(texts)
        out = np.zeros((len(texts), 4), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def test_a_huge_note_embeds_a_bounded_spread_of_its_chunks() -> None:
    """A note of thousands of sections (a long log) gives at most MAX_EMBED_CHUNKS chunks, spread from its first
    section to its last, each as it would be cut anyway."""
    from agentmd.vault_schema.chunks import MAX_EMBED_CHUNKS

    body = "".join(f"## Entry {i}\n\nthe gauge read {i} at dawn\n\n" for i in range(5000))
    chunks = embedding_chunks(body, "Station log")
    whole = embedding_chunks(
        "".join(f"## Entry {i}\n\nthe gauge read {i} at dawn\n\n" for i in range(400)), "Station log"
    )
    assert len(chunks) == MAX_EMBED_CHUNKS and len(whole) == 400  # a note under the cap keeps every chunk
    assert chunks[0].text.startswith("Station log > Entry 0\n") and chunks[-1].text.startswith(
        "Station log > Entry 4999\n"
    )
    steps = [b.ordinal - a.ordinal for a, b in itertools.pairwise(chunks)]
    assert min(steps) >= 9 and max(steps) <= 10  # evenly spread, never two of one place
