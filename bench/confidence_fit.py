"""Fit the score (engine/search/confidence.py) across the shared vaults, leaving one vault out, and compare it
with the score shipped.

Every question of the dev files (bench/fixtures/dev-*.jsonl; `long-*` too) and every prompt of the train prompt
file (bench/fixtures/prompts-vaultofknowledge.jsonl, the hook's query) is searched lexically (the default mode
without an arm, `fusion`; limit 15; floor 0), and each result's signals are read (`confidence.signals`).
Positives: the expected note (or an alternate) of an answerable question when it is in the top 5, and the expected
note of a helpful prompt. Negatives: the top 5 of every question no note answers, and every result of a prompt the
vault cannot help with. A logistic model over the signals is fitted by gradient descent on class-balanced log
loss (L2 `--l2`), on three vaults and read on the fourth, in turn; then on all four (the coefficients to ship).

Each score is read the way the product reads it, at the contract's floors: the search floor (scaled in a small
vault) for the questions (answers kept in the top 5, unanswerable questions left with nothing) and the recall
floor for the prompts (coding prompts with no result at it: the hook stays silent; helpful prompts whose note
reaches it). Held-out files are read only with `--holdout`, once, for the final report.

    .venv/bin/python bench/confidence_fit.py --work /tmp/fit [--holdout] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.recall.query import sanitize_query
from agentmd.engine.search import confidence as conf
from agentmd.engine.search.planning import content_query
from agentmd.engine.search.query import search
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
VAULTS = ("ailurus-zh", "dendron-site", "obsidian-tasks", "vaultofknowledge")
LIMIT = 15
DEPTH = 5
CONTRACT = default_contract()
SEARCH_FLOOR = CONTRACT.thresholds.search_floor
RECALL_FLOOR = CONTRACT.thresholds.recall_floor


@dataclass
class Case:
    vault: str
    part: str  # dev | holdout | prompts | prompts-holdout | prompts-fresh
    id: str
    expected: frozenset[str]  # empty: no note answers it
    rows: list[tuple[str, conf.Signals]]
    floor_scale: float  # the search floor's scale in this vault


def files_of(vault: str, holdout: bool) -> list[tuple[str, Path]]:
    if holdout:
        parts = [("holdout", p) for p in sorted(FIXTURES.glob(f"holdout-{vault}.jsonl"))]
        if vault == "vaultofknowledge":
            parts += [("prompts-holdout", FIXTURES / "prompts-vaultofknowledge-holdout.jsonl")]
            parts += [("prompts-fresh", FIXTURES / "prompts-vaultofknowledge-fresh.jsonl")]
        return parts
    parts = [("dev", p) for p in sorted(FIXTURES.glob(f"dev-{vault}*.jsonl"))]
    parts += [("dev", p) for p in sorted(FIXTURES.glob(f"long-{vault}.jsonl"))]
    if vault == "vaultofknowledge":
        parts += [("prompts", FIXTURES / "prompts-vaultofknowledge.jsonl")]
    return parts


def collect(work: Path, holdout: bool) -> list[Case]:
    cases: list[Case] = []
    for vault in VAULTS:
        cache = work / vault
        with Store(cache) as store:
            reconcile(CORPORA / vault, store, allow_mass_delete=True)
            scale = min(1.0, store.index.doc_count() / conf.MISSING_FULL_AT)
            for part, path in files_of(vault, holdout):
                for line in path.read_text(encoding="utf-8").splitlines():
                    if not line.strip():
                        continue
                    d = json.loads(line)
                    prompt = "prompt" in d
                    query = sanitize_query(d["prompt"]) if prompt else d["query"]
                    expected = [d["expected"], *d.get("alternates", [])] if d.get("expected") else []
                    rows: list[tuple[str, conf.Signals]] = []
                    if query:
                        request = SearchRequest(query=query, limit=LIMIT, floor=0.0)
                        got = search(store.index, CONTRACT, request, store.catalog).results
                        sigs = conf.signals(store.index, content_query(request), got)
                        rows = [(r.note, s) for r, s in zip(got, sigs, strict=True)]
                    cases.append(Case(vault, part, str(d["id"]), frozenset(expected), rows, scale))
    return cases


def features(s: conf.Signals) -> list[float]:
    ev = s.evidence
    return [
        ev.word_share,
        ev.coverage,
        math.log(max(ev.words, 1)),
        ev.title_share,
        ev.rarity,
        s.missing,
        float(s.named),
        float(s.named_within),
    ]


NAMES = ("word_share", "coverage", "ln_words", "title_share", "rarity", "missing", "named", "named_within")


def training_rows(cases: Sequence[Case]) -> tuple[list[list[float]], list[int]]:
    x: list[list[float]] = []
    y: list[int] = []
    for c in cases:
        if c.part not in ("dev", "prompts"):
            continue
        if c.expected:
            for note, s in c.rows[:DEPTH] if c.part == "dev" else c.rows:
                if note in c.expected and not s.entity:
                    x.append(features(s))
                    y.append(1)
                    break
        else:
            rows = c.rows[:DEPTH] if c.part == "dev" else c.rows
            seen: set[str] = set()
            for note, s in rows:
                if note not in seen and not s.entity:
                    seen.add(note)
                    x.append(features(s))
                    y.append(0)
    return x, y


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


def fit(x: list[list[float]], y: list[int], l2: float, steps: int = 20000, rate: float = 0.5) -> list[float]:
    """Class-balanced logistic regression by full-batch gradient descent (features are on scales near 1)."""
    import numpy as np

    a = np.hstack([np.ones((len(x), 1)), np.asarray(x, dtype=float)])
    t = np.asarray(y, dtype=float)
    n, pos = len(t), t.sum()
    weight = np.where(t == 1, n / (2 * pos), n / (2 * (n - pos)))
    w = np.zeros(a.shape[1])
    ridge = np.full(a.shape[1], l2)
    ridge[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -30, 30)))
        w -= rate * (a.T @ ((p - t) * weight) / n + ridge * w)
    return [float(v) for v in w]


def fitted(w: Sequence[float]) -> Callable[[conf.Signals], float]:
    def f(s: conf.Signals) -> float:
        if s.entity:
            return conf.ENTITY_CONFIDENCE
        return sigmoid(w[0] + sum(a * b for a, b in zip(w[1:], features(s), strict=True)))

    return f


def measure(
    cases: Sequence[Case],
    f: Callable[[conf.Signals], float],
    search_floor: float = SEARCH_FLOOR,
    recall_floor: float = RECALL_FLOOR,
) -> dict[str, list[int]]:
    """[count, of] per figure: answers kept in the top 5 and unanswerable questions rejected through the search
    floor (scaled in a small vault); coding prompts silent and helpful prompts kept at the recall floor."""
    out = {"hit@5": [0, 0], "rejected": [0, 0], "silent": [0, 0], "kept": [0, 0]}
    for c in cases:
        scored = [(note, f(s)) for note, s in c.rows]
        if c.part.startswith("prompts"):
            passing = [note for note, v in scored if v >= recall_floor]
            key, good = ("kept", bool(c.expected & set(passing))) if c.expected else ("silent", not passing)
        else:
            floor = search_floor * c.floor_scale
            kept = [note for note, v in scored if v >= floor]
            key, good = ("hit@5", bool(c.expected & set(kept[:DEPTH]))) if c.expected else ("rejected", not kept)
        out[key][0] += int(good)
        out[key][1] += 1
    return out


def show(label: str, m: dict[str, list[int]]) -> str:
    return f"{label:<34}" + "  ".join(f"{k} {a}/{b}" for k, (a, b) in m.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True, type=Path, help="a folder for the vaults' indexes (kept)")
    ap.add_argument("--holdout", action="store_true", help="also read the held-out files, once, at the end")
    ap.add_argument("--l2", type=float, default=0.0001)
    ap.add_argument("--search-at", type=float, default=0.65, help="the fitted score's search threshold")
    ap.add_argument("--recall-at", type=float, default=0.70, help="the fitted score's recall threshold")
    ap.add_argument("--json", type=Path, help="write the coefficients fitted on every vault here")
    ap.add_argument("--seed-index", type=Path, help="copy <DIR>-<vault> as a vault's index before the first run")
    args = ap.parse_args()
    if args.seed_index:
        for vault in VAULTS:
            seed, target = Path(f"{args.seed_index}-{vault}"), args.work / vault
            if seed.is_dir() and not target.exists():
                shutil.copytree(seed, target)
    cases = collect(args.work, holdout=False)
    print(show("shipped (stacked curves), dev", measure(cases, conf.stacked)))
    thresholds = [t / 100 for t in range(30, 96, 5)]
    figures = ("hit@5", "rejected", "silent", "kept")
    total = {t: {k: [0, 0] for k in figures} for t in thresholds}
    for vault in VAULTS:
        w = fit(*training_rows([c for c in cases if c.vault != vault]), l2=args.l2)
        test = [c for c in cases if c.vault == vault]
        print(show(f"  {vault}: shipped", measure(test, conf.stacked)))
        for t in thresholds:
            m = measure(test, fitted(w), t, t)
            for k in figures:
                total[t][k] = [total[t][k][0] + m[k][0], total[t][k][1] + m[k][1]]
    for t in thresholds:
        print(show(f"fitted, each vault left out, at {t:.2f}", total[t]))
    w = fit(*training_rows(cases), l2=args.l2)
    print("fitted on all four: " + ", ".join(f"{n} {v:.3f}" for n, v in zip(("intercept", *NAMES), w, strict=True)))
    for t in thresholds:
        print(show(f"fitted on all four, dev, at {t:.2f}", measure(cases, fitted(w), t, t)))
    if args.json:
        args.json.write_text(json.dumps(dict(zip(("intercept", *NAMES), w, strict=True)), indent=1) + "\n")
    if args.holdout:
        held = collect(args.work, holdout=True)
        print(show("held out: shipped", measure(held, conf.stacked)))
        at = f"at {args.search_at:.2f} / {args.recall_at:.2f}"
        print(show(f"held out: fitted, {at}", measure(held, fitted(w), args.search_at, args.recall_at)))
        print(show("held out: fitted, at the contract's floors", measure(held, fitted(w))))


if __name__ == "__main__":
    main()
