"""Fit the confidence model (engine/search/confidence.py) on a prompt set, and measure it.

For every prompt of the set the hook's query is searched (lexical default mode, no floor); each result
gives one row of features (IDF-weighted word share, plain coverage, ln of the query's content words).
Positives: the expected note of a helpful prompt. Negatives: every result of a prompt the vault cannot
help with. A logistic model is fitted by gradient descent on log loss (L2 0.01); it prints the
coefficients, the train AUC of the model and of the word share alone, and, for candidate floors, the
share of unhelpful prompts left silent and helpful prompts that keep their note (top result level).

    .venv/bin/python bench/confidence_fit.py --vault VAULT --index DIR PROMPTS.jsonl [--holdout H.jsonl]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search import confidence as conf
from agentmd.engine.search.eval.prompts import load_prompts
from agentmd.engine.search.searcher import SearchRequest, search
from agentmd.engine.settings import resolve
from agentmd.hooks.recall.query import sanitize_query
from agentmd.rules import load_contract


def features(ev: conf.Evidence) -> list[float]:
    return [ev.word_share, ev.coverage, math.log(max(ev.words, 1)), ev.title_share, ev.rarity]


def rows_of(store: Store, contract, path: Path) -> list[tuple[str, bool, list[float], bool]]:
    """(prompt id, helpful, features, is the expected note) per result."""
    out = []
    for case in load_prompts(path):
        query = sanitize_query(case.prompt)
        if not query:
            continue
        words = conf.QueryWords(store.index, query)
        res = search(store.index, contract, SearchRequest(query=query, limit=15), store.catalog).to_json()
        for r in res["results"]:
            ev = words.evidence(*words.note_terms(r["note"]))
            out.append((case.id, case.expected is not None, features(ev), r["note"] == case.expected))
    return out


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


def fit(x: list[list[float]], y: list[int], steps: int = 20000, rate: float = 1.0, l2: float = 0.001) -> list[float]:
    w = [0.0] * (len(x[0]) + 1)
    n = len(x)
    pos = sum(y)
    weight = {1: n / (2 * pos), 0: n / (2 * (n - pos))}  # balance the classes
    for _ in range(steps):
        grad = [0.0] * len(w)
        for xi, yi in zip(x, y, strict=True):
            p = sigmoid(w[0] + sum(a * b for a, b in zip(w[1:], xi, strict=True)))
            g = (p - yi) * weight[yi]
            grad[0] += g
            for j, v in enumerate(xi):
                grad[j + 1] += g * v
        for j in range(len(w)):
            w[j] -= rate * (grad[j] / n + (l2 * w[j] if j else 0.0))
    return w


def auc(scores: list[float], y: list[int]) -> float:
    pos = [s for s, t in zip(scores, y, strict=True) if t]
    neg = [s for s, t in zip(scores, y, strict=True) if not t]
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def floors(rows, model) -> None:
    prompts: dict[str, tuple[bool, list[tuple[float, bool]]]] = {}
    for pid, helpful, x, expected in rows:
        prompts.setdefault(pid, (helpful, []))[1].append((model(x), expected))
    for floor in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        silent = sum(1 for h, rs in prompts.values() if not h and all(c < floor for c, _e in rs))
        kept = sum(1 for h, rs in prompts.values() if h and any(c >= floor and e for c, e in rs))
        nu = sum(1 for h, _ in prompts.values() if not h)
        nh = len(prompts) - nu
        print(f"  floor {floor}: silent {silent}/{nu}, kept {kept}/{nh}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("prompts")
    ap.add_argument("--vault", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--holdout")
    args = ap.parse_args()
    settings = resolve(vault=args.vault, index=args.index, config=None)
    contract = load_contract(settings.vault, settings.contract_path).contract
    with Store(settings.cache_dir) as store:
        reconcile(settings.vault, store)
        train = rows_of(store, contract, Path(args.prompts))
        hold = rows_of(store, contract, Path(args.holdout)) if args.holdout else []
    data = [(x, int(e)) for _p, h, x, e in train if e or not h]
    x, y = [d[0] for d in data], [d[1] for d in data]
    w = fit(x, y)
    print(f"rows {len(x)} (positives {sum(y)}); coefficients intercept {w[0]:.3f}, word share {w[1]:.3f}, "
          f"coverage {w[2]:.3f}, ln words {w[3]:.3f}, title share {w[4]:.3f}, rarity {w[5]:.3f}")

    def model(xi: list[float]) -> float:
        return sigmoid(w[0] + sum(a * b for a, b in zip(w[1:], xi, strict=True)))

    def shipped(xi: list[float]) -> float:
        return conf.confidence(conf.Evidence(xi[0], xi[1], round(math.exp(xi[2])), xi[3], xi[4]))

    print(f"train AUC: model {auc([model(a) for a in x], y):.3f}, word share alone {auc([a[0] for a in x], y):.3f}")
    print("train, fitted model:")
    floors(train, model)
    print("train, shipped constants:")
    floors(train, shipped)
    if hold:
        print("holdout, shipped constants:")
        floors(hold, shipped)


if __name__ == "__main__":
    main()
