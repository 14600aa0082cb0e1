"""Chunks for the text embedder: heading splits outside code, token windows with overlap, title prefix."""

from __future__ import annotations

import pytest

from agentmd.vault_schema import clean_for_embedding, embedding_chunks, token_windows


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
