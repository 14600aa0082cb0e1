"""Conversational memory: LoCoMo conversations as vaults, searched as `agentmd search` and the recall hook do.

LoCoMo (Maharana et al., ACL 2024) holds very long conversations between two people. The shared corpora keep
five of them (`conv/locomo/`, CC BY-NC 4.0: evaluation data only, read from there at run time, never copied
into the project). Each conversation becomes a vault of its own in a temporary folder: one note a session,
dated by its `date_time` (`date` in the frontmatter, the original wording in `date_time`), its speakers in
`speakers`, and one heading a turn, `## D3:5 Caroline`, followed by what was said (a shared photo as its
caption). The vault is indexed by the product's own code (Store + reconcile) and every chunk embedded by the
real model, as `agentmd reindex` does.

Every question but the adversarial ones (category 5) is searched as `agentmd search` runs it: hybrid, limit
10, the contract's search floor (scaled down in a vault of fewer than 100 notes, as always), its clock set to
the conversation's last day (`now`: "last year" in a question is read against it). Scored:

- session level: recall@5 and @10 (an evidence session among the first K results), MRR (1 / the rank of the
  first evidence session, 0 past 10); the whole ranking (no floor) beside it;
- turn level: recall@10 through the section each result points to (`path#D3:5 Caroline`): one of the first
  10 results names an evidence turn;
- the recall hook: the prompt made a query as the hook makes it (`sanitize_query`), searched as the daemon
  answers the hook (hybrid, its recall floor and cosine gate, `gather`), rendered in the hook's budget: was an
  evidence session injected, how many tokens, how often nothing.

Adversarial questions (their answer is not in the conversation) report how often nothing clears the search
floor, and how often the hook injects nothing.

The usual split: tune on conv-26 and conv-30 (`--split train`), report conv-41, conv-42 and conv-43 once
(`--split heldout`). Published figures to compare with (basic-memory, on a 300-question subset, adversarial
left out): recall@5 0.774, recall@10 0.875, MRR 0.697.

Prints one JSON object, then a summary.

    .venv/bin/python bench/locomo.py [--split train|heldout|all] [--conv conv-26 ...] [--corpus DIR]
        [--keep DIR] [--json-out FILE] [--misses N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentmd.engine.index.reconcile import reconcile  # noqa: E402
from agentmd.engine.index.store import Store  # noqa: E402
from agentmd.engine.recall.query import named_stop_words, sanitize_query  # noqa: E402
from agentmd.engine.recall.render import MAX_ENTRIES, Entry, render  # noqa: E402
from agentmd.engine.search import confidence  # noqa: E402
from agentmd.engine.search.query import search  # noqa: E402
from agentmd.engine.search.recall import Walls, gather  # noqa: E402
from agentmd.engine.search.searcher import SearchRequest  # noqa: E402
from agentmd.rules import load_contract  # noqa: E402

TRAIN = ("conv-26", "conv-30")
HELDOUT = ("conv-41", "conv-42", "conv-43")
ADVERSARIAL = 5
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LIMIT = 10  # `agentmd search` shows 10 results by default
PUBLISHED = {"basic-memory": {"recall@5": 0.774, "recall@10": 0.875, "mrr": 0.697}}
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D(\d+):(\d+)")
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
               "november", "december")  # fmt: skip
_MONTHS = {m: i for i, m in enumerate(MONTH_NAMES, 1)}


def default_corpus() -> Path:
    for base in (REPO.parent / "shared", Path("/work/shared")):
        if (base / "corpora" / "conv" / "locomo").is_dir():
            return base / "corpora" / "conv" / "locomo"
    return REPO.parent / "shared" / "corpora" / "conv" / "locomo"


def parse_day(text: str) -> str | None:
    """`1:56 pm on 8 May, 2023` -> `2023-05-08` (None when the wording is not that shape)."""
    m = re.search(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", text or "")
    if not m or m.group(2).lower() not in _MONTHS:
        return None
    try:
        return dt.date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1))).isoformat()
    except ValueError:
        return None


def sessions(conv: Mapping[str, Any]) -> list[int]:
    """The numbers of the sessions that hold turns, in order."""
    found = [int(m.group(1)) for k in conv if (m := _SESSION.match(k)) and isinstance(conv[k], list) and conv[k]]
    return sorted(found)


def session_path(n: int) -> str:
    return f"sessions/session-{n:02d}.md"


def session_note(conv: Mapping[str, Any], n: int) -> str:
    """One session as a note: frontmatter (title, date, date_time, speakers), one `## <dia_id> <speaker>`
    heading a turn with what was said; a shared photo is given as its caption."""
    when = str(conv.get(f"session_{n}_date_time") or "")
    day = parse_day(when)
    speakers = [s for s in (conv.get("speaker_a"), conv.get("speaker_b")) if s]
    lines = ["---", f"title: Session {n}"]
    if day:
        lines.append(f"date: {day}")
    if when:
        lines.append(f"date_time: {json.dumps(when)}")
    lines.append("speakers: [" + ", ".join(json.dumps(s) for s in speakers) + "]")
    lines += ["---", "", f"# Session {n}" + (f", {when}" if when else ""), ""]
    for turn in conv[f"session_{n}"]:
        text = str(turn.get("text") or "").strip()
        caption = turn.get("blip_caption")
        if caption:
            text = f"{text} [shares a photo: {caption}]".strip()
        lines += [f"## {turn['dia_id']} {turn.get('speaker', '')}".rstrip(), "", text, ""]
    return "\n".join(lines)


def write_vault(conv: Mapping[str, Any], vault: Path) -> int:
    """Write (or keep, when unchanged) one note a session; the number of notes."""
    numbers = sessions(conv)
    for n in numbers:
        target = vault / session_path(n)
        text = session_note(conv, n)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return len(numbers)


def evidence(question: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(evidence session paths, evidence dia_ids) of a question; malformed ids (`D8:6; D9:17`) are split."""
    turns: set[str] = set()
    for item in question.get("evidence") or []:
        turns.update(f"D{a}:{b}" for a, b in _DIA.findall(str(item)))
    return {session_path(int(t[1:].split(":")[0])) for t in turns}, turns


def row_turn(row: Mapping[str, Any]) -> str | None:
    """The dia_id the result's section names (`D3:5 Caroline`), if any."""
    m = _DIA.match(str(row.get("section") or "").split(" > ")[-1])
    return f"D{m.group(1)}:{m.group(2)}" if m else None


def dense_arm(vault: Path, cache: Path, store: Store) -> tuple[Any, dict[str, Any]]:
    """Embed every chunk of the vault with the product's model (what a kept cache holds is not embedded
    again); (the dense arm, what the embedding did)."""
    from agentmd.engine.index.embedder import shared_embedder
    from agentmd.engine.index.vectors import VectorStore
    from agentmd.engine.search.arm import embed_foreground
    from agentmd.engine.search.hybrid import DenseArm
    from agentmd.engine.settings import Settings

    embedder = shared_embedder()
    current = {p: h for p, (h, _c, _s) in store.catalog.hashes(store.catalog.paths()).items()}
    place = Settings(vault=vault, cache_dir=cache, state_dir=cache, config_file=None, contract_path=None,
                     daily_write_cap=None)  # fmt: skip
    done = embed_foreground(place, current, embedder)
    vectors = VectorStore(cache, embedder.model_id, embedder.dim)
    return DenseArm(vectors, embedder), {"embedded": done.embedded, "chunks": done.chunks_total}


def _ranks(rows: Sequence[Mapping[str, Any]], sessions_wanted: set[str], turns_wanted: set[str]) -> tuple[int, int]:
    """(rank of the first evidence session, rank of the first row naming an evidence turn), 1-based, 0: none."""
    session_rank = turn_rank = 0
    for i, row in enumerate(rows, 1):
        if not session_rank and row.get("note") in sessions_wanted:
            session_rank = i
        if not turn_rank and row_turn(row) in turns_wanted:
            turn_rank = i
    return session_rank, turn_rank


def _summary(ranks: Sequence[tuple[int, int]]) -> dict[str, Any]:
    n = len(ranks)
    if not n:
        return {"questions": 0}
    return {
        "questions": n,
        "recall@5": round(sum(0 < s <= 5 for s, _t in ranks) / n, 4),
        "recall@10": round(sum(0 < s <= 10 for s, _t in ranks) / n, 4),
        "mrr": round(sum(1 / s for s, _t in ranks if s) / n, 4),
        "turn_recall@5": round(sum(0 < t <= 5 for _s, t in ranks) / n, 4),
        "turn_recall@10": round(sum(0 < t <= 10 for _s, t in ranks) / n, 4),
        "turn_mrr": round(sum(1 / t for _s, t in ranks if t) / n, 4),
    }


def conversation_day(conv: Mapping[str, Any]) -> str | None:
    """The conversation's present: its last session's day, against which "last year" or "4 years ago" in a
    question is read (the questions are asked after the conversation)."""
    days = [d for n in sessions(conv) if (d := parse_day(str(conv.get(f"session_{n}_date_time") or "")))]
    return max(days) if days else None


def hook_pass(store: Store, contract: Any, arm: Any, prompt: str, now: str | None = None) -> dict[str, Any]:
    """What the recall hook would inject for this prompt with the daemon up: its query, the daemon's hybrid
    search and gathering (walls, recall floor, cosine gate), the rendered block in the hook's budgets."""
    query = sanitize_query(prompt, keep=named_stop_words(store.index, prompt))
    if not query:
        return {"query": query, "paths": [], "tokens": 0}
    request = SearchRequest(query=query, limit=MAX_ENTRIES, mode="hybrid", now=now)
    response = search(store.index, contract, request, store.catalog, arm)
    rows = [r.to_json() for r in response.results]
    gathered = gather(store.catalog, store.index, Walls.from_contract(contract), rows)
    direct = [Entry.from_candidate(c, None) for c in gathered["direct"]]
    linked = [Entry.from_candidate(c, None) for c in gathered["linked"]]
    rendered = render(direct, linked)
    return {"query": query, "paths": [e.path for e in rendered.direct], "tokens": rendered.tokens if direct else 0}


def run_conversation(conv: Mapping[str, Any], vault: Path, cache: Path, misses: int) -> dict[str, Any]:
    notes = write_vault(conv, vault)
    contract = load_contract(vault).contract
    now = conversation_day(conv)
    t0 = time.perf_counter()
    with Store(cache) as store:
        reconcile(vault, store, allow_mass_delete=True)
        arm, embedding = dense_arm(vault, cache, store)
        built = time.perf_counter() - t0
        floor = confidence.search_floor(store.index, contract.thresholds.search_floor)
        whole: dict[str, list[tuple[int, int]]] = {}
        floored: dict[str, list[tuple[int, int]]] = {}
        hook: list[dict[str, Any]] = []
        adversarial = {"questions": 0, "nothing_above_floor": 0, "hook_silent": 0}
        missed: list[dict[str, Any]] = []
        latencies: list[float] = []
        for q in conv["qa"]:
            category = int(q.get("category") or 0)
            prompt = str(q["question"])
            start = time.perf_counter()
            request = SearchRequest(query=prompt, limit=LIMIT, mode="hybrid", floor=0.0, now=now)
            found = search(store.index, contract, request, store.catalog, arm).results
            latencies.append(1000 * (time.perf_counter() - start))
            rows = [r.to_json() for r in found]
            kept = [r.to_json() for r in found if confidence.clears(r, floor)]
            injected = hook_pass(store, contract, arm, prompt, now)
            if category == ADVERSARIAL:
                adversarial["questions"] += 1
                adversarial["nothing_above_floor"] += not kept
                adversarial["hook_silent"] += not injected["paths"]
                continue
            wanted, turns = evidence(q)
            if not wanted:
                continue
            name = CATEGORIES.get(category, str(category))
            for table, got in ((whole, rows), (floored, kept)):
                ranks = _ranks(got, wanted, turns)
                table.setdefault("all", []).append(ranks)
                table.setdefault(name, []).append(ranks)
            hook.append({
                "hit": bool(wanted.intersection(injected["paths"])),
                "tokens": injected["tokens"],
                "entries": len(injected["paths"]),
            })  # fmt: skip
            s_rank, _t = _ranks(kept, wanted, turns)
            if (s_rank == 0 or s_rank > 1) and len(missed) < misses:
                missed.append({
                    "question": prompt,
                    "category": name,
                    "evidence": sorted(turns),
                    "rank": s_rank,
                    "got": [str(r.get("path")) for r in kept[:3]],
                })  # fmt: skip
    answered = len(hook)
    return {
        "sessions": notes,
        "turns": sum(len(conv[f"session_{n}"]) for n in sessions(conv)),
        "build_seconds": round(built, 2),
        "embedding": embedding,
        "search_floor": round(floor, 4),
        "search": {k: _summary(v) for k, v in floored.items()},
        "whole_ranking": {k: _summary(v) for k, v in whole.items()},
        "hook": _hook_summary(hook, answered),
        "adversarial": adversarial,
        "ms_per_query_p50": round(statistics.median(latencies), 2) if latencies else 0.0,
        "misses": missed,
        "_ranks": {"search": floored.get("all", []), "whole": whole.get("all", []), "hook": hook},
    }


def _hook_summary(hook: Sequence[Mapping[str, Any]], n: int) -> dict[str, Any]:
    if not n:
        return {"questions": 0}
    tokens = [h["tokens"] for h in hook if h["entries"]]
    return {
        "questions": n,
        "evidence_injected": round(sum(h["hit"] for h in hook) / n, 4),
        "nothing_injected": round(sum(not h["entries"] for h in hook) / n, 4),
        "entries_mean": round(sum(h["entries"] for h in hook) / n, 2),
        "tokens_p50_when_injecting": statistics.median(tokens) if tokens else 0,
        "tokens_max": max(tokens) if tokens else 0,
    }


def merged(parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The questions of several conversations scored together."""
    parts = list(parts)
    adv = {k: sum(p["adversarial"][k] for p in parts) for k in ("questions", "nothing_above_floor", "hook_silent")}
    hook = [h for p in parts for h in p["_ranks"]["hook"]]
    out = {
        "search": _summary([r for p in parts for r in p["_ranks"]["search"]]),
        "whole_ranking": _summary([r for p in parts for r in p["_ranks"]["whole"]]),
        "hook": _hook_summary(hook, len(hook)),
        "adversarial": adv
        | {
            "nothing_above_floor_share": round(adv["nothing_above_floor"] / adv["questions"], 4)
            if adv["questions"]
            else 0,
            "hook_silent_share": round(adv["hook_silent"] / adv["questions"], 4) if adv["questions"] else 0,
        },
    }
    categories: dict[str, list[tuple[int, int]]] = {}
    for p in parts:
        for cat in CATEGORIES.values():
            if cat in p["search"]:
                categories.setdefault(cat, [])
    out["by_category"] = {cat: _merge_cat(parts, cat) for cat in categories}
    return out


def _merge_cat(parts: Sequence[Mapping[str, Any]], cat: str) -> dict[str, Any]:
    """A category's figures over several conversations, weighted by their questions."""
    rows = [p["search"][cat] for p in parts if cat in p["search"]]
    n = sum(r["questions"] for r in rows)
    keys = ("recall@5", "recall@10", "mrr", "turn_recall@10")
    return {"questions": n} | {k: round(sum(r[k] * r["questions"] for r in rows) / n, 4) for k in keys}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--corpus", type=Path, default=default_corpus())
    ap.add_argument("--split", choices=("train", "heldout", "all"), default="heldout")
    ap.add_argument("--conv", nargs="*", help="conversation ids (file stems) instead of a split")
    ap.add_argument("--keep", type=Path, help="keep each vault, index and vectors here; a second run only searches")
    ap.add_argument("--misses", type=int, default=0, help="list up to N questions a conversation misses at rank 1")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    names = args.conv or {"train": TRAIN, "heldout": HELDOUT, "all": TRAIN + HELDOUT}[args.split]
    report: dict[str, Any] = {"corpus": str(args.corpus), "conversations": {}, "published": PUBLISHED}
    with tempfile.TemporaryDirectory(prefix="agentmd-locomo-") as tmp:
        base = args.keep or Path(tmp)
        for name in names:
            conv = json.loads((args.corpus / f"{name}.json").read_text(encoding="utf-8"))
            where = base / name
            report["conversations"][name] = run_conversation(conv, where / "vault", where / "cache", args.misses)
    parts = list(report["conversations"].values())
    report["overall"] = merged(parts)
    for p in parts:
        p.pop("_ranks")
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n", encoding="utf-8")
    print()
    print(f"{'':<10} {'q':>4} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'turnR@10':>9} {'wholeMRR':>9} {'hook hit':>9}"
          f" {'hook tok':>9} {'adv empty':>10}")  # fmt: skip
    for name, r in [*report["conversations"].items(), ("overall", report["overall"])]:
        s, w, h, a = (
            r["search"]["all"] if "all" in r["search"] else r["search"],
            r["whole_ranking"],
            r["hook"],
            r["adversarial"],
        )
        w = w.get("all", w)
        adv = f"{a['nothing_above_floor']}/{a['questions']}"
        print(
            f"{name:<10} {s['questions']:>4} {s['recall@5']:>6.3f} {s['recall@10']:>6.3f} {s['mrr']:>6.3f}"
            f" {s['turn_recall@10']:>9.3f} {w['mrr']:>9.3f} {h['evidence_injected']:>9.3f}"
            f" {h['tokens_p50_when_injecting']:>9} {adv:>10}"
        )
    print("published (basic-memory, 300-question subset): recall@5 0.774, recall@10 0.875, MRR 0.697")
    return 0


if __name__ == "__main__":
    sys.exit(main())
