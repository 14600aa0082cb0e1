"""The relevance floor's trade-off on three kinds of question at once: the vaults' dev questions, long questions
over the same vaults, and SciFact's claims, where every query has an answer.

    .venv/bin/python bench/floor_curve.py --work DIR [--beir-work DIR] [--qrels FILE] [--json-out FILE]

`--work` holds copies of dendron-site, obsidian-tasks and vaultofknowledge with their index and vectors, made and
kept as `bench/vocab_bench.py` makes them (the same folder can serve both). Their questions are the dev files
(`bench/fixtures/dev-<corpus>*.jsonl`) and the long ones (`long-<corpus>.jsonl`: 6 to 10 content words, twelve
that a note answers and eighteen on the vaults' topics that none does). `--beir-work` is a folder kept by `agentmd
eval beir ../shared/corpora/ir/scifact --work DIR` (made here when missing: the first run embeds 7,759 chunks,
about 8 minutes); `--qrels` picks the split, by default the train split (`qrels-train.tsv`), the one to tune on.

Every question is searched once as `agentmd search` searches it (hybrid, every chunk embedded, the default
limit 10) with the floor at 0, so each result keeps its `confidence`; each floor is then applied to the same
results. Printed for each floor: the vaults' answerable questions with their note in the top 5 (short and
long), their unanswerable questions returning nothing (short and long), SciFact's nDCG@10 and how many claims
come back empty. Then what the results look like where the floor and SciFact disagree: the first result's
cosine, word share and plain share, the missing-word weight and the query's content words, for SciFact claims
the floor empties although their abstract is in the top 3, and for the unanswerable questions. And last, a
floor lifted for queries of many content words (the one feature that tells SciFact's claims from the dev
questions), read on the long questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import vocab_bench  # noqa: E402

from agentmd.engine.index.embedder import shared_embedder  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.index.vectors import VectorStore  # noqa: E402
from agentmd.engine.search import confidence, hybrid  # noqa: E402
from agentmd.engine.search.eval import beir  # noqa: E402
from agentmd.engine.search.eval.fixtures import load_fixtures  # noqa: E402
from agentmd.engine.search.eval.metrics import ndcg_at  # noqa: E402
from agentmd.engine.search.searcher import SearchRequest  # noqa: E402
from agentmd.rules import default_contract  # noqa: E402

FIXTURES = REPO / "bench" / "fixtures"
SCIFACT = REPO.parent / "shared" / "corpora" / "ir" / "scifact"
CORPORA = ("dendron-site", "obsidian-tasks", "vaultofknowledge")
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
LIMIT = 10  # `agentmd search`'s default
DEPTH = 5
LIFTED_FROM = (5, 6, 7, 8)  # content words from which the lifted variant shows everything


@dataclass
class Asked:
    """One question's results at floor 0, with what the confidence read."""

    group: str  # "short" / "long" (vault questions) or "scifact"
    answerable: bool
    targets: frozenset[str]  # notes (or SciFact documents) that answer it
    ranked: list[tuple[str, float]]  # (note or document, confidence) in rank order
    words: int  # content words
    missing: float  # the missing-word weight over the first five notes
    first: dict[str, float]  # the first result's cosine, word share and plain share
    docs: int  # notes in the vault (the floor is scaled in a small one)
    judged: dict[str, int] | None = None  # SciFact's relevance judgments


def ask(
    store: Store, arm: hybrid.DenseArm, query: str, rename: Callable[[str], str | None] | None = None
) -> tuple[list[tuple[str, float]], int, float, dict[str, float]]:
    contract = default_contract()
    response = hybrid.hybrid_search(
        store.index, contract, SearchRequest(query=query, limit=LIMIT, mode="hybrid"), store.catalog, arm, cut=False
    )
    rows = confidence.annotate(store.index, query, response).to_json()["results"]
    words = confidence.QueryWords(store.index, query)
    notes = list(dict.fromkeys(str(r["note"]) for r in rows))[: confidence.MISSING_DEPTH]
    missing = words.missing([words.held(store.index.note_terms(n)[0]) for n in notes], notes)
    first: dict[str, float] = {}
    if rows:
        ev = words.evidence(*store.index.note_terms(str(rows[0]["note"])))
        first = {"cosine": float(rows[0].get("cosine") or 0.0), "word_share": ev.word_share, "coverage": ev.coverage}
    ranked = []
    for r in rows:
        name = rename(str(r["note"])) if rename else str(r["note"])
        if name is not None:
            ranked.append((name, float(r.get("confidence") or 0.0)))
    return ranked, len(words.words), missing, first


def vault_questions(work: Path) -> list[Asked]:
    out: list[Asked] = []
    model = shared_embedder()
    for corpus in CORPORA:
        files = sorted(FIXTURES.glob(f"dev-{corpus}*.jsonl")) + sorted(FIXTURES.glob(f"long-{corpus}.jsonl"))
        vault = vocab_bench.prepare(work, corpus, None, files)
        arm = hybrid.DenseArm(vault.vectors, model)
        for path in files:
            group = "long" if path.name.startswith("long-") else "short"
            for case in load_fixtures(path)[0]:
                ranked, words, missing, first = ask(vault.store, arm, case.query)
                out.append(
                    Asked(
                        group,
                        case.expected is not None,
                        frozenset(case.targets),
                        ranked,
                        words,
                        missing,
                        first,
                        vault.store.index.doc_count(),
                    )
                )
    return out


def scifact_claims(keep: Path, qrels: Path) -> list[Asked]:
    model = shared_embedder()
    if not (keep / beir.MARKER).is_file() or not (keep / "cache" / "vectors.npz").is_file():
        print(f"  making {keep}: SciFact's vault, index and vectors (embedding in the foreground)", file=sys.stderr)
        beir.run_beir(
            SCIFACT, modes=["hybrid"], limit_queries=1, keep=keep, qrels_path=qrels, dense=beir.DenseSide(model)
        )
    doc_of = {str(k): str(v) for k, v in json.loads((keep / beir.MARKER).read_text(encoding="utf-8"))["doc_of"].items()}
    collection = beir.load_beir(SCIFACT, qrels)
    out: list[Asked] = []
    with Store(keep / "cache") as store:
        vectors = VectorStore(keep / "cache", model.model_id, model.dim)
        cover = vectors.coverage()
        if cover.done < cover.total:
            raise SystemExit(
                f"{keep}: vectors cover {cover.done} of {cover.total} chunks; run `agentmd eval beir "
                f"{SCIFACT} --work {keep}` once to embed the rest"
            )
        arm = hybrid.DenseArm(vectors, model)
        for qid, judged in collection.qrels.items():
            ranked, words, missing, first = ask(
                store, arm, collection.queries[qid], lambda n: doc_of.get(beir.note_path(n))
            )
            out.append(
                Asked(
                    "scifact",
                    True,
                    frozenset(judged),
                    ranked,
                    words,
                    missing,
                    first,
                    store.index.doc_count(),
                    dict(judged),
                )
            )
    return out


def kept(q: Asked, floor: float) -> list[str]:
    scaled = floor * min(1.0, q.docs / confidence.MISSING_FULL_AT)
    return [name for name, sure in q.ranked if sure >= scaled]


def rates(asked: Sequence[Asked], floor: float | Callable[[Asked], float]) -> dict[str, Any]:
    at = (lambda q: floor) if isinstance(floor, float) else floor
    out: dict[str, Any] = {}
    for group in ("short", "long"):
        ans = [q for q in asked if q.group == group and q.answerable]
        non = [q for q in asked if q.group == group and not q.answerable]
        out[f"{group}_kept"] = [sum(1 for q in ans if set(kept(q, at(q))[:DEPTH]) & q.targets), len(ans)]
        out[f"{group}_rejected"] = [sum(1 for q in non if not kept(q, at(q))), len(non)]
    claims = [q for q in asked if q.group == "scifact"]
    if claims:
        runs = [kept(q, at(q)) for q in claims]
        total = sum(ndcg_at(r, q.judged or {}) for r, q in zip(runs, claims, strict=True))
        out["scifact_ndcg10"] = round(total / len(claims), 4)
        out["scifact_empty"] = [sum(1 for r in runs if not r), len(claims)]
    return out


def lifted(words: int, floor: float) -> Callable[[Asked], float]:
    """The floor per question: none for a query of `words` content words or more, else `floor`."""
    return lambda q: 0.0 if q.words >= words else floor


def quartiles(values: Iterable[float]) -> list[float]:
    got = sorted(values)
    if len(got) < 2:
        return [round(v, 3) for v in got]
    q = statistics.quantiles(got, n=4)
    return [round(v, 3) for v in (got[0], *q, got[-1])]


def profiles(asked: Sequence[Asked], floor: float) -> dict[str, dict[str, Any]]:
    groups = {
        "scifact claims emptied, abstract in the top 3": [
            q
            for q in asked
            if q.group == "scifact" and not kept(q, floor) and {n for n, _c in q.ranked[:3]} & q.targets
        ],
        "scifact claims kept": [q for q in asked if q.group == "scifact" and kept(q, floor)],
        "short unanswerable": [q for q in asked if q.group == "short" and not q.answerable],
        "long unanswerable": [q for q in asked if q.group == "long" and not q.answerable],
    }
    out: dict[str, dict[str, Any]] = {}
    for name, qs in groups.items():
        out[name] = {
            "n": len(qs),
            "content words": quartiles(q.words for q in qs),
            "missing weight": quartiles(q.missing for q in qs),
            "best confidence": quartiles(max((c for _n, c in q.ranked), default=0.0) for q in qs),
        }
        for key in ("cosine", "word_share", "coverage"):
            out[name][f"first {key}"] = quartiles(q.first.get(key, 0.0) for q in qs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="the vault copies (as bench/vocab_bench.py keeps them)")
    ap.add_argument("--beir-work", type=Path, help="a folder `agentmd eval beir --work` kept (default WORK/scifact)")
    ap.add_argument("--qrels", type=Path, default=SCIFACT / "qrels-train.tsv")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    asked = vault_questions(args.work) + scifact_claims(args.beir_work or args.work / "scifact", args.qrels)
    default = float(default_contract().thresholds.search_floor)
    report: dict[str, Any] = {"qrels": str(args.qrels), "floors": {}, "lifted": {}}
    print(f"hybrid, every chunk embedded, the top {LIMIT} of each search; SciFact judgments {args.qrels.name}")
    for floor in FLOORS:
        r = report["floors"][str(floor)] = rates(asked, floor)
        mark = " (default)" if floor == default else ""
        print(
            f"  floor {floor:.2f}{mark}: answers in the top 5 {r['short_kept'][0]}/{r['short_kept'][1]} short, "
            f"{r['long_kept'][0]}/{r['long_kept'][1]} long; unanswerable rejected {r['short_rejected'][0]}/"
            f"{r['short_rejected'][1]} short, {r['long_rejected'][0]}/{r['long_rejected'][1]} long; SciFact nDCG@10 "
            f"{r['scifact_ndcg10']:.4f} ({r['scifact_empty'][0]} of {r['scifact_empty'][1]} empty)"
        )
    report["profiles"] = profiles(asked, default)
    print(f"at the default floor {default}, quartiles (least, 25 %, median, 75 %, most):")
    for name, p in report["profiles"].items():
        print(f"  {name} ({p['n']}):")
        for key, values in p.items():
            if key != "n":
                print(f"    {key}: {values}")
    print(f"the floor {default} lifted for queries of N or more content words:")
    for n in LIFTED_FROM:
        r = report["lifted"][str(n)] = rates(asked, lifted(n, default))
        print(
            f"  N = {n}: SciFact nDCG@10 {r['scifact_ndcg10']:.4f} ({r['scifact_empty'][0]} empty); long "
            f"unanswerable rejected {r['long_rejected'][0]}/{r['long_rejected'][1]}, short "
            f"{r['short_rejected'][0]}/{r['short_rejected'][1]}; answers kept {r['short_kept'][0]} short, "
            f"{r['long_kept'][0]} long"
        )
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
