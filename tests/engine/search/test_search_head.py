"""A question's ranking read from the top of the list: the index answers with the beginning of the list only when
that beginning is provably the same as the full list's, and the searcher asks for the full list when it reads
past it. Every answer is compared with the full one."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from conftest import Vault
from search_helpers import lexical_search as search

from agentmd.engine.index.fulltext import HitList
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import planning, searcher
from agentmd.engine.search.result import SearchResponse
from agentmd.engine.search.rows import fill, row_terms
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()
QUESTION = "does kelp grow where water meets the tide on a rocky shore"
FILLER = " ".join(f"filler{i}" for i in range(60))


def listed(store: Store, query: str, head: int | None) -> HitList:
    request = SearchRequest(query=query)
    how = planning.plan(store.index, request)
    assert how.min_match == 2 and how.sufficient, "the query must be read as a question with a rare word"
    return store.index.search(
        query.split(),
        limit=searcher.OVERFETCH,
        groups=how.groups,
        weights=how.weights,
        boosts=how.boosts,
        min_match=how.min_match,
        sufficient=how.sufficient,
        head=head,
    )


def rows(found: HitList) -> list[tuple[float, int, int]]:
    return [(score, addr.segment_ord, addr.doc) for score, addr in found.scored]


def shore_vault(vault: Vault, *, loud_single_word: bool = False) -> None:
    vault.note("kelp.md", "Kelp forests.\n")  # the rare word: 1 note in 161
    for i in range(40):
        vault.note(f"shore{i:02d}.md", f"water tide shore rocky {'tide ' * (i % 3)}entry {i}\n")
    for i in range(120):  # one common word each, in long notes: they score low and the rule turns them away
        vault.note(f"water{i:03d}.md", f"water {FILLER} entry {i}\n")
    if loud_single_word:  # one word of the question, in two notes (not rare), alone in a short note: it outscores
        # the notes holding four words of the question, and the rule turns it away
        vault.note("loud.md", "meets meets meets\n")
        vault.note("meets.md", f"meets {FILLER}\n")


def test_the_head_is_the_beginning_of_the_full_list(vault: Vault, cache_dir: Path) -> None:
    shore_vault(vault)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        full, head = listed(s, QUESTION, None), listed(s, QUESTION, 5)
        assert not full.partial and head.partial
        assert len(head) == 5 and rows(head) == rows(full)[:5]
        assert (head.matched, head.hidden) == (full.matched, full.hidden)


def test_a_loud_single_word_note_is_taken_out_of_the_head(vault: Vault, cache_dir: Path) -> None:
    # `loud.md` leads the any-word ranking on one word that is not rare; the rule turns it away, so the head
    # reads the notes holding that word alone and takes them out
    shore_vault(vault, loud_single_word=True)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        full, head = listed(s, QUESTION, None), listed(s, QUESTION, 5)
        assert head.partial and len(head) == 5 and rows(head) == rows(full)[:5]
        assert (head.matched, head.hidden) == (full.matched, full.hidden)
        paths = {full.load(i).path for i in range(len(full))}
        assert "loud.md" not in paths and "kelp.md" in paths  # one common word does not admit a note


def test_more_loud_notes_than_the_head_holds_make_the_index_answer_in_full(vault: Vault, cache_dir: Path) -> None:
    # three notes hold `meets` alone and outscore every admitted note but the rare word's: reading two of them
    # cannot show that the third scores less than the second kept note, so the index answers in full
    shore_vault(vault)
    for i in range(3):
        vault.note(f"loud{i}.md", "meets meets meets meets meets\n")
    vault.note("meets.md", f"meets {FILLER}\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        full, head = listed(s, QUESTION, None), listed(s, QUESTION, 2)
        assert not head.partial and rows(head) == rows(full)
        assert not any(full.load(i).path.startswith("loud") for i in range(len(full)))


def ask(store: Store, query: str, how: planning.Plan, head: int | None) -> HitList:
    return store.index.search(
        query.split(),
        limit=searcher.OVERFETCH,
        groups=how.groups,
        weights=how.weights,
        boosts=how.boosts,
        min_match=how.min_match,
        sufficient=how.sufficient,
        head=head,
    )


@pytest.mark.parametrize("rare", [True, False], ids=["with-a-rare-word", "common-words-only"])
def test_the_head_is_the_full_lists_beginning_on_random_vaults(vault: Vault, cache_dir: Path, rare: bool) -> None:
    """Random notes over a small vocabulary (short and long, words repeated), random questions, with a rare word
    (a note holding it qualifies alone) or of common words only: whenever the index answers with a head, it is
    the beginning of the full list, scores and order included."""
    rng = random.Random(11 if rare else 12)
    vocabulary = [f"w{i}" for i in range(14)] + ["kelp"]
    for i in range(150):
        words = rng.choices(vocabulary[:14], k=rng.randint(1, 6))
        loud = rng.random() < 0.15  # a short note of one repeated word: the rule turns it away
        spoken = " ".join(words) + (" " + FILLER if i % 3 else "")
        body = " ".join([rng.choice(vocabulary[:14])] * 3) if loud else spoken
        vault.note(f"r{i:03d}.md", body + "\n")
    vault.note("kelp.md", "kelp forests\n")
    heads = asked = 0
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        for _ in range(40):
            query = " ".join([*(["kelp"] if rare else []), *rng.sample(vocabulary[:14], rng.randint(4, 7))])
            request = SearchRequest(query=query)
            how = planning.plan(s.index, request)
            if how.min_match != 2 or bool(how.sufficient) != rare:
                continue
            asked += 1
            full = ask(s, query, how, None)
            for n in (3, 5, 10):
                head = ask(s, query, how, n)
                expected = rows(full)[:n] if head.partial else rows(full)
                assert rows(head) == expected, (query, n)
                heads += head.partial
    assert asked >= 30
    assert heads >= 20  # the head answers most of them


def test_a_loud_word_in_a_note_the_rule_admits_still_lets_the_head_answer(vault: Vault, cache_dir: Path) -> None:
    # `meets` (not rare) scores high in a short note that also holds other words of the question, so the rule
    # admits that note; the notes holding `meets` alone are long and score low: the head is still exact.
    shore_vault(vault)
    vault.note("loud.md", "meets meets meets water tide\n")
    vault.note("meets.md", f"meets {FILLER}\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        full, head = listed(s, QUESTION, None), listed(s, QUESTION, 5)
        assert head.partial and len(head) == 5 and rows(head) == rows(full)[:5]
        assert full.load(0).path == "loud.md"
        paths = {full.load(i).path for i in range(len(full))}
        assert "meets.md" not in paths  # one common word does not admit a note


def ranking(response: SearchResponse) -> list[tuple[str, float]]:
    return [(r.note, r.score) for r in response.results]  # the ranking's own score, not the confidence


def test_the_searcher_asks_again_when_it_reads_past_the_head(vault: Vault, cache_dir: Path) -> None:
    # 40 unfiled notes (multiplier below 1) lead the raw ranking; the best final scores are the filed notes
    # just below them, so the rows read run past the first max(HEAD, HEAD_TIMES * limit) = 30.
    vault.note("kelp.md", "Kelp forests.\n")
    for i in range(40):
        vault.note(f"raw{i:02d}.md", "water tide shore rocky\n", status="unfiled")
    for i in range(3):
        vault.note(f"filed{i}.md", f"water tide shore rocky entry {i}\n", status="active")
    for i in range(120):
        vault.note(f"water{i:03d}.md", f"water {FILLER} entry {i}\n")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        head = listed(s, QUESTION, 30)
        assert head.partial  # the index answers with the first 30, which hold no filed note
        assert not any(head.load(i).path.startswith("filed") for i in range(len(head)))
        request = SearchRequest(query=QUESTION, limit=2)
        shown = searcher.search(s.index, CONTRACT, request)
        whole = searcher.search(s.index, CONTRACT, request, deferred=True)  # the hybrid's way: the full list
        assert ranking(shown) == ranking(whole)
        assert [note for note, _score in ranking(shown)] == ["kelp.md", "filed0.md"]  # found past the head


def test_deferred_short_rows_made_whole_are_the_rows_of_an_ordinary_search(vault: Vault, cache_dir: Path) -> None:
    kelp = "Kelp forests grow on a rocky shore.\n\n## Tides\n\nThe tide meets kelp.\n"
    vault.note("kelp-forests.md", kelp, title="Kelp forests")  # no note named by a word of the question
    vault.note("raw.md", "water tide shore rocky\n", status="unfiled", trust="untrusted")
    vault.note("old.md", "water tide shore rocky kelp\n", captured="2024-05-01", project="beta")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        request = SearchRequest(query=QUESTION, limit=5, project="alpha")
        shown = searcher.search(s.index, CONTRACT, request).results
        deferred = searcher.search(s.index, CONTRACT, request, deferred=True).results
        # short rows: the note and its scores, the rest waits for `fill`
        assert deferred and all(r.cut is not None and r.title is None and r.status is None for r in deferred)
        assert [row_terms(s.index, r)[0] for r in deferred]  # the note's terms, read from the hit
        whole = [fill(r) for r in deferred]
    assert [r.to_json() for r in whole] == [r.to_json() for r in shown]
    assert {r.note: r.status for r in whole}["raw.md"] == "unfiled"
    assert {r.note: r.penalties for r in whole}["old.md"] == ("project_mismatch",)


def test_remembered_multipliers_follow_the_project(vault: Vault, cache_dir: Path) -> None:
    vault.note("proj-a.md", "release checklist for the service\n", project="alpha")
    vault.note("proj-b.md", "release checklist for the service\n", project="beta")
    with Store(cache_dir) as s:
        reconcile(vault.root, s)

        def penalties(**kw: Any) -> dict[str, list[str]]:
            got = search(s.index, CONTRACT, SearchRequest(query="release checklist", **kw))["results"]
            return {r["note"]: r["penalties"] for r in got}

        for _ in range(2):  # the second round reads the remembered multipliers
            assert penalties(project="alpha") == {"proj-a.md": [], "proj-b.md": ["project_mismatch"]}
            assert penalties(project="beta") == {"proj-a.md": ["project_mismatch"], "proj-b.md": []}
            assert penalties() == {"proj-a.md": [], "proj-b.md": []}
