"""Prefilter payload rounds: how many directive and secret payloads each family refuses and how many benign
controls it lets through, per fixture file and split, and how long one large note takes.

The fixture files are under tests/fixtures/payloads. The fresh rounds (`*_fresh*.jsonl`) were written before the
filters were changed for them; `*_fresh_holdout.jsonl` is a round kept aside and read only with --holdout.
Secret rows of the fresh rounds, and the benign rows of the fifth and seventh rounds (hashes, ids, example tokens),
are templates (see tests/prefilter_helpers.expand), so no file holds a value.

Latency: `check_text` on a 469 KB note built from corpus prose (or the fixtures when the corpora are absent),
on one of English prose only and on a 469 KB note of 60,000 tags, each against a floor measured in the same run
(one NFKC pass and one word scan of the same text: the least any content check must do). CPU time
(process_time), so load matters less.

    .venv/bin/python bench/prefilter_rounds.py [--holdout] [--misses] [--json-only]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from prefilter_helpers import expand  # noqa: E402

from agentmd.rules.prefilter import check_text  # noqa: E402

PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
CORPORA = ROOT.parent / "shared" / "corpora"
# (file, family the rows must trip, or None for benign controls that must trip nothing, templated)
FILES: tuple[tuple[str, str | None, bool], ...] = (
    ("directives", "directive", False),
    ("directives_general", "directive", False),
    ("directives_fresh", "directive", False),
    ("directives_fresh3", "directive", False),
    ("directives_fresh4", "directive", False),
    ("directives_fresh5", "directive", False),
    ("benign", None, False),
    ("benign_general", None, False),
    ("benign_fresh", None, False),
    ("benign_fresh3", None, False),
    ("benign_fresh4", None, False),
    ("benign_fresh5", None, True),
    ("secrets", "secret", False),
    ("secrets_fresh", "secret", True),
    ("secrets_fresh_benign", None, True),
    ("secrets_fresh5", "secret", True),
    ("directives_fresh7", "directive", False),
    ("benign_fresh7", None, True),
    ("secrets_fresh7", "secret", True),
    ("directives_fresh8", "directive", False),
    ("benign_fresh8", None, True),
    ("secrets_fresh8", "secret", True),
    ("directives_fresh9", "directive", False),
    ("benign_fresh9", None, True),
    ("secrets_fresh9", "secret", True),
    # round 10, written blind before its changes: on the filters before them, the dev split refused 51/54 directives,
    # 37/40 secrets and 11/118 benign notes; after, 54/54, 40/40 and 1/118 (a Templater tag outside code)
    ("directives_fresh10", "directive", False),
    ("benign_fresh10", None, True),
    ("secrets_fresh10", "secret", True),
    # round 11, written blind (118 of its 260 orders and 121 of its 260 benign notes in 71 languages): on the rules
    # alone it refused 179/260 orders and 14/260 benign notes; with the learned arm of that time 190/260 and
    # 14/260; then it became training rows for the model (bench/train_directive_model.py)
    ("directives_fresh11", "directive", False),
    ("benign_fresh11", None, False),
    # round 12, written blind by another author as a held-out round (63 of its 150 orders and 58 of its 150
    # benign notes in 48 languages) and read once: the session's starting filters refused 86/150 orders and
    # 6/150 benign notes, the filters with the learned arm and its veto 98/150 and 2/150; then a training round
    ("directives_fresh12", "directive", False),
    ("benign_fresh12", None, False),
    # round 13, written blind to be what keyword rules miss (157 of its 300 orders and 151 of its 300 benign notes
    # in 60 languages): the session's starting filters refused 76/300 orders and 5/300 benign notes, the rules of
    # the time alone 76/300 and 3/300, with the learned arm and its veto 109/300 and 3/300; then a training round
    ("directives_fresh13", "directive", False),
    ("benign_fresh13", None, False),
    # round 14, written blind by another author as a held-out round (70 of its 160 orders and 74 of its 160 benign
    # notes in 57 languages), read once: the session's starting filters refused 111/160 orders and 8/160 benign
    # notes, the filters after round 13 131/160 and 7/160; then a training round
    ("directives_fresh14", "directive", False),
    ("benign_fresh14", None, False),
    # round 16, written blind, mostly look-alikes (400 benign notes, 215 in 61 languages; 150 orders, each the evil
    # twin of a kind of benign note): the session's starting filters refused 86/150 orders and 14/400 benign notes,
    # the filters after round 14 96/150 and 2/400; then a training round
    ("directives_fresh16", "directive", False),
    ("benign_fresh16", None, False),
    # round 15, written blind by another author as a held-out round (55 of its 150 orders in 40 languages, 55 of its
    # 150 benign notes in 43), read once at the end: the session's starting filters refused 109/150 orders and
    # 4/150 benign notes, the filters after round 16 127/150 and 3/150; then a training round
    ("directives_fresh15", "directive", False),
    ("benign_fresh15", None, False),
    # round 17, written blind, every row in a language other than English (220 orders and 220 benign notes in 70
    # languages): the session's starting filters refused 53/220 orders and 4/220 benign notes, the filters after
    # round 15 79/220 and 5/220; then a training round
    ("directives_fresh17", "directive", False),
    ("benign_fresh17", None, False),
    # rounds 18 to 22, written blind by five other authors (18: English orders in ordinary words; 19: 30 European
    # languages; 20: 32 languages of Asia, Africa and the Middle East; 21: hidden, split and conditional orders in
    # long English notes beside 200 look-alikes; 22: long notes, half in 25 other languages); the session's
    # starting filters refused 112/150, 63/150, 44/150, 96/120 and 87/150 orders and 6/150, 6/150, 6/150, 15/200
    # and 12/150 benign notes; then training rounds
    ("directives_fresh18", "directive", False),
    ("benign_fresh18", None, False),
    ("directives_fresh19", "directive", False),
    ("benign_fresh19", None, False),
    ("directives_fresh20", "directive", False),
    ("benign_fresh20", None, False),
    ("directives_fresh21", "directive", False),
    ("benign_fresh21", None, False),
    ("directives_fresh22", "directive", False),
    ("benign_fresh22", None, False),
    # rounds 25 to 28, written blind (25: 30 European languages, 26: 30 languages of Asia, Africa and the Middle
    # East, both in notes of several lines; 27: English orders as questions, statements, conditionals and passives;
    # 28: 240 benign notes in about 40 languages that use an attack's words, and 60 orders): the session's starting
    # filters refused 29/150, 42/150, 78/150 and 46/60 orders and 8/150, 0/150, 3/150 and 27/240 benign notes, the
    # filters after rounds 18-22 and the reported-quotation rule 62/150, 60/150, 90/150 and 49/60, and 6/150, 0/150,
    # 4/150 and 14/240; then training rounds
    ("directives_fresh25", "directive", False),
    ("benign_fresh25", None, False),
    ("directives_fresh26", "directive", False),
    ("benign_fresh26", None, False),
    ("directives_fresh27", "directive", False),
    ("benign_fresh27", None, False),
    ("directives_fresh28", "directive", False),
    ("benign_fresh28", None, False),
    # rounds 31 to 36, written blind at the start of the next session (31: whole agent rule files with one or two
    # sneaky rules; 32: long English notes with one order in ordinary words; 33: split, conditional, standing and
    # role-play orders; 34: 45+ languages, no English; 35: orders hidden in markup, configs and transcripts; 36:
    # concrete harmful acts without the stock words), and a secrets round (38; its fourth rows held out): the
    # filters they were written against refused 40/150, 99/150, 116/150, 79/150, 129/150 and 99/150 orders, 8, 2,
    # 4, 3, 1 and 1 of 150 benign notes, and 101/120 secrets with 1/90 look-alikes; then training rounds
    ("directives_fresh31", "directive", False),
    ("benign_fresh31", None, False),
    ("directives_fresh32", "directive", False),
    ("benign_fresh32", None, False),
    ("directives_fresh33", "directive", False),
    ("benign_fresh33", None, False),
    ("directives_fresh34", "directive", False),
    ("benign_fresh34", None, False),
    ("directives_fresh35", "directive", False),
    ("benign_fresh35", None, False),
    ("directives_fresh36", "directive", False),
    ("benign_fresh36", None, False),
    ("secrets_fresh38", "secret", True),
    ("secrets_fresh38_benign", None, True),
    # rounds 39 to 43 and secrets round 44, written blind while the filters above were being changed (39: agent
    # rule files in English and 18 other languages; 40: everyday developer texts in English; 41: long notes in 30
    # languages; 42: what agents read from tools; 43: 250 hard benign notes and 50 orders; 44: secrets in config
    # formats, split and in chats, a fourth held out): the filters after training on rounds 31 to 36 refused
    # 33/150, 121/150, 98/150, 124/150 and 44/50 orders, 13, 4, 1, 2 and 15 of 150/150/150/150/250 benign notes,
    # and 112/120 secrets with 2/90 look-alikes; then training rounds
    ("directives_fresh39", "directive", False),
    ("benign_fresh39", None, False),
    ("directives_fresh40", "directive", False),
    ("benign_fresh40", None, False),
    ("directives_fresh41", "directive", False),
    ("benign_fresh41", None, False),
    ("directives_fresh42", "directive", False),
    ("benign_fresh42", None, False),
    ("directives_fresh43", "directive", False),
    ("benign_fresh43", None, False),
    ("secrets_fresh44", "secret", True),
    ("secrets_fresh44_benign", None, True),
    # rounds 45 to 48, written blind after that training (45: English agent rule files with one or two harmful
    # rules in working words; 46: the same in 25+ other languages; 47: 250 look-alikes that quote attacks, saved
    # chats and prompt guides, 50 orders; 48: anything, half in other languages): the filters of the moment refused
    # 38/150, 16/150, 49/50 and 108/150 orders and 3, 0, 25 and 2 of 150/150/250/150 benign notes; then training
    ("directives_fresh45", "directive", False),
    ("benign_fresh45", None, False),
    ("directives_fresh46", "directive", False),
    ("benign_fresh46", None, False),
    ("directives_fresh47", "directive", False),
    ("benign_fresh47", None, False),
    ("directives_fresh48", "directive", False),
    ("benign_fresh48", None, False),
    # rounds 50 to 52, written blind at the start of the eighth session (50: 200 hard look-alikes, 100 orders in
    # the same registers, 40 % other languages; 51: secrets told by hand (prose in many languages, chats, PINs and
    # door codes, 2FA seeds in groups, recovery codes, wallet keys); 52: 60+ vendors, and the hardest look-alikes:
    # ciphertext, publishable keys, references, ids): the session's starting filters refused 89/100 orders and
    # 10/200 benign notes of 50, 101/120 and 111/120 secrets with 2/90 and 15/90 look-alikes of 51 and 52 (dev)
    ("directives_fresh50", "directive", False),
    ("benign_fresh50", None, False),
    ("secrets_fresh51", "secret", True),
    ("secrets_fresh51_benign", None, True),
    ("secrets_fresh52", "secret", True),
    ("secrets_fresh52_benign", None, True),
    # secrets rounds 54 and 55, written blind later in that session (54: the notes a developer and a household
    # keep, the secret one detail among others; 55: 60 % in other languages, each with its own words and marks):
    # the session's starting filters refused 108/120 and 95/120 secrets, 8/90 and 1/90 look-alikes (dev)
    ("secrets_fresh54", "secret", True),
    ("secrets_fresh54_benign", None, True),
    ("secrets_fresh55", "secret", True),
    ("secrets_fresh55_benign", None, True),
)
HOLDOUT: tuple[tuple[str, str | None, bool], ...] = (
    ("directives_fresh_holdout", "directive", False),
    ("benign_fresh_holdout", None, False),
    ("directives_fresh3_holdout", "directive", False),
    ("benign_fresh3_holdout", None, False),
    ("directives_fresh4_holdout", "directive", False),
    ("benign_fresh4_holdout", None, False),
    ("directives_fresh5_holdout", "directive", False),
    ("benign_fresh5_holdout", None, True),
    ("secrets_fresh5_holdout", "secret", True),
    ("directives_fresh7_holdout", "directive", False),
    ("benign_fresh7_holdout", None, True),
    ("secrets_fresh7_holdout", "secret", True),
    ("directives_fresh8_holdout", "directive", False),
    ("benign_fresh8_holdout", None, True),
    ("secrets_fresh8_holdout", "secret", True),
    ("directives_fresh9_holdout", "directive", False),
    ("benign_fresh9_holdout", None, True),
    ("secrets_fresh9_holdout", "secret", True),
    # its held-out fifth, read once after the changes: 12/14 directives, 10/10 secrets, 0/30 benign refused
    # (10/14, 10/10 and 0/30 on the filters before them)
    ("directives_fresh10_holdout", "directive", False),
    ("benign_fresh10_holdout", None, True),
    ("secrets_fresh10_holdout", "secret", True),
    # rounds 23 and 24, written blind at the start of the session that trained on rounds 18 to 28 and read once at
    # its end (orders 109 -> 115 and 107 -> 119 of 150, benign 8 -> 3 and 2 -> 1 of 150); never trained on
    ("directives_fresh23_holdout", "directive", False),
    ("benign_fresh23_holdout", None, False),
    ("directives_fresh24_holdout", "directive", False),
    ("benign_fresh24_holdout", None, False),
    # rounds 29 and 30 (about half in other languages), written blind at the end of the session that trained on
    # rounds 18 to 28 and read once at the start of the next, on those filters: orders 113/150 and 122/150, benign
    # 1/150 and 3/150; never trained on
    ("directives_fresh29_holdout", "directive", False),
    ("benign_fresh29_holdout", None, False),
    ("directives_fresh30_holdout", "directive", False),
    ("benign_fresh30_holdout", None, False),
    # round 37 (orders and look-alikes, about 40 % in other languages) and the held-out fourths of the secrets
    # rounds 38 and 44, written blind during the session that trained on rounds 31 to 43 and read on the filters
    # before it and after: orders 116 -> 125/150, benign 8 -> 8/150; secrets 30 -> 36/40 and 35 -> 37/40, their
    # look-alikes 2 -> 2/30 each; never trained on
    ("directives_fresh37_holdout", "directive", False),
    ("benign_fresh37_holdout", None, False),
    ("secrets_fresh38_holdout", "secret", True),
    ("secrets_fresh38_benign_holdout", None, True),
    ("secrets_fresh44_holdout", "secret", True),
    ("secrets_fresh44_benign_holdout", None, True),
    # round 49 (orders and look-alikes, 40 % in other languages), written blind after rounds 31 to 44 joined
    # training and read before rounds 45 to 48 did and after: orders 123 -> 123/150 (117 on the filters of the
    # session's start), benign 7 -> 6/150 (7 at the start); never trained on
    ("directives_fresh49_holdout", "directive", False),
    ("benign_fresh49_holdout", None, False),
    # the held-out fourths of secrets rounds 51 and 52 (above), read once on the eighth session's starting filters
    # (31/40 and 38/40 secrets, 0/30 and 2/30 look-alikes) and once at its end; never trained on
    ("secrets_fresh51_holdout", "secret", True),
    ("secrets_fresh51_benign_holdout", None, True),
    ("secrets_fresh52_holdout", "secret", True),
    ("secrets_fresh52_benign_holdout", None, True),
    # and of 54 and 55, read once on the starting filters (33/40 and 33/40 secrets, 0/30 and 2/30 look-alikes) and
    # once at the session's end
    ("secrets_fresh54_holdout", "secret", True),
    ("secrets_fresh54_benign_holdout", None, True),
    ("secrets_fresh55_holdout", "secret", True),
    ("secrets_fresh55_benign_holdout", None, True),
    # round 53 (orders and look-alikes, 40 % in other languages), written blind at the start of the eighth session
    # and read once at its end, on its starting filters and its last: 131/150 orders, 6/150 benign on both
    ("directives_fresh53_holdout", "directive", False),
    ("benign_fresh53_holdout", None, False),
)
# rounds written blind and not yet read by anyone: the next change to the filters reads them once with `--unread`,
# against the filters before it, then lists them in HOLDOUT
UNREAD: tuple[tuple[str, str | None, bool], ...] = (
    # round 57 (orders and look-alikes, 40 % in 30 other languages), written blind at the end of the eighth session
    ("directives_fresh57_holdout", "directive", False),
    ("benign_fresh57_holdout", None, False),
    # secrets round 56 (everything a vault holds, 35 % in other languages), written blind at the end of the eighth
    # session; its dev part is the next training round's first reading, its held-out fourth stays aside
    ("secrets_fresh56", "secret", True),
    ("secrets_fresh56_benign", None, True),
    ("secrets_fresh56_holdout", "secret", True),
    ("secrets_fresh56_benign_holdout", None, True),
)


def load(name: str, templated: bool) -> list[dict[str, Any]]:
    with (PAYLOADS / f"{name}.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    if templated:
        for i, row in enumerate(rows):
            row["text"] = expand(row["text"], i)
    return rows


def families(text: str) -> set[str]:
    return {f.code.split(":", 1)[0] for f in check_text(text)}


def measure(name: str, family: str | None, templated: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for row in load(name, templated):
        split = out.setdefault(row["split"], {"rows": 0, "refused": 0, "wrong": []})
        found = families(row["text"])
        refused = family in found if family else bool(found)
        split["rows"] += 1
        split["refused"] += refused
        if refused != (family is not None):
            split["wrong"].append(f"{row['kind']}: {row['text'][:90]!r}" + (f" {sorted(found)}" if found else ""))
    for split in out.values():
        split["share"] = round(split["refused"] / split["rows"], 3)
    return out


def big_prose(only: str | None = None) -> str:
    """469 KB of corpus notes in path order (the first corpus is Chinese, so the note mixes scripts), or of one
    corpus (`only`); the fixtures' benign rows repeated when the corpora are absent."""
    parts: list[str] = []
    size = 0
    root = CORPORA / only if only else CORPORA
    sources = sorted(root.rglob("*.md")) if root.is_dir() else []
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text.encode())
        if size >= 469_000:
            break
    if size < 469_000:
        seed = "\n\n".join(r["text"] for r in load("benign_general", False))
        parts = [seed] * (469_000 // max(1, len(seed.encode())) + 1)
    return "\n\n".join(parts).encode()[:469_000].decode("utf-8", "ignore")


def timed(fn: Any, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        fn(text)
        best = min(best, time.process_time() - start)
    return best


def floor(text: str) -> None:
    re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())


def latency() -> dict[str, Any]:
    notes = {
        "prose": big_prose(),
        "English prose": big_prose("vaultofknowledge"),
        "tags": " ".join(f"#t{i}" for i in range(60_000))[:469_000],
    }
    out: dict[str, Any] = {}
    for name, text in notes.items():
        spent, base = timed(check_text, text), timed(floor, text)
        out[name] = {"bytes": len(text.encode()), "cpu_s": round(spent, 3), "floor_cpu_s": round(base, 4),
                     "ratio": round(spent / base, 1) if base else None}  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--holdout", action="store_true", help="also read the held-out fresh round (read it once)")
    ap.add_argument("--misses", action="store_true", help="list the rows judged wrongly (not for the holdout)")
    ap.add_argument("--json-only", action="store_true")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--unread", action="store_true", help="read only the rounds no one has read yet (read them once)")
    args = ap.parse_args()
    files = UNREAD if args.unread else FILES + (HOLDOUT if args.holdout else ())
    report: dict[str, Any] = {name: measure(name, family, templated) for name, family, templated in files}
    if not args.misses:  # a held-out read is a count: its rows stay unseen
        for splits in report.values():
            for s in splits.values():
                s.pop("wrong")
    if not args.no_latency:
        report["latency"] = latency()
    report["loadavg"] = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
    print(json.dumps(report, ensure_ascii=False, indent=1 if args.misses else None))
    if args.json_only:
        return 0
    print("\nsummary (refused / rows; payload files should be high, benign files low):")
    for name, family, _ in files:
        for split, s in report[name].items():
            kind = f"{family} refused" if family else "benign refused"
            print(f"  {name:28} {split:8} {kind:18} {s['refused']:4}/{s['rows']:<4} {100 * s['share']:5.1f} %")
    for name, lat in report.get("latency", {}).items():
        print(f"  469 KB {name} note: {lat['cpu_s']} s CPU, {lat['ratio']}x a floor of {lat['floor_cpu_s']} s")
    if args.misses:
        for name, _, _ in FILES:
            for split, s in report[name].items():
                for wrong in s["wrong"]:
                    print(f"  [{name}/{split}] {wrong}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
