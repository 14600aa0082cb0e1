"""The retrieval evaluation harness: pure metrics by hand, the fixture harness end to end on a tiny vault,
and the BEIR harness on a three-document collection."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import TESTS

from agentmd.cli.base import Parser as _Parser
from agentmd.cli.base import common_options as _common
from agentmd.cli.evaluation import add_eval_parser
from agentmd.engine.errors import UsageError
from agentmd.engine.search import searcher as search_module
from agentmd.engine.search.eval.beir import doc_slug
from agentmd.engine.search.eval.fixtures import load_fixtures
from agentmd.engine.search.eval.metrics import (
    FixtureCase,
    MissEvidence,
    QueryOutcome,
    classify_miss,
    correct_rejection,
    mean_reciprocal_rank,
    merge_summaries,
    mrr_at,
    ndcg_at,
    note_path,
    rank_of,
    recall_at,
    recall_of_relevant,
    score_beir_run,
    summarize,
    summarize_by_category,
)

FIXTURES = TESTS / "fixtures"
SMALL = FIXTURES / "eval_small.jsonl"
SMALL_VAULT = FIXTURES / "eval_vault"


# -- pure metrics ------------------------------------------------------------------------------------


def test_rank_of_counts_a_section_as_its_note() -> None:
    paths = ["a.md#Setup", "b.md", "c.md"]
    assert note_path("a.md#Setup") == "a.md"
    assert note_path("a.md") == "a.md"
    assert rank_of(paths, {"a.md"}) == 1
    assert rank_of(paths, {"c.md", "b.md"}) == 2  # the first acceptable one
    assert rank_of(paths, {"z.md"}) is None
    assert rank_of([], {"a.md"}) is None


def test_recall_at_k() -> None:
    ranks = [1, 3, None, 6]
    assert recall_at(ranks, 1) == 0.25
    assert recall_at(ranks, 5) == 0.5
    assert recall_at(ranks, 6) == 0.75
    assert recall_at([], 5) is None


def test_mrr() -> None:
    assert mean_reciprocal_rank([1, 2, None, 4]) == pytest.approx((1 + 0.5 + 0 + 0.25) / 4)  # 0.4375
    assert mean_reciprocal_rank([1, 2, None, 4], cutoff=3) == pytest.approx(0.375)
    assert mean_reciprocal_rank([]) is None


def test_correct_rejection() -> None:
    assert correct_rejection([0, 3, 0, 0]) == 0.75
    assert correct_rejection([2]) == 0.0
    assert correct_rejection([]) is None


def test_ndcg_at_10_with_graded_qrels() -> None:
    qrels = {"d1": 2, "d2": 1, "d3": 0}
    # d3 (grade 0) at 1, d1 (2) at 2, an unjudged doc at 3, d2 (1) at 4:
    # DCG = 2/log2(3) + 1/log2(5) = 1.692536; ideal = 2/log2(2) + 1/log2(3) = 2.630930
    assert ndcg_at(["d3", "d1", "x", "d2"], qrels) == pytest.approx(0.643322, abs=1e-6)
    assert ndcg_at(["d1", "d2"], qrels) == pytest.approx(1.0)
    assert ndcg_at(["d2", "d1"], qrels) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert ndcg_at([], qrels) == 0.0
    assert ndcg_at(["d1"], {"d1": 0}) == 0.0  # nothing relevant: 0, not a division by zero
    # only the top 10 count
    assert ndcg_at([f"x{i}" for i in range(10)] + ["d1"], qrels) == 0.0
    # a document listed twice counts once
    assert ndcg_at(["d1", "d1", "d2"], qrels) == pytest.approx(1.0)


def test_recall_and_mrr_of_a_ranking() -> None:
    qrels = {"d1": 1, "d2": 2, "d3": 0}
    assert recall_of_relevant(["d3", "d2"], qrels, 100) == 0.5
    assert recall_of_relevant(["d3", "d2", "d1"], qrels, 2) == 0.5
    assert mrr_at(["d3", "x", "d1"], qrels) == pytest.approx(1 / 3)
    assert mrr_at([f"x{i}" for i in range(10)] + ["d1"], qrels) == 0.0


def test_score_beir_run_averages_over_judged_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}  # q3 has nothing relevant: not judged
    run = {"q1": ["a"], "q3": ["c"]}  # q2 missing from the run: scores 0
    scores = score_beir_run(run, qrels)
    assert scores["queries"] == 2
    assert scores["ndcg@10"] == 0.5
    assert scores["recall@100"] == 0.5
    assert scores["mrr@10"] == 0.5


def _case(cid: str, expected: str | None, category: str = "c") -> FixtureCase:
    return FixtureCase(cid, "q", expected, (), category)


def test_summarize_and_merge() -> None:
    outcomes = [
        QueryOutcome(_case("a", "x.md", "terms"), 1, 5),
        QueryOutcome(_case("b", "x.md", "terms"), 4, 5),
        QueryOutcome(_case("c", "x.md", "vocab"), None, 0),
        QueryOutcome(_case("d", None, "none"), None, 0),
        QueryOutcome(_case("e", None, "none"), None, 2),
    ]
    s = summarize(outcomes, [1, 5])
    assert s == {
        "answerable": 3,
        "no_answer": 2,
        "recall@1": round(1 / 3, 6),
        "hits@1": 1,
        "recall@5": round(2 / 3, 6),
        "hits@5": 2,
        "mrr": 0.416667,  # (1 + 1/4 + 0) / 3
        "correct_rejection": 0.5,
        "rejected": 1,
    }
    cats = summarize_by_category(outcomes, [1, 5])
    assert list(cats) == ["none", "terms", "vocab"]
    assert cats["terms"]["recall@1"] == 0.5 and cats["terms"]["mrr"] == 0.625
    assert cats["none"]["recall@1"] is None and cats["none"]["correct_rejection"] == 0.5
    other = summarize([QueryOutcome(_case("f", "y.md"), 2, 3)], [1, 5])
    merged = merge_summaries([s, other], [1, 5])
    assert merged["answerable"] == 4 and merged["hits@5"] == 3
    assert merged["recall@1"] == 0.25 and merged["recall@5"] == 0.75
    assert merged["mrr"] == pytest.approx((1 + 0.25 + 0 + 0.5) / 4, abs=1e-6)
    assert merged["correct_rejection"] == 0.5


def test_classify_miss() -> None:
    assert classify_miss(MissEvidence(indexed=False, rank=None)) == {"kind": "not_indexed"}
    assert classify_miss(MissEvidence(indexed=True, rank=7)) == {"kind": "ranking_loss", "rank": 7}
    below = MissEvidence(indexed=True, rank=None, unfloored_rank=1, confidence=0.21, floor=0.3, walled_rank=1)
    assert classify_miss(below) == {"kind": "below_floor", "rank": 1, "confidence": 0.21, "floor": 0.3}
    walled = MissEvidence(indexed=True, rank=None, walled_rank=2, wall="archived")
    assert classify_miss(walled) == {"kind": "walled", "wall": "archived", "rank": 2}
    vocab = MissEvidence(
        indexed=True, rank=None, words=("the", "pump"), content_words=("pump",), reaching_words=("the",)
    )
    assert classify_miss(vocab) == {"kind": "vocabulary_mismatch", "words": ["pump"]}
    partial = MissEvidence(indexed=True, rank=None, words=("red", "pump"), reaching_words=("red",))
    assert classify_miss(partial) == {"kind": "partial_match", "reaching_words": ["red"], "missing_words": ["pump"]}
    deep = MissEvidence(indexed=True, rank=None, words=("red", "pump"), reaching_words=("red", "pump"), depth=200)
    assert classify_miss(deep) == {"kind": "ranking_loss", "rank": None, "beyond": 200}


def test_doc_slug_is_a_safe_file_stem() -> None:
    assert doc_slug("4983") == "4983"
    assert doc_slug("a/b c.d") == "a-b-c-d"
    assert doc_slug("..") == "doc"
    assert doc_slug("x" * 300) == "x" * 100


def test_load_fixtures_reports_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "query": "x", "expected": null}\n\n{"id": "b", "query": ""}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"bad.jsonl:3: `query`"):
        load_fixtures(bad)
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "query": "x"}\n{"id": "a", "query": "y"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match="used twice"):
        load_fixtures(dup)
    cases, sha = load_fixtures(SMALL)
    assert len(cases) == 9 and sha == hashlib.sha256(SMALL.read_bytes()).hexdigest()


# -- the harness end to end --------------------------------------------------------------------------


def _run(argv: list[str], monkeypatch: pytest.MonkeyPatch, home: Path) -> tuple[int, str, str]:
    """Run an `eval` subcommand the way `agentmd` does (agentmd/cli/evaluation.py)."""
    for var in ("AGENTMD_VAULT", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    parser = _Parser(prog="agentmd")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add_eval_parser(sub, _common())
    args: argparse.Namespace = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, out, err)
    return code, out.getvalue(), err.getvalue()


def _fixture_args(tmp_path: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "fixtures",
        str(SMALL),
        "--vault",
        str(SMALL_VAULT),
        "--index",
        str(tmp_path / "cache"),
        "--k",
        "1,5",
        *extra,
    ]


def test_fixtures_text_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(_fixture_args(tmp_path, "--mode", "and"), monkeypatch, tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    sha = hashlib.sha256(SMALL.read_bytes()).hexdigest()
    assert lines[0] == f"fixture {SMALL} (9 queries)"
    assert lines[1] == f"  sha256 {sha}"
    assert lines[2].startswith("  corpus 6 notes indexed, newest modified ")
    i = lines.index(next(line for line in lines if line.startswith("mode and:")))
    assert lines[i].startswith("mode and: 7 answerable, 2 no-answer, ")
    # recall@1: q1 and q6 (through its alternate) of 7 answerable; recall@5 adds q2 (rank 2);
    # MRR (1 + 1/2 + 1) / 7; correct rejection: q5 comes back empty, q8 does not
    assert lines[i + 1] == "  recall@1 0.286  recall@5 0.429  MRR 0.357  correct rejection 0.500 (1/2)"
    assert lines[i + 2 : i + 9] == [
        "  category      n     R@1     R@5     MRR  reject",
        "  no_answer     2       -       -       -   0.500",
        "  paraphrase    1   0.000   0.000   0.000       -",
        "  terms         4   0.500   0.750   0.625       -",
        "  vocabulary    1   0.000   0.000   0.000       -",
        "  walled        1   0.000   0.000   0.000       -",
        "  misses at K=1:",
    ]
    assert lines[i + 9 : i + 14] == [
        "    q2  ranking_loss rank 2  cache-invalidation.md  ('redis')",
        "    q3  walled (archived) rank 1 with include_archived  old-ci-runner.md  ('jenkins runner')",
        "    q4  vocabulary_mismatch  onboarding.md  ('hire orientation')",
        "    q7  not_indexed  it-setup.md  ('laptop access')",
        "    q9  partial_match reached by laptop  onboarding.md  ('laptop policy')",
    ]


def test_fixtures_json_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(_fixture_args(tmp_path, "--mode", "and", "--json"), monkeypatch, tmp_path)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    assert report["fixture_sha256"] == hashlib.sha256(SMALL.read_bytes()).hexdigest()
    assert report["corpus"]["documents"] == 6 and report["corpus"]["newest_mtime"]
    assert report["ks"] == [1, 5]
    r = report["modes"]["and"]
    assert list(report["modes"]) == ["and"]
    assert r["overall"] == {
        "answerable": 7,
        "no_answer": 2,
        "recall@1": 0.285714,
        "hits@1": 2,
        "recall@5": 0.428571,
        "hits@5": 3,
        "mrr": 0.357143,
        "correct_rejection": 0.5,
        "rejected": 1,
    }
    assert r["categories"]["terms"]["mrr"] == 0.625
    misses = {m["id"]: m for m in r["misses"]}
    assert set(misses) == {"q2", "q3", "q4", "q7", "q9"}
    assert misses["q2"]["kind"] == "ranking_loss" and misses["q2"]["rank"] == 2 and misses["q2"]["missed_at"] == [1]
    assert misses["q3"]["kind"] == "walled" and misses["q3"]["rank"] == 1
    assert misses["q3"]["wall"] == "archived" and misses["q3"]["missed_at"] == [1, 5]
    assert misses["q4"]["kind"] == "vocabulary_mismatch" and misses["q4"]["words"] == ["hire", "orientation"]
    assert misses["q7"]["kind"] == "not_indexed"
    assert misses["q9"]["kind"] == "partial_match"
    assert misses["q9"]["reaching_words"] == ["laptop"] and misses["q9"]["missing_words"] == ["policy"]
    assert r["miss_kinds"] == {
        "not_indexed": 1,
        "ranking_loss": 1,
        "below_floor": 0,
        "walled": 1,
        "vocabulary_mismatch": 1,
        "partial_match": 1,
    }
    by_id = {q["id"]: q for q in r["queries"]}
    assert by_id["q6"]["rank"] == 1 and by_id["q6"]["top"] == ["deploy-checklist.md"]  # hit through the alternate
    assert by_id["q8"]["results"] == 1 and by_id["q5"]["results"] == 0


@pytest.mark.parametrize("mode", search_module.MODES)
def test_mode_independent_misses_in_every_mode(mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(_fixture_args(tmp_path, "--mode", mode, "--json"), monkeypatch, tmp_path)
    assert code == 0, err
    r = json.loads(out)["modes"][mode]
    kinds = {m["id"]: m["kind"] for m in r["misses"]}
    assert kinds["q3"] == "walled"
    assert kinds["q4"] == "vocabulary_mismatch"
    assert kinds["q7"] == "not_indexed"
    assert "q1" not in kinds and "q6" not in kinds
    assert r["overall"]["answerable"] == 7


def test_every_mode_by_default_and_unknown_mode_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = _run(_fixture_args(tmp_path, "--json"), monkeypatch, tmp_path)
    assert code == 0
    assert list(json.loads(out)["modes"]) == list(search_module.MODES)
    with pytest.raises(UsageError, match="not known"):
        _run(_fixture_args(tmp_path, "--mode", "telepathy"), monkeypatch, tmp_path)
    with pytest.raises(UsageError, match="--k"):
        _run(_fixture_args(tmp_path, "--k", "0"), monkeypatch, tmp_path)


def test_fixtures_are_scored_through_the_floor_a_search_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = _run(_fixture_args(tmp_path, "--mode", "fusion", "--json"), monkeypatch, tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert report["floor"] == 0.018  # the search floor 0.3, scaled to a vault of 6 notes as `agentmd search` does
    whole = json.loads(
        _run(_fixture_args(tmp_path, "--mode", "fusion", "--json", "--floor", "0"), monkeypatch, tmp_path)[1]
    )
    assert whole["floor"] == 0
    high = json.loads(
        _run(_fixture_args(tmp_path, "--mode", "fusion", "--json", "--floor", "0.99"), monkeypatch, tmp_path)[1]
    )
    # nothing but an entity page clears 0.99: every no-answer question is rejected, fewer answers are found
    assert high["modes"]["fusion"]["overall"]["correct_rejection"] == 1.0
    assert high["modes"]["fusion"]["overall"]["hits@5"] < whole["modes"]["fusion"]["overall"]["hits@5"]
    assert whole["modes"]["fusion"]["overall"]["correct_rejection"] <= 0.5
    # a miss the floor made says so: the note is in the whole ranking, under the floor
    whole_kinds = {m["id"]: m["kind"] for m in whole["modes"]["fusion"]["misses"]}
    floored = [m for m in high["modes"]["fusion"]["misses"] if m["kind"] == "below_floor"]
    assert floored and high["modes"]["fusion"]["miss_kinds"]["below_floor"] == len(floored)
    by_rank = {q["id"]: q["rank"] for q in whole["modes"]["fusion"]["queries"]}
    for m in floored:
        assert m["id"] not in whole_kinds or whole_kinds[m["id"]] == "ranking_loss"
        assert m["rank"] == by_rank[m["id"]] and m["floor"] == 0.99 and m["confidence"] < 0.99
    assert whole["modes"]["fusion"]["miss_kinds"]["below_floor"] == 0  # no floor, no miss of its making
    # left out by the floor but beyond K in the whole ranking too: the ranking lost it, at its rank there
    at_one = json.loads(
        _run(
            _fixture_args(tmp_path, "--mode", "fusion", "--json", "--floor", "0.99", "--k", "1"), monkeypatch, tmp_path
        )[1]
    )
    q2 = next(m for m in at_one["modes"]["fusion"]["misses"] if m["id"] == "q2")
    assert by_rank["q2"] == 2 and q2["kind"] == "ranking_loss" and q2["rank"] == 2
    code, out, err = _run(_fixture_args(tmp_path, "--mode", "fusion", "--floor", "0.99"), monkeypatch, tmp_path)
    assert "through the confidence floor 0.99, as `agentmd search` returns results" in out
    assert "under the floor 0.99" in out
    with pytest.raises(UsageError, match=r"--floor 2\.0 is not a number from 0 to 1"):
        _run(_fixture_args(tmp_path, "--floor", "2"), monkeypatch, tmp_path)


def test_fixtures_run_hybrid_on_the_vectors_a_reindex_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmd.engine.index.embedder import shared_embedder
    from agentmd.engine.index.reconcile import reconcile
    from agentmd.engine.index.store import Store
    from agentmd.engine.search.arm import embed_foreground
    from agentmd.engine.settings import resolve

    with pytest.raises(UsageError, match="mode hybrid needs the dense arm, which is not available: no vectors on disk"):
        _run(_fixture_args(tmp_path, "--mode", "hybrid"), monkeypatch, tmp_path)
    code, out, err = _run(_fixture_args(tmp_path), monkeypatch, tmp_path)
    assert code == 0, err
    assert "hybrid: not run (no vectors on disk yet" in out
    settings = resolve(vault=str(SMALL_VAULT), index=str(tmp_path / "cache"), env={"HOME": str(tmp_path)})
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
        current = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    done = embed_foreground(settings, current, shared_embedder())
    assert done.chunks_done == done.chunks_total > 0
    code, out, err = _run(_fixture_args(tmp_path, "--json"), monkeypatch, tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert list(report["modes"]) == ["hybrid", *search_module.MODES] and "skipped" not in report
    hybrid = report["modes"]["hybrid"]
    assert hybrid["overall"]["answerable"] == 7
    kinds = {m["id"]: m["kind"] for m in hybrid["misses"]}
    assert kinds["q7"] == "not_indexed" and "q1" not in kinds


# -- BEIR ----------------------------------------------------------------------------------------------


def _tiny_beir(root: Path) -> Path:
    root.mkdir()
    docs = [
        {"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements raise bone density."},
        {"_id": "d2", "title": "Sleep and memory", "text": "Deep sleep consolidates memory in students."},
        {"_id": "x/3", "title": "Bone fractures", "text": "Fractures heal slower without calcium."},
    ]
    queries = [
        {"_id": "q1", "text": "bone density"},
        {"_id": "q2", "text": "memory sleep"},
        {"_id": "q3", "text": "calcium"},  # not judged: never run
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\tx/3\t1\nq2\td2\t1\nq2\td1\t0\nq9\td2\t1\n", encoding="utf-8"
    )
    return root


def test_beir_tiny_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beir = _tiny_beir(tmp_path / "tiny")
    code, out, err = _run(["eval", "beir", str(beir), "--mode", "and", "--json"], monkeypatch, tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert report["documents"] == 3 and report["queries"] == 2 and report["judgments"] == 4
    r = report["modes"]["and"]
    # q1 "bone density": only d1 has both words. DCG = 2/log2(2) = 2; ideal = 2 + 1/log2(3) = 2.630930
    #   nDCG 0.760188, recall 1 of 2 relevant (x/3 lacks "density"), MRR 1.
    # q2 "memory sleep": d2 alone, the only relevant document: nDCG 1, recall 1, MRR 1.
    assert r["ndcg@10"] == pytest.approx((2 / (2 + 1 / math.log2(3)) + 1) / 2, abs=1e-6)
    assert r["ndcg@10"] == 0.880094
    assert r["recall@100"] == 0.75
    assert r["mrr@10"] == 1.0
    assert r["queries"] == 2 and r["empty_results"] == 0

    code, out, err = _run(["eval", "beir", str(beir), "--mode", "and", "--limit-queries", "1"], monkeypatch, tmp_path)
    assert code == 0, err
    assert "3 documents, 1 judged queries (2 judgments)" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("and "))
    assert row.split()[:4] == ["and", "0.760", "0.500", "1.000"]


def test_beir_refuses_a_folder_without_a_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a BEIR collection"):
        _run(["eval", "beir", str(tmp_path / "empty")], monkeypatch, tmp_path)


def _beir_with_filler(root: Path) -> Path:
    """A collection of 121 documents (so the default floor applies in full): 120 on gardening, one on bone
    density. `q1` is answered by its words; `q2` names two words no document holds; one document holds its others."""
    root.mkdir()
    docs = [{"_id": "d1", "title": "Vitamin D and bone density", "text": "Vitamin D supplements raise bone density."}]
    docs += [
        {"_id": f"g{i}", "title": f"Garden diary {i}", "text": f"Tomatoes, beans and compost in bed {i} this spring."}
        for i in range(120)
    ]
    queries = [{"_id": "q1", "text": "vitamin D bone density"}, {"_id": "q2", "text": "zyxquartz qwvblorp in bed 7"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\tg7\t1\n", encoding="utf-8")
    (root / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    return root


def test_beir_scores_the_ranking_and_what_the_floor_keeps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beir = _beir_with_filler(tmp_path / "filler")
    code, out, err = _run(["eval", "beir", str(beir), "--mode", "fusion", "--json"], monkeypatch, tmp_path)
    assert code == 0, err
    r = json.loads(out)["modes"]["fusion"]
    # the whole ranking puts each judged document first; through the floor the words no document holds leave q2
    # with nothing, as `agentmd search` answers it
    assert r["empty_results"] == 0 and r["ndcg@10"] == 1.0
    floored = r["floored"]
    assert floored["floor"] == 0.3
    assert floored["empty_results"] == 1
    assert floored["ndcg@10"] == pytest.approx(0.5)  # q1 kept at rank 1, q2 empty

    code, out, err = _run(["eval", "beir", str(beir), "--mode", "fusion"], monkeypatch, tmp_path)
    assert code == 0, err
    assert "as `agentmd search` returns, floor 0.3" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("fusion "))
    assert row.split()[-3:] == ["0.500", "0.500", "1"]


def test_beir_reads_another_judgments_file_and_refuses_a_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beir = _beir_with_filler(tmp_path / "filler")
    argv = ["eval", "beir", str(beir), "--mode", "fusion", "--json", "--qrels", str(beir / "train.tsv")]
    code, out, err = _run(argv, monkeypatch, tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert report["queries"] == 1 and report["qrels"] == str(beir / "train.tsv")
    with pytest.raises(UsageError, match="does not exist"):
        _run(["eval", "beir", str(beir), "--qrels", str(beir / "nope.tsv")], monkeypatch, tmp_path)


def test_beir_hybrid_embeds_once_into_a_kept_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beir = _tiny_beir(tmp_path / "tiny")
    work = tmp_path / "work"
    argv = ["eval", "beir", str(beir), "--json", "--work", str(work)]
    code, out, err = _run(argv, monkeypatch, tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert list(report["modes"]) == ["hybrid", "fusion", "and"]  # every mode, the product's default first
    assert report["embedding"]["embedded"] == report["embedding"]["chunks"] == 3
    hybrid_scores = report["modes"]["hybrid"]
    assert hybrid_scores["mrr@10"] == 1.0 and hybrid_scores["empty_results"] == 0
    assert (work / "agentmd-beir.json").is_file() and len(list((work / "vault").glob("*.md"))) == 3
    # a second run in the same folder searches the vectors it kept
    code, out, err = _run(argv, monkeypatch, tmp_path)
    assert code == 0, err
    again = json.loads(out)
    assert again["embedding"]["embedded"] == 0
    assert again["modes"]["hybrid"]["ndcg@10"] == hybrid_scores["ndcg@10"]


def test_beir_without_the_model_runs_the_lexical_modes_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beir = _tiny_beir(tmp_path / "tiny")
    monkeypatch.setenv("AGENTMD_DENSE", "0")
    code, out, err = _run(["eval", "beir", str(beir)], monkeypatch, tmp_path)
    assert code == 0, err
    assert "hybrid: not run (the dense arm is switched off" in out
    assert [line.split()[0] for line in out.splitlines() if line.strip().startswith(("fusion ", "and "))] == [
        "fusion",
        "and",
    ]
    with pytest.raises(UsageError, match="mode hybrid needs the dense arm"):
        _run(["eval", "beir", str(beir), "--mode", "hybrid"], monkeypatch, tmp_path)


def test_beir_keeps_its_work_only_in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beir = _tiny_beir(tmp_path / "tiny")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.md").write_text("my own note\n", encoding="utf-8")
    with pytest.raises(UsageError, match="holds other files"):
        _run(["eval", "beir", str(beir), "--mode", "and", "--work", str(notes)], monkeypatch, tmp_path)
    assert [p.name for p in notes.iterdir()] == ["mine.md"]  # nothing written, nothing removed
    with pytest.raises(UsageError, match="is a file"):
        _run(["eval", "beir", str(beir), "--mode", "and", "--work", str(notes / "mine.md")], monkeypatch, tmp_path)


def test_beir_rewrites_a_kept_vault_that_is_gone_or_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beir = _tiny_beir(tmp_path / "tiny")
    work = tmp_path / "work"
    argv = ["eval", "beir", str(beir), "--mode", "and", "--json", "--work", str(work)]
    first = json.loads(_run(argv, monkeypatch, tmp_path)[1])["modes"]["and"]
    shutil.rmtree(work / "vault")  # a person tidied up the vault but not the marker
    again = json.loads(_run(argv, monkeypatch, tmp_path)[1])["modes"]["and"]
    assert again["ndcg@10"] == first["ndcg@10"] and len(list((work / "vault").glob("*.md"))) == 3
    with (beir / "corpus.jsonl").open("a", encoding="utf-8") as fh:  # the corpus grew: its vault is written anew
        fh.write(json.dumps({"_id": "d4", "title": "Bone density scans", "text": "Scans measure bone density."}) + "\n")
    code, out, err = _run(argv, monkeypatch, tmp_path)
    assert code == 0, err
    assert json.loads(out)["documents"] == 4 and len(list((work / "vault").glob("*.md"))) == 4
