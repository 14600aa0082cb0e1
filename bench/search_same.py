"""Whether two versions of the search code give the same answers: every field of every response, results,
scores, confidences, sections and snippets included, over the dev fixtures' queries on the shared vaults.

The search code is made faster without changing what it returns; this script is how that is checked. Run
it once with `--save` on the old code and once with `--check` on the new, over the same work folder (the
index, catalog and vectors of each vault are built there once and kept, so both runs read the very same
files):

    .venv/bin/python bench/search_same.py --work /tmp/same --save /tmp/same/before.jsonl   # old code
    .venv/bin/python bench/search_same.py --work /tmp/same --check /tmp/same/before.jsonl  # new code

Each query of bench/fixtures/dev-*.jsonl and each prompt of bench/fixtures/prompts-*.jsonl (the recall
hook's queries) runs in the lexical modes (`fusion`, `and`, and `fusion` with three sections a note and
`--explain`) and in `hybrid` (plain and with `--explain`), each twice in a row, so the memos a repeated
query meets are checked too. The dense arm reads vectors from a stand-in embedder
(a deterministic unit vector per text, as bench/search_bench.py fills its store), so no model is needed
and the vectors are the same on every run. Exit status 1 and the first differences when any response
differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_bench import StandIn

from agentmd.engine.index.embedder import MODEL_ID
from agentmd.engine.index.reconcile import reconcile
from agentmd.engine.index.store import Store
from agentmd.engine.index.vector_refresh import refresh
from agentmd.engine.index.vectors import VectorStore
from agentmd.engine.search.hybrid import DenseArm
from agentmd.engine.search.query import search
from agentmd.engine.search.searcher import SearchRequest
from agentmd.rules import default_contract

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
REQUESTS: list[dict[str, Any]] = [
    {"mode": "fusion"},
    {"mode": "and"},
    {"mode": "fusion", "per_note": 3, "explain": True},
    {"mode": "hybrid"},
    {"mode": "hybrid", "explain": True, "limit": 5},
]


def fixture_queries() -> dict[str, list[str]]:
    """corpus -> the dev fixtures' queries over it and the prompt fixtures' prompts (the recall hook's
    queries, over the vault their file names), in file order, without repeats."""
    out: dict[str, list[str]] = {}
    for path in sorted(FIXTURES.glob("dev-*.jsonl")) + sorted(FIXTURES.glob("prompts-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                corpus = row.get("corpus") or path.stem.removeprefix("prompts-").removesuffix("-holdout")
                queries = out.setdefault(corpus, [])
                text = row.get("query") or row["prompt"]
                if text not in queries:
                    queries.append(text)
    return out


def prepared(work: Path, corpus: str, vault: Path) -> tuple[Store, DenseArm]:
    cache = work / corpus
    store = Store(cache)
    if not (cache / "built").exists():
        reconcile(vault, store)
        hashes = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
        vectors = VectorStore(cache, MODEL_ID)
        refresh(vectors, vault, hashes)
        while vectors.embed_pending(StandIn(), 512):
            pass
        vectors.save()
        (cache / "built").write_text("yes\n", encoding="utf-8")
    return store, DenseArm(VectorStore(cache, MODEL_ID), StandIn())


def answers(work: Path, corpora: Path) -> list[dict[str, Any]]:
    contract = default_contract()
    out: list[dict[str, Any]] = []
    for corpus, queries in sorted(fixture_queries().items()):
        store, arm = prepared(work, corpus, corpora / corpus)
        try:
            for query in queries:
                for fields in REQUESTS:
                    for attempt in (1, 2):
                        request = SearchRequest(query=query, **fields)
                        response = search(store.index, contract, request, store.catalog, arm)
                        out.append(
                            {
                                "corpus": corpus,
                                "request": {"query": query, **fields},
                                "attempt": attempt,
                                "response": json.loads(json.dumps(response.to_json())),
                            }
                        )
        finally:
            store.close()
    return out


def differences(before: list[dict[str, Any]], after: list[dict[str, Any]], shown: int = 5) -> list[str]:
    found: list[str] = []
    if len(before) != len(after):
        found.append(f"{len(before)} answers before, {len(after)} now")
    for old, new in zip(before, after, strict=False):
        if old != new:
            lines = [f"{old['corpus']} {json.dumps(old['request'])} (attempt {old['attempt']}):"]
            a, b = old["response"], new["response"]
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key) and key != "results":
                    lines.append(f"  {key}: {a.get(key)!r} -> {b.get(key)!r}")
            ra, rb = a.get("results") or [], b.get("results") or []
            if len(ra) != len(rb):
                lines.append(f"  {len(ra)} results -> {len(rb)}")
            for i, (x, y) in enumerate(zip(ra, rb, strict=False)):
                for key in sorted(set(x) | set(y)):
                    if x.get(key) != y.get(key):
                        lines.append(f"  result {i} {key}: {x.get(key)!r} -> {y.get(key)!r}")
            found.append("\n".join(lines))
            if len(found) >= shown:
                break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="folder for the vaults' indexes and vectors (kept)")
    ap.add_argument("--corpora", default=str(CORPORA), help="the shared corpora folder")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", help="write the answers here")
    group.add_argument("--check", help="compare the answers with the ones saved here")
    args = ap.parse_args()
    got = answers(Path(args.work), Path(args.corpora))
    if args.save:
        Path(args.save).write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in got), encoding="utf-8")
        print(f"{len(got)} answers saved to {args.save}")
        return 0
    saved = [json.loads(line) for line in Path(args.check).read_text(encoding="utf-8").splitlines() if line]
    found = differences(saved, got)
    if found:
        print("\n\n".join(found))
        print(f"\nanswers differ (first {len(found)} shown)")
        return 1
    print(f"{len(got)} answers, every one the same as in {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
