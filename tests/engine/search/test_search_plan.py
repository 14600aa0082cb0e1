"""How a query is planned from its words and the vault's word counts (`planning.plan`), on a real index."""

from __future__ import annotations

from pathlib import Path

from conftest import Vault
from search_helpers import search

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import planning
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

CONTRACT = default_contract()


def harbour_vault(vault: Vault, notes: int) -> None:
    """`harbour`, `ferry` and `dock` in most notes (the first two in every note, `dock` in nine of ten), each note
    with words of its own; one short note holds all three and little else."""
    for i in range(notes):
        dock = " dock" if i % 10 else ""
        vault.note(f"n{i:04d}.md", f"harbour ferry{dock} word{i} other{i % 97} more{i % 13}\n")
    vault.note("pier.md", "harbour ferry dock\n")


def test_three_words_in_most_notes_are_ranked_by_their_evidence_alone(vault: Vault, cache_dir: Path) -> None:
    harbour_vault(vault, planning.COMMON_FROM)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        common = planning.plan(s.index, SearchRequest(query="harbour ferry dock"))
        assert common.groups == [["harbour", "ferry", "dock"]] and common.min_match == 2
        mixed = planning.plan(s.index, SearchRequest(query="harbour ferry word7"))
        assert len(mixed.groups) == 4 and mixed.min_match is None  # the conjunction and the three pairs
        found = search(s.index, CONTRACT, SearchRequest(query="harbour ferry dock"), s.catalog)
        assert found["results"][0]["note"] == "pier.md"
        assert found["matched"] == planning.COMMON_FROM + 1  # every note holds two of the words


def test_a_small_vault_keeps_the_fused_plan(vault: Vault, cache_dir: Path) -> None:
    harbour_vault(vault, 40)
    with Store(cache_dir) as s:
        reconcile(vault.root, s)
        plan = planning.plan(s.index, SearchRequest(query="harbour ferry dock"))
        assert len(plan.groups) == 4 and plan.min_match is None
