"""Train the directive model (rules/prefilter/directive_model.npz) and measure it.

Positives: the directive rows of the payload rounds (tests/fixtures/payloads/directives*.jsonl). Negatives: the
benign and secret rows of the same rounds, every passage of every note of the four shared vaults (../shared/corpora)
and the first SciFact abstracts. `directives_tests.jsonl` and `benign_tests.jsonl` are the texts the prefilter and
hook tests hold (string literals of tests/rules/prefilter and tests/hooks, split by the verdict the rules gave them
when they were taken, which the tests hold the rules to): the look-alikes written against the rules. Rows marked
`holdout` (and the `*_holdout` files) are never trained on. A payload row is one example while it is short; a long
one is read as its passages, and after a first fit only its highest-scoring passage stays a positive (the rest of a
long payload is often an ordinary note around the order).

The model is logistic regression over the hashed features of `directive_model.features`, fitted with Adam on
mini-batches, an L2 penalty, negatives weighted so both classes weigh the same. Every training example is
scored out of fold (four folds by a hash of its text); the threshold is the lowest probability at which at most
`--row-fp` of the benign rows and `--note-fp` of the vault notes would be refused, unless `--threshold` gives
it. The model runs after the rules (rules/prefilter/directives.py), so what it adds is measured with them by
bench/prefilter_rounds.py and bench/prefilter_fp.py.

    .venv/bin/python bench/train_directive_model.py            # fit on everything but the held-out rows, write
    .venv/bin/python bench/train_directive_model.py --rounds fresh10 ...   # also: leave these rounds out in turn
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from prefilter_helpers import expand  # noqa: E402
from prefilter_rounds import UNREAD  # noqa: E402

from agentmd.rules.prefilter.directive_model import (  # noqa: E402
    BUCKETS,
    CHAR_FLOOR,
    WORD_FLOOR,
    features,
    model_view,
    readings,
    scale,
)

PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
CORPORA = ROOT.parent / "shared" / "corpora"
VAULTS = ("dendron-site", "obsidian-tasks", "vaultofknowledge", "ailurus-zh")
OUT = ROOT / "rules" / "prefilter" / "directive_model.npz"
SHORT = 1500  # a payload row up to this many characters is one example


@dataclass
class Example:
    group: str  # the payload round, or "vault:<name>", or "ir"
    label: int
    text: str
    holdout: bool
    source: str  # file, or note path


def payload_rows() -> list[Example]:
    out: list[Example] = []
    unread = {name for name, _family, _templated in UNREAD}  # neither trained on nor read, not even in sum
    for path in sorted(PAYLOADS.glob("*.jsonl")):
        name = path.stem
        if name in unread:
            continue
        family = name.split("_", 1)[0]
        round_ = name.removesuffix("_holdout").removesuffix("_benign").partition("_")[2] or "first"
        numbered = round_.removeprefix("fresh")
        templated = family == "secrets" or (family == "benign" and numbered.isdigit() and int(numbered) >= 5)
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for i, line in enumerate(lines):
            row = json.loads(line)
            text = expand(row["text"], i) if templated else row["text"]
            held = name.endswith("_holdout") or row.get("split") == "holdout"
            out.append(Example(round_, int(family == "directives"), text, held, name))
    return out


def vault_notes() -> list[Example]:
    out: list[Example] = []
    for vault in VAULTS:
        root = CORPORA / vault
        for p in sorted(root.rglob("*.md")):
            rel = p.relative_to(root)
            if p.is_file() and not any(part.startswith(".") for part in rel.parts):
                out.append(
                    Example(f"vault:{vault}", 0, p.read_text(encoding="utf-8", errors="replace"), False, str(rel))
                )
    return out


def abstracts(limit: int | None = None) -> list[Example]:
    out: list[Example] = []
    path = CORPORA / "ir" / "scifact" / "corpus.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines()[:limit]:
            doc = json.loads(line)
            out.append(Example("ir", 0, f"{doc.get('title', '')}\n{doc.get('text', '')}", False, doc["_id"]))
    return out


class Matrix:
    """Passages as rows of a sparse binary matrix, each feature set scaled to unit length."""

    def __init__(self) -> None:
        self.indices: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.owner: list[int] = []

    def add(self, text: str, owner: int) -> None:
        chars, words = features(text)
        idx = np.concatenate([chars, words])
        val = np.concatenate(
            [np.full(len(chars), scale(len(chars), CHAR_FLOOR)), np.full(len(words), scale(len(words), WORD_FLOOR))]
        )
        self.indices.append(idx)
        self.values.append(val.astype(np.float32))
        self.owner.append(owner)


def margins(w: np.ndarray, b: float, indptr: np.ndarray, idx: np.ndarray, val: np.ndarray) -> np.ndarray:
    prods = np.append(w[idx] * val, 0.0)
    sums = np.add.reduceat(prods, indptr[:-1])
    sums[indptr[:-1] == indptr[1:]] = 0.0
    return sums + b


def fit(
    rows: list[tuple[np.ndarray, np.ndarray]], y: np.ndarray, sw: np.ndarray, epochs: int, l2: float, seed: int
) -> tuple[np.ndarray, float]:
    """Logistic regression by Adam on mini-batches of 256 rows."""
    rng = np.random.default_rng(seed)
    w = np.zeros(BUCKETS, dtype=np.float64)
    b = 0.0
    m_w = np.zeros_like(w)
    v_w = np.zeros_like(w)
    m_b = v_b = 0.0
    lr, beta1, beta2, eps = 0.02, 0.9, 0.999, 1e-8
    step = 0
    n = len(rows)
    total = float(sw.sum())
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, 256):
            batch = order[start : start + 256]
            idx = np.concatenate([rows[i][0] for i in batch])
            val = np.concatenate([rows[i][1] for i in batch])
            lengths = np.array([len(rows[i][0]) for i in batch])
            indptr = np.concatenate([[0], np.cumsum(lengths)])
            z = margins(w, b, indptr, idx, val)
            p = 1 / (1 + np.exp(-np.clip(z, -30, 30)))
            g_row = (p - y[batch]) * sw[batch] / total * n / len(batch)
            g_w = np.bincount(idx, weights=np.repeat(g_row, lengths) * val, minlength=BUCKETS) + l2 * w
            g_b = float(g_row.sum())
            step += 1
            m_w = beta1 * m_w + (1 - beta1) * g_w
            v_w = beta2 * v_w + (1 - beta2) * g_w * g_w
            m_b = beta1 * m_b + (1 - beta1) * g_b
            v_b = beta2 * v_b + (1 - beta2) * g_b * g_b
            corr = np.sqrt(1 - beta2**step) / (1 - beta1**step)
            w -= lr * corr * m_w / (np.sqrt(v_w) + eps)
            b -= lr * corr * m_b / (np.sqrt(v_b) + eps)
    return w, b


def example_passages(ex: Example) -> list[str]:
    view = model_view(ex.text)
    found = [p.text for p in readings(view)]
    if ex.label and len(view) <= SHORT and len(found) > 1:
        found.append(view.strip())
    return found or [view]


def note_scores(w: np.ndarray, b: float, feats: list[list[tuple[np.ndarray, np.ndarray]]]) -> np.ndarray:
    out = np.full(len(feats), -np.inf)
    for i, rows in enumerate(feats):
        if rows:
            out[i] = max(float(w[idx] @ val) + b for idx, val in rows)
    return out


def featurise(examples: list[Example]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    out = []
    for ex in examples:
        m = Matrix()
        for text in example_passages(ex):
            m.add(text, 0)
        out.append(list(zip(m.indices, m.values, strict=True)))
    return out


def train(
    examples: list[Example], feats: list[list[tuple[np.ndarray, np.ndarray]]], args: argparse.Namespace
) -> tuple[np.ndarray, float]:
    """Two fits: the first on every passage of a positive row, the second on its best passage alone (with the
    whole row when it is short)."""
    chosen: list[list[int]] = [list(range(len(f))) for f in feats]
    w = np.zeros(BUCKETS)
    b = 0.0
    for round_ in range(2):
        rows, y, sw = [], [], []
        for ex, f, keep in zip(examples, feats, chosen, strict=True):
            weight = 1.0 if ex.group.startswith(("vault:", "ir")) else args.row_weight
            for k in keep:
                rows.append(f[k])
                y.append(ex.label)
                sw.append(weight / max(len(keep), 1) if ex.label else weight)
        y_arr = np.array(y, dtype=np.float64)
        sw_arr = np.array(sw, dtype=np.float64)
        pos = sw_arr[y_arr == 1].sum()
        neg = sw_arr[y_arr == 0].sum()
        sw_arr[y_arr == 1] *= neg / pos
        w, b = fit(rows, y_arr, sw_arr, args.epochs, args.l2, seed=round_)
        if round_ == 0:
            for i, (ex, f) in enumerate(zip(examples, feats, strict=True)):
                if ex.label and len(f) > 1:
                    scores = [float(w[idx] @ val) for idx, val in f]
                    best = int(np.argmax(scores))
                    chosen[i] = sorted({best, len(f) - 1}) if len(model_view(ex.text)) <= SHORT else [best]
    return w, b


def threshold(scores: np.ndarray, share: float) -> float:
    """The lowest margin that refuses at most `share` of these notes."""
    allowed = int(np.floor(share * len(scores)))
    ordered = np.sort(scores)[::-1]
    return float(ordered[allowed]) + 1e-6 if allowed < len(ordered) else float(ordered[-1])


MISSES: list[str] = []


def report(name: str, examples: list[Example], scores: np.ndarray, cut: float) -> dict[str, object]:
    for ex, s in zip(examples, scores, strict=True):
        if (s > cut) != bool(ex.label):
            MISSES.append(f"{name} {ex.source} {'missed' if ex.label else 'refused'} {s:.2f}: {ex.text[:150]!r}")
    pos = [s for ex, s in zip(examples, scores, strict=True) if ex.label]
    neg = [s for ex, s in zip(examples, scores, strict=True) if not ex.label]
    return {
        "directives": f"{sum(s > cut for s in pos)}/{len(pos)}",
        "others_refused": f"{sum(s > cut for s in neg)}/{len(neg)}",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--l2", type=float, default=1e-6)
    ap.add_argument("--row-weight", type=float, default=10.0, help="weight of a payload row against a vault passage")
    ap.add_argument("--note-fp", type=float, default=0.001, help="share of vault notes the threshold may refuse")
    ap.add_argument("--row-fp", type=float, default=0.005, help="share of benign payload rows it may refuse")
    ap.add_argument("--threshold", type=float, default=0.0, help="the probability to refuse at (0: from the shares)")
    ap.add_argument("--rounds", nargs="*", help="leave these rounds out in turn and report them (none: only fit)")
    ap.add_argument("--misses", action="store_true", help="print the rows the model gets wrong")
    ap.add_argument("--veto", type=float, default=0.119, help="under this a line's rule refusal is overruled")
    ap.add_argument("--oof-out", help="write every training example's out-of-fold margin here (JSON lines)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    started = time.perf_counter()
    payload = payload_rows()
    notes = vault_notes()
    ir = abstracts()
    ir_train, ir_test = ir[:1500], ir[1500:]
    train_set = [e for e in payload if not e.holdout] + notes + ir_train
    feats = featurise(train_set)
    out: dict[str, object] = {"examples": len(train_set), "featurised_s": round(time.perf_counter() - started, 1)}
    # out-of-fold scores: four folds by a hash of the text, each scored by a model trained on the other three
    fold = np.array([zlib.crc32(e.text.encode()) % 4 for e in train_set])
    oof = np.zeros(len(train_set))
    for k in range(4):
        keep = np.flatnonzero(fold != k)
        w, b = train([train_set[i] for i in keep], [feats[i] for i in keep], args)
        for i in np.flatnonzero(fold == k):
            oof[i] = note_scores(w, b, [feats[i]])[0]
    is_note = np.array([e.group.startswith("vault:") for e in train_set])
    is_row = np.array([not e.group.startswith(("vault:", "ir")) for e in train_set])
    label = np.array([e.label for e in train_set])
    if args.threshold:
        cut = float(np.log(args.threshold / (1 - args.threshold)))
    else:
        cut = max(threshold(oof[is_note], args.note_fp), threshold(oof[is_row & (label == 0)], args.row_fp))
    if args.oof_out:
        rows = [
            {"source": e.source, "label": e.label, "margin": float(m), "text": e.text}
            for e, m in zip(train_set, oof, strict=True)
            if e.group not in ("ir",)
        ]
        Path(args.oof_out).write_text(
            "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8"
        )
    out["threshold_margin"] = round(cut, 4)
    out["threshold_probability"] = round(float(1 / (1 + np.exp(-cut))), 4)
    out["out_of_fold"] = {
        "orders_refused": f"{int((oof[label == 1] > cut).sum())}/{int((label == 1).sum())}",
        "benign_rows_refused": f"{int((oof[is_row & (label == 0)] > cut).sum())}/{int((is_row & (label == 0)).sum())}",
        "vault_notes_refused": f"{int((oof[is_note] > cut).sum())}/{int(is_note.sum())}",
    }
    for held in args.rounds or []:
        keep = [i for i, e in enumerate(train_set) if e.group != held]
        w, b = train([train_set[i] for i in keep], [feats[i] for i in keep], args)
        test = [e for e in payload if e.group == held]
        out[f"round {held} left out"] = report(held, test, note_scores(w, b, featurise(test)), cut)
    w, b = train(train_set, feats, args)
    held_rows = [e for e in payload if e.holdout]
    out["holdout_rows"] = report("holdout", held_rows, note_scores(w, b, featurise(held_rows)), cut)
    out["train_rows"] = report(
        "train",
        [e for e in payload if not e.holdout],
        note_scores(w, b, feats[: sum(not e.holdout for e in payload)]),
        cut,
    )
    out["abstracts_refused"] = f"{int((note_scores(w, b, featurise(ir_test)) > cut).sum())}/{len(ir_test)}"
    out["seconds"] = round(time.perf_counter() - started, 1)
    if not args.no_write:
        probability = 1 / (1 + np.exp(-cut))
        np.savez_compressed(
            OUT,
            weights=w.astype(np.float16),
            bias=np.float64(b),
            threshold=np.float64(probability),
            veto=np.float64(args.veto),
        )
        out["written"] = str(OUT.relative_to(ROOT))
    print(json.dumps(out, indent=1))
    if args.misses:
        print("\n".join(MISSES))


if __name__ == "__main__":
    main()
