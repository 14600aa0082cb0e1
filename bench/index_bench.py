"""Index benchmark: agentmd against a floor measured in the same run, on a synthetic 10,000-note vault.

Floor (what any Python engine on tantivy must pay): a stat walk, reading every note, parsing every
frontmatter block with libyaml, and raw tantivy indexing of the same text in one commit. Measured
against it: `reindex --from-scratch` (reconcile into an empty index and catalog), a reconcile of the
unchanged vault (against the bare stat walk), and search latency over 200 queries.

Prints one JSON object, then a human summary. Medians of --runs runs (default 3).
This script imports tantivy directly for the floor only; the product goes through engine/index.py.

    .venv/bin/python bench/index_bench.py [--notes 10000] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

import tantivy
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.search.searcher import SearchRequest, search
from agentmd.rules import load_contract

FOLDERS = [
    "projects/atlas",
    "projects/borealis",
    "memory/decisions",
    "memory/conventions",
    "daily",
    "references",
    "people",
    "inbox",
    "memory/lessons",
    "archive/2024",
]
TYPES = ["decision", "convention", "lesson", "reference", "fact", None]


# Shared by the daemon, capture and hook benchmarks.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "b@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@localhost",
}


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(vault), *args], check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout


def wait_for(pred: Callable[[], bool], timeout: float = 30.0, step: float = 0.002) -> float:
    """Seconds until `pred()` holds; TimeoutError past `timeout`."""
    start = time.perf_counter()
    pause = threading.Event()
    while not pred():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not met in time")
        pause.wait(step)
    return time.perf_counter() - start


ENGLISH = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora" / "vaultofknowledge"


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Made-up words of 3 to 10 letters (alphabetical order, so a word's rank says nothing of its letters)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def english(corpus: Path = ENGLISH, size: int = 6000) -> list[str]:
    """The `size` commonest words of 3 to 14 letters in a real English vault, commonest first: a question
    made of them is cut into as many word pieces by the embedding model, and spread over the index's terms,
    as a person's question is (a made-up word is cut into three or four pieces)."""
    counts: Counter[str] = Counter()
    for path in sorted(corpus.rglob("*.md")):
        counts.update(re.findall(r"\b[a-z]{3,14}\b", path.read_text(encoding="utf-8", errors="replace").lower()))
    if len(counts) < size:
        raise SystemExit(f"{corpus} holds {len(counts)} distinct words, fewer than the {size} asked for")
    return [w for w, _n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]]


def generate(root: Path, n: int, seed: int = 7, words_of: list[str] | None = None) -> list[str]:
    """Write `n` notes under `root` and return their titles. Words are drawn from `words_of` (ranked,
    commonest first) or from made-up words, with Zipf-like frequencies."""
    rng = random.Random(seed)
    vocab = vocabulary(rng) if words_of is None else words_of
    # Zipf-like; cumulative once (the same draws as passing the weights, without summing them at every call)
    cum_weights = list(accumulate(1 / (i + 1) for i in range(len(vocab))))

    def words(k: int) -> str:
        return " ".join(rng.choices(vocab, cum_weights=cum_weights, k=k))

    # a title of real words is not made of the commonest ones ("the", "and", "with")
    named = vocab[150:] if words_of is not None else vocab
    named_weights = cum_weights if words_of is None else list(accumulate(1 / (i + 1) for i in range(len(named))))

    def title_words(k: int) -> str:
        return " ".join(rng.choices(named, cum_weights=named_weights, k=k))

    titles = []
    for i in range(n):
        folder = FOLDERS[i % len(FOLDERS)]
        title = title_words(rng.randint(2, 5))
        titles.append(title)
        slug = "-".join(title.split())[:60] + f"-{i}"
        t = rng.choice(TYPES)
        fm = [
            "---",
            f"title: {title.capitalize()}",
            f"date: 2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            f"tags: [{', '.join(rng.sample(vocab[:200], 3))}]",
        ]
        if t:
            fm.append(f"type: {t}")
        fm.append(f"status: {rng.choice(['active', 'active', 'active', 'unfiled', 'archived'])}")
        if rng.random() < 0.3:
            fm.append(f"aliases: [{words(2)}]")
        fm.append("---")
        body = [f"# {title.capitalize()}", "", words(rng.randint(20, 60)), ""]
        for _h in range(rng.randint(1, 4)):
            body += [f"## {words(2).capitalize()}", "", words(rng.randint(30, 90))]
            if rng.random() < 0.5:
                body.append(f"See [[{rng.choice(titles)}]] and #{rng.choice(vocab[:100])}.")
            body.append("")
        path = root / folder / f"{slug}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(fm + body) + "\n", encoding="utf-8")
    return titles


def stat_walk(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.endswith(".md"):
                p = os.path.join(dirpath, f)
                os.stat(p)
                out.append(p)
    return out


def floor(root: Path, tmp: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    paths = stat_walk(root)
    t1 = time.perf_counter()
    texts = []
    for p in paths:
        with open(p, "rb") as fh:
            texts.append(fh.read().decode("utf-8"))
    t2 = time.perf_counter()
    parsed = []
    for text in texts:
        end = text.find("\n---", 3)
        parsed.append((yaml.load(text[4:end], Loader=yaml.CSafeLoader), text[end + 4 :]))
    t3 = time.perf_counter()
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("body", stored=True, tokenizer_name="en_stem")
    idx_dir = tmp / f"floor-{time.time_ns()}"
    idx_dir.mkdir()
    index = tantivy.Index(sb.build(), path=str(idx_dir))
    writer = index.writer(heap_size=128_000_000, num_threads=0)
    for p, (fm, body) in zip(paths, parsed, strict=True):
        writer.add_document(tantivy.Document(path=p, title=str(fm.get("title", "")), body=body))
    writer.commit()
    writer.wait_merging_threads()
    t4 = time.perf_counter()
    shutil.rmtree(idx_dir)
    return {
        "stat_walk": t1 - t0,
        "read_all": t2 - t1,
        "yaml_parse": t3 - t2,
        "tantivy_index": t4 - t3,
        "total": t4 - t0,
    }


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--keep", help="generate the vault here and keep it")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="agentmd-bench-"))
    root = Path(args.keep) if args.keep else tmp / "vault"
    root.mkdir(parents=True, exist_ok=True)
    titles = generate(root, args.notes)
    contract = load_contract(None).contract
    rng = random.Random(11)

    floors, builds, unchanged, walks = [], [], [], []
    latencies: list[float] = []
    cache = tmp / "cache"
    for _ in range(args.runs):
        floors.append(floor(root, tmp))
        shutil.rmtree(cache, ignore_errors=True)
        t0 = time.perf_counter()
        with Store(cache, from_scratch=True) as store:
            report = reconcile(root, store)
        builds.append(time.perf_counter() - t0)
        assert report.added == args.notes, report.to_dict()
        with Store(cache) as store:
            t0 = time.perf_counter()
            stat_walk(root)
            walks.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            r = reconcile(root, store)
            unchanged.append(time.perf_counter() - t0)
            assert r.changed == 0
    with Store(cache) as store:
        queries = []
        for _ in range(args.queries):
            words = rng.choice(titles).split()
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))))
        for q in queries[:20]:  # warm the page cache and the searcher
            search(store.index, contract, SearchRequest(q))
        hits = 0
        for q in queries:
            t0 = time.perf_counter()
            resp = search(store.index, contract, SearchRequest(q))
            latencies.append((time.perf_counter() - t0) * 1000)
            hits += bool(resp.results)

    med = statistics.median
    floor_total = med(f["total"] for f in floors)
    result = {
        "notes": args.notes,
        "runs": args.runs,
        "floor_s": {k: round(med(f[k] for f in floors), 4) for k in floors[0]},
        "reindex_from_scratch_s": round(med(builds), 4),
        "build_ratio_to_floor": round(med(builds) / floor_total, 2),
        "stat_walk_s": round(med(walks), 4),
        "unchanged_reconcile_s": round(med(unchanged), 4),
        "unchanged_ratio_to_stat_walk": round(med(unchanged) / med(walks), 2),
        "search_ms": {
            "p50": round(percentile(latencies, 0.5), 3),
            "p99": round(percentile(latencies, 0.99), 3),
            "queries": len(latencies),
            "with_results": hits,
        },
        "bars": {
            "build_ratio_max": 3.0,
            "unchanged_ratio_max": 2.0,
            "search_p50_ms_max": 5.0,
            "search_p99_ms_max": 25.0,
        },
    }
    result["pass"] = {
        "build": result["build_ratio_to_floor"] <= 3.0,
        "unchanged": result["unchanged_ratio_to_stat_walk"] <= 2.0,
        "search_p50": result["search_ms"]["p50"] <= 5.0,
        "search_p99": result["search_ms"]["p99"] <= 25.0,
    }
    print(json.dumps(result, indent=2))
    f = result["floor_s"]
    print(
        f"\n{args.notes} notes, medians of {args.runs} runs\n"
        f"  floor: stat {f['stat_walk']:.3f}s + read {f['read_all']:.3f}s + yaml {f['yaml_parse']:.3f}s"
        f" + tantivy {f['tantivy_index']:.3f}s = {f['total']:.3f}s\n"
        f"  reindex --from-scratch {result['reindex_from_scratch_s']:.3f}s = {result['build_ratio_to_floor']}x floor"
        f" (bar 3x)\n"
        f"  unchanged reconcile {result['unchanged_reconcile_s']:.4f}s vs stat walk {result['stat_walk_s']:.4f}s"
        f" = {result['unchanged_ratio_to_stat_walk']}x (bar 2x)\n"
        f"  search p50 {result['search_ms']['p50']} ms, p99 {result['search_ms']['p99']} ms (bars 5 / 25 ms)"
    )
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
