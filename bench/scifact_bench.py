"""SciFact per search mode against a plain BM25 baseline, and the dev fixtures per mode, in one run.

    .venv/bin/python bench/scifact_bench.py [--corpora DIR] [--limit-queries N] [--json-out FILE]
                                            [--skip-fixtures] [--skip-scifact] [--check]

SciFact (BEIR test split: `qrels.tsv`, 300 judged queries) is read from `../shared/corpora/ir/scifact`.
It is licensed for non-commercial use: it is test data only and is never copied into this repository.
Each mode in `engine.search.MODES` runs through `engine.search.eval.beir.run_beir` (a throwaway vault, one note
per abstract, frontmatter title = the paper title). The baseline is `bm25s` with its defaults
(method "lucene", k1 1.5, b 0.75) over title + " " + text, English stop words and the Snowball English
stemmer from PyStemmer, top 100 per query. Both sides are scored by the same functions
(`engine.search.eval.metrics.score_beir_run`). Bars (SPEC §11, the issue): nDCG@10 >= 0.66 and not below the
baseline measured in the same run.

The dev fixtures are one JSONL file per corpus, `bench/fixtures/dev-<corpus>.jsonl`; every line also
names its corpus (`"corpus": "obsidian-tasks"`), a folder under `../shared/corpora/`. Each file is
evaluated against its own vault (indexed into a temp store) with `engine.search.eval.fixtures.evaluate_fixtures`:
recall@5/@15, MRR and correct rejection per category and mode, and the same merged over both corpora.

Needs the dev extra's `bm25s` and `PyStemmer` (without them the baseline is skipped and said so).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentmd.engine.index.reconcile import reconcile  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.search import searcher as search_module  # noqa: E402
from agentmd.engine.search.eval import beir, metrics  # noqa: E402
from agentmd.engine.search.eval import fixtures as fixture_harness  # noqa: E402
from agentmd.rules import load_contract  # noqa: E402

NDCG_BAR = 0.66
FIXTURE_KS = (5, 15)


def bm25s_baseline(collection_dir: Path, limit_queries: int | None, *, keep_run: bool = False) -> dict[str, Any]:
    """The plain BM25 baseline (bm25s defaults, English stop words, Snowball English stemmer). With `keep_run`
    the answer also holds the ranked document ids per query (`run`), for paired comparisons."""
    try:
        import bm25s
        import Stemmer
    except ImportError as exc:
        return {"skipped": f"bm25s/PyStemmer not installed ({exc}); pip install bm25s PyStemmer"}
    collection = beir.load_beir(collection_dir)
    qids = list(collection.qrels)[:limit_queries] if limit_queries else list(collection.qrels)
    qrels = {q: collection.qrels[q] for q in qids}
    ids: list[str] = []
    texts: list[str] = []
    for doc in beir.read_jsonl(collection.corpus_path):
        ids.append(str(doc["_id"]))
        texts.append(f"{doc.get('title') or ''} {doc.get('text') or ''}")
    stemmer = Stemmer.Stemmer("english")
    start = time.perf_counter()
    retriever = bm25s.BM25()  # defaults: method="lucene", k1=1.5, b=0.75
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    built = time.perf_counter() - start
    start = time.perf_counter()
    query_tokens = bm25s.tokenize(
        [collection.queries[q] for q in qids], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    k = min(metrics.BEIR_DEPTH, len(ids))
    docs, _scores = retriever.retrieve(query_tokens, k=k, show_progress=False, n_threads=1)
    run = {q: [ids[int(i)] for i in docs[n]] for n, q in enumerate(qids)}
    seconds = time.perf_counter() - start
    scores = metrics.score_beir_run(run, qrels, recall_k=metrics.BEIR_DEPTH)
    return (
        {k: round(v, 6) if isinstance(v, float) else v for k, v in scores.items()}
        | {
            "config": "bm25s lucene k1=1.5 b=0.75, stopwords=en, PyStemmer english, title + text",
            "index_seconds": round(built, 3),
            "ms_per_query": round(1000 * seconds / max(len(qids), 1), 3),
        }
        | ({"run": run} if keep_run else {})
    )


def paired(ours: dict[str, list[str]], theirs: dict[str, list[str]], qrels: dict[str, dict[str, int]],
           resamples: int = 10_000) -> dict[str, Any]:  # fmt: skip
    """The mean per-query nDCG@10 difference (ours - theirs) over the same queries and its 95 % interval from a
    paired bootstrap over queries (fixed seed): whether a gap between the two is more than the queries' noise."""
    import numpy as np

    qids = [q for q in qrels if q in ours and q in theirs]
    diff = np.array([metrics.ndcg_at(ours[q], qrels[q]) - metrics.ndcg_at(theirs[q], qrels[q]) for q in qids])
    means = diff[np.random.default_rng(7).integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {
        "queries": len(qids),
        "mean_difference": round(float(diff.mean()), 4),
        "interval_95": [round(float(low), 4), round(float(high), 4)],
        "better": int((diff > 0).sum()),
        "worse": int((diff < 0).sum()),
    }


def scifact(corpora: Path, limit_queries: int | None) -> dict[str, Any]:
    directory = corpora / "ir" / "scifact"
    engine_report = beir.run_beir(directory, limit_queries=limit_queries, keep_runs=True)
    baseline = bm25s_baseline(directory, limit_queries, keep_run=True)
    engine_runs = engine_report.pop("runs")
    base_run = baseline.pop("run", None)
    qrels = beir.load_beir(directory).qrels
    default_mode = getattr(search_module, "DEFAULT_MODE", search_module.MODES[0])
    rows = {}
    base_ndcg = baseline.get("ndcg@10")
    for mode, r in engine_report["modes"].items():
        ratio = round(r["ndcg@10"] / base_ndcg, 4) if base_ndcg else None
        rows[mode] = (
            r
            | {
                "ndcg_ratio_to_baseline": ratio,
                "meets_ndcg_bar": r["ndcg@10"] >= NDCG_BAR,
                "not_below_baseline": None if base_ndcg is None else r["ndcg@10"] >= base_ndcg,
            }
            | ({"paired_vs_baseline": paired(engine_runs[mode], base_run, qrels)} if base_run is not None else {})
        )
    return {
        "collection": str(directory),
        "documents": engine_report["documents"],
        "queries": engine_report["queries"],
        "judgments": engine_report["judgments"],
        "build_seconds": engine_report["build_seconds"],
        "default_mode": default_mode,
        "modes": rows,
        "baseline": baseline,
        "bars": {"ndcg@10": NDCG_BAR, "not_below_baseline": True},
    }


def fixtures(corpora: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"files": {}, "merged": {}}
    per_mode: dict[str, list[dict[str, Any]]] = {}
    per_mode_cat: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted((REPO / "bench" / "fixtures").glob("dev-*.jsonl")):
        cases, _sha = fixture_harness.load_fixtures(path)
        names = {str(c.extra.get("corpus") or path.stem.removeprefix("dev-")) for c in cases}
        if len(names) != 1:
            raise SystemExit(f"{path}: lines name more than one corpus ({sorted(names)}); use one file per corpus")
        vault = corpora / names.pop()
        contract = load_contract(vault).contract
        with tempfile.TemporaryDirectory(prefix="agentmd-fixtures-") as tmp, Store(Path(tmp)) as store:
            reconcile(vault, store)
            # the whole ranking (floor 0), as this table has always read them; `agentmd eval fixtures` reads the floor
            report = fixture_harness.evaluate_fixtures(path, store, contract, ks=FIXTURE_KS, floor=0.0)
        out["files"][path.name] = report
        for mode, r in report["modes"].items():
            per_mode.setdefault(mode, []).append(r["overall"])
            for cat, summary in r["categories"].items():
                per_mode_cat.setdefault(mode, {}).setdefault(cat, []).append(summary)
    for mode, summaries in per_mode.items():
        out["merged"][mode] = {
            "overall": metrics.merge_summaries(summaries, FIXTURE_KS),
            "categories": {
                cat: metrics.merge_summaries(parts, FIXTURE_KS) for cat, parts in sorted(per_mode_cat[mode].items())
            },
        }
    return out


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def render_scifact(r: dict[str, Any]) -> str:
    b = r["baseline"]
    lines = [
        f"SciFact: {r['documents']} docs, {r['queries']} judged queries, {r['judgments']} judgments; "
        f"default mode {r['default_mode']}; bars nDCG@10 >= {NDCG_BAR} and >= baseline",
        f"  {'configuration':<34} {'nDCG@10':>8} {'R@100':>7} {'MRR@10':>7} {'ratio':>6} {'ms/q':>7}  bars",
    ]
    for mode, m in r["modes"].items():
        bars = "ok" if m["meets_ndcg_bar"] and m["not_below_baseline"] is not False else "FAIL"
        ratio = "-" if m["ndcg_ratio_to_baseline"] is None else f"{m['ndcg_ratio_to_baseline']:.3f}"
        lines.append(
            f"  {'agentmd ' + mode:<34} {_f(m['ndcg@10']):>8} {_f(m['recall@100']):>7} {_f(m['mrr@10']):>7}"
            f" {ratio:>6} {m['ms_per_query']:>7.2f}  {bars}"
        )
    for mode, m in r["modes"].items():
        if "paired_vs_baseline" in m:
            pb = m["paired_vs_baseline"]
            lines.append(
                f"  {mode} - bm25s per query: {pb['mean_difference']:+.4f}, 95 % interval "
                f"[{pb['interval_95'][0]:+.4f}, {pb['interval_95'][1]:+.4f}] (paired bootstrap; "
                f"{pb['better']} better, {pb['worse']} worse)"
            )
    if "skipped" in b:
        lines.append(f"  baseline skipped: {b['skipped']}")
    else:
        lines.append(
            f"  {'bm25s (lucene 1.5/0.75, stem, stop)':<34} {_f(b['ndcg@10']):>8} {_f(b['recall@100']):>7}"
            f" {_f(b['mrr@10']):>7} {'1.000':>6} {b['ms_per_query']:>7.2f}"
        )
    return "\n".join(lines)


def render_fixtures(r: dict[str, Any]) -> str:
    lines = []
    blocks = [(name, rep["modes"]) for name, rep in r["files"].items()]
    blocks.append(("merged (all dev fixtures)", r["merged"]))
    for name, modes in blocks:
        lines.append(f"dev fixtures {name}")
        lines.append(f"  {'mode':<8} {'category':<11} {'n':>3} {'R@5':>6} {'R@15':>6} {'MRR':>6} {'reject':>6}")
        for mode, m in modes.items():
            for cat, s in [("ALL", m["overall"]), *m["categories"].items()]:
                n = s["answerable"] + s["no_answer"]
                lines.append(
                    f"  {mode:<8} {cat:<11} {n:>3} {_f(s['recall@5']):>6} {_f(s['recall@15']):>6}"
                    f" {_f(s['mrr']):>6} {_f(s['correct_rejection']):>6}"
                )
        for mode, m in modes.items():
            kinds = m.get("miss_kinds")
            if kinds:
                lines.append(f"  misses@5 {mode}: " + ", ".join(f"{k} {v}" for k, v in kinds.items() if v))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora", help="../shared/corpora")
    ap.add_argument("--limit-queries", type=int, help="only the first N judged SciFact queries")
    ap.add_argument("--json-out", type=Path, help="also write the JSON report to this file")
    ap.add_argument("--skip-fixtures", action="store_true")
    ap.add_argument("--skip-scifact", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 when the default mode misses a SciFact bar")
    args = ap.parse_args(argv)
    report: dict[str, Any] = {"modes": list(search_module.MODES)}
    failed = False
    if not args.skip_scifact:
        report["scifact"] = sf = scifact(args.corpora, args.limit_queries)
        print(render_scifact(sf))
        d = sf["modes"].get(sf["default_mode"])
        failed = d is not None and not (d["meets_ndcg_bar"] and d["not_below_baseline"] is not False)
    if not args.skip_fixtures:
        report["fixtures"] = fx = fixtures(args.corpora)
        print()
        print(render_fixtures(fx))
    text = json.dumps(report, ensure_ascii=False)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print()
    print(text)
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
