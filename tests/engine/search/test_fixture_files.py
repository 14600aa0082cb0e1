"""The hand-written fixture files under bench/fixtures: every line loads, names a real note of its corpus, ids are
unique across files, and the second set (dev-*-2 plus holdout-*) keeps its size, spread and split."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from agentmd.engine.search.eval.fixtures import load_fixtures

FIXTURE_DIR = REPO / "bench" / "fixtures"
CORPORA = REPO.parent / "shared" / "corpora"
CATEGORIES = {"terms", "paraphrase", "vocabulary", "no_answer", "name"}
KEYS = {"id", "corpus", "query", "expected", "alternates", "category"}
MINIMUMS = {"paraphrase": 30, "vocabulary": 30, "no_answer": 40, "name": 15}

# Question sets (dev-*, holdout-*, long-*); the prompt sets (prompts-*) have their own shape, read by `agentmd eval
# prompts`
FILES = sorted(p for p in FIXTURE_DIR.glob("*.jsonl") if p.name.startswith(("dev-", "holdout-", "long-")))
LONG_SET = [p for p in FILES if p.name.startswith("long-")]
SECOND_SET = [p for p in FILES if p.name.startswith("holdout-") or p.stem.endswith("-2")]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_fixture_files_are_there() -> None:
    assert any(p.name.startswith("dev-") for p in FILES)
    assert any(p.name.startswith("holdout-") for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixture_file_schema(path: Path) -> None:
    cases, _sha = load_fixtures(path)  # the harness accepts it
    rows = lines_of(path)
    assert len(rows) == len(cases)
    corpora = {row["corpus"] for row in rows}
    assert len(corpora) == 1, f"{path.name}: one corpus per file"
    for row in rows:
        assert row.keys() >= KEYS, row
        assert row["category"] in CATEGORIES, row
        assert isinstance(row["query"], str) and row["query"].strip() == row["query"] and row["query"]
        if row["category"] == "no_answer":
            assert row["expected"] is None and row["alternates"] == [], row
        else:
            assert isinstance(row["expected"], str) and row["expected"].endswith(".md"), row
            assert row["expected"] not in row["alternates"], row
            assert len(set(row["alternates"])) == len(row["alternates"]), row


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixture_paths_exist_in_their_corpus(path: Path) -> None:
    assert CORPORA.is_dir(), f"the shared corpora are missing: {CORPORA}"
    for row in lines_of(path):
        vault = CORPORA / row["corpus"]
        assert vault.is_dir(), f"{path.name}: corpus {row['corpus']!r} is not under {CORPORA}"
        for target in ([row["expected"]] if row["expected"] else []) + row["alternates"]:
            assert (vault / target).is_file(), f"{path.name} {row['id']}: {target} is not a file of {row['corpus']}"


def test_ids_are_unique_across_files() -> None:
    counts = Counter(row["id"] for path in FILES for row in lines_of(path))
    assert [cid for cid, n in counts.items() if n > 1] == []


def test_second_set_size_spread_and_categories() -> None:
    rows = [row for path in SECOND_SET for row in lines_of(path)]
    assert len(rows) >= 150
    assert len({row["corpus"] for row in rows}) >= 3
    categories = Counter(row["category"] for row in rows)
    assert set(categories) == CATEGORIES
    for category, minimum in MINIMUMS.items():
        assert categories[category] >= minimum, (category, categories[category])
    for row in rows:
        if row["category"] == "no_answer":
            assert row.get("why"), f"{row['id']}: a no-answer line says in `why` what was checked"


def test_long_set_is_long_and_says_what_was_checked() -> None:
    rows = [row for path in LONG_SET for row in lines_of(path)]
    assert {row["corpus"] for row in rows} == {"dendron-site", "obsidian-tasks", "vaultofknowledge"}
    categories = Counter(row["category"] for row in rows)
    assert categories["no_answer"] >= 15 and categories["paraphrase"] >= 10, categories
    for row in rows:
        assert len(row["query"].split()) >= 9, f"{row['id']}: a long question has at least nine words"
        if row["category"] == "no_answer":
            assert row.get("why"), f"{row['id']}: a no-answer line says in `why` what was checked"


def test_holdout_is_the_seeded_fifth_of_each_group() -> None:
    spec = importlib.util.spec_from_file_location("split_fixtures", REPO / "bench" / "split_fixtures.py")
    assert spec is not None and spec.loader is not None
    split = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split)
    rows = [row for path in SECOND_SET for row in lines_of(path)]
    held = {row["id"] for path in SECOND_SET if path.name.startswith("holdout-") for row in lines_of(path)}
    assert held == split.holdout_ids(rows)
    for path in SECOND_SET:
        corpus = lines_of(path)[0]["corpus"]
        expected_name = f"holdout-{corpus}.jsonl" if path.name.startswith("holdout-") else f"dev-{corpus}-2.jsonl"
        assert path.name == expected_name
