"""Prefilter false-positive benchmark: run every filter over every note of the real corpora.

The corpora (../shared/corpora, notes written by other people) are benign, so every flagged note is a
candidate false positive that a human must look at: some flags are right (a real Templater template, a real
`<script>` embed, a leaked token), the others are wrong and the filters should be tuned until they are gone.
The IR collection's abstracts (ir/*/corpus.jsonl) are run too, as extra benign prose, and reported apart.

Prints one JSON object (per corpus: notes, flagged, share, per-code counts, the flagged paths with their codes
and lines), then a human summary. With --context N each finding is shown with N lines around it; around a
secret finding every token-like run is masked, so the summary never prints a secret either.

    .venv/bin/python bench/prefilter_fp.py [--corpora DIR] [--context 2] [--json-only]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.rules.prefilter import Finding, check_text

DEFAULT_CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
_TOKENISH = re.compile(r"[A-Za-z0-9+/_\-=.~%]{12,}")


def notes(root: Path) -> list[Path]:
    """Every .md file under `root`; dot directories (.obsidian, .trash, .git) are left out, as the index does."""
    return sorted(
        p
        for p in root.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def ir_documents(root: Path) -> dict[str, str]:
    """id -> title and text of every document in the IR collections' corpus.jsonl files."""
    docs: dict[str, str] = {}
    for path in sorted(root.glob("*/corpus.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                docs[f"{path.parent.name}:{doc['_id']}"] = f"{doc.get('title', '')}\n{doc.get('text', '')}"
    return docs


def summarise(texts: dict[str, str]) -> tuple[dict[str, object], dict[str, list[Finding]]]:
    flagged: dict[str, list[Finding]] = {}
    per_code: Counter[str] = Counter()
    start = time.perf_counter()
    for name, text in texts.items():
        findings = check_text(text, "body")
        if findings:
            flagged[name] = findings
            per_code.update(list(dict.fromkeys(f.code for f in findings)))
    elapsed = time.perf_counter() - start
    summary: dict[str, object] = {
        "notes": len(texts),
        "flagged": len(flagged),
        "share": round(len(flagged) / len(texts), 5) if texts else 0.0,
        "seconds": round(elapsed, 3),
        "ms_per_note": round(1000 * elapsed / len(texts), 2) if texts else 0.0,
        "per_code": dict(sorted(per_code.items())),
        "flagged_paths": {
            name: [{"code": f.code, "line": f.line} for f in findings] for name, findings in sorted(flagged.items())
        },
    }
    return summary, flagged


def context(text: str, finding: Finding, radius: int) -> str:
    """The lines around a finding; around a secret finding every token-like run is masked."""
    if finding.line is None or radius < 0:
        return ""
    lines = text.split("\n")
    lo, hi = max(0, finding.line - 1 - radius), min(len(lines), finding.line + radius)
    shown = []
    for n in range(lo, hi):
        line = lines[n]
        if finding.code.startswith("secret:"):
            line = _TOKENISH.sub("[masked]", line)
        shown.append(f"      {n + 1:>5}{'>' if n + 1 == finding.line else ' '} {line[:160]!r}")
    return "\n".join(shown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--context", type=int, default=-1, help="lines of context around each finding")
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpora.is_dir():
        print(f"no corpora at {args.corpora}", file=sys.stderr)
        return 1

    report: dict[str, object] = {}
    texts: dict[str, dict[str, str]] = {}
    details: dict[str, dict[str, list[Finding]]] = {}
    for root in sorted(p for p in args.corpora.iterdir() if p.is_dir() and not p.name.startswith(".")):
        paths = notes(root)
        if not paths:
            continue
        texts[root.name] = {str(p.relative_to(root)): p.read_text(encoding="utf-8", errors="replace") for p in paths}
        report[root.name], details[root.name] = summarise(texts[root.name])
    vault_names = set(texts)
    total = sum(len(t) for t in texts.values())
    total_flagged = sum(len(d) for d in details.values())
    report["total"] = {
        "notes": total,
        "flagged": total_flagged,
        "share": round(total_flagged / total, 5) if total else 0.0,
    }
    ir_root = args.corpora / "ir"
    if ir_root.is_dir():
        docs = ir_documents(ir_root)
        if docs:
            texts["ir (abstracts)"] = docs
            report["ir (abstracts)"], details["ir (abstracts)"] = summarise(docs)
    print(json.dumps(report, ensure_ascii=False, indent=2))
    if args.json_only:
        return 0

    print("\nPrefilter false-positive benchmark (every note is benign; each flag needs a human look)")
    for name, flagged in details.items():
        s = report[name]
        assert isinstance(s, dict)
        share = 100 * float(s["share"])
        print(f"  {name:<18} {s['flagged']:>4} / {s['notes']:<5} flagged ({share:.2f} %)  {s['per_code']}")
        for rel, findings in sorted(flagged.items()):
            print(f"    {rel}: {', '.join(dict.fromkeys(f.code for f in findings))}")
            if args.context >= 0:
                for f in findings:
                    print(f"      {f.code} line {f.line}: {f.message[:110]}")
                    print(context(texts[name][rel], f, args.context))
    total_share = 100 * total_flagged / max(total, 1)
    seconds = sum(float(str(s["seconds"])) for n, s in report.items() if isinstance(s, dict) and n in vault_names)
    print(
        f"  {'total (vaults)':<18} {total_flagged:>4} / {total:<5} flagged ({total_share:.2f} %), "
        f"{1000 * seconds / max(total, 1):.1f} ms per note"
    )
    print_payloads()
    return 0


PAYLOADS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "payloads"


def print_payloads() -> None:
    """Detection on the dev payload corpus (tests/fixtures/payloads), train and holdout apart."""
    print("\nDev payload corpus (refused = any finding of the family; benign = no finding at all)")
    for name, family in (("directives", "directive"), ("secrets", "secret"), ("benign", "")):
        path = PAYLOADS / f"{name}.jsonl"
        if not path.is_file():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for split in ("train", "holdout"):
            chosen = [r for r in rows if r["split"] == split]
            found = [{f.code.split(":", 1)[0] for f in check_text(r["text"])} for r in chosen]
            good = sum((family in codes) if family else not codes for codes in found)
            what = "refused" if family else "passed"
            share = 100 * good / max(len(chosen), 1)
            print(f"  {name:<11} {split:<8} {good:>4} / {len(chosen):<4} {what} ({share:.0f} %)")


if __name__ == "__main__":
    raise SystemExit(main())
