"""Token check: the index's analyzers give exactly the tokens they are meant to, on every note of the shared
corpora and every SciFact abstract.

Compares, text by text (each note's title, meta and body as the index receives them, and each of their lines):

- the analyzer against the one it replaced, whose pattern listed the CJK alternatives first
  (`\\p{Han}|\\p{Hiragana}|\\p{Katakana}|[...]+`): the tokenizer's raw tokens (so the positions too) and the
  terms after folding, lower case and stemming;
- on every text `plain_words` accepts, the plain analyzer (Tantivy's simple tokenizer) against the analyzer:
  raw tokens and terms.

Prints one JSON object and a summary; exits 1 when any stream differs (the first few are shown).

    .venv/bin/python bench/token_check.py [--corpora ../shared/corpora]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tantivy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentmd.engine.index.fulltext.analyzer import TOKEN_PATTERN, plain_analyzer, plain_words, text_analyzer
from agentmd.engine.index.notes import prepare
from agentmd.engine.index.reconcile import walk_vault

VAULTS = ("dendron-site", "obsidian-tasks", "vaultofknowledge", "ailurus-zh")
PREVIOUS_PATTERN = r"\p{Han}|\p{Hiragana}|\p{Katakana}|[\p{L}\p{M}\p{N}_--\p{Han}--\p{Hiragana}--\p{Katakana}]+"


def previous_analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(PREVIOUS_PATTERN))
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def tokens_only(tokenizer: Any) -> Any:
    return tantivy.TextAnalyzerBuilder(tokenizer).build()


def corpus_texts(corpora: Path) -> Iterator[tuple[str, str]]:
    """(where, text): each indexed value of each vault note, then each SciFact title and abstract."""
    for name in VAULTS:
        vault = corpora / name
        if not vault.is_dir():
            raise SystemExit(f"corpus {name} is missing at {vault}")
        for rel, stat in sorted(walk_vault(vault).files.items()):
            prepared = prepare(vault, rel, stat, None, "obsidian")
            if prepared.doc is None:
                continue
            doc = prepared.doc
            for field_name, text in (("title", doc.title), ("meta", doc.meta), ("body", doc.body)):
                yield f"{name}/{rel}#{field_name}", text
    scifact = corpora / "ir" / "scifact" / "corpus.jsonl"
    if not scifact.is_file():
        raise SystemExit(f"the SciFact corpus is missing at {scifact}")
    with scifact.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield f"scifact/{row['_id']}#title", row.get("title", "")
            yield f"scifact/{row['_id']}#text", row.get("text", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"))
    args = ap.parse_args()
    corpora = Path(args.corpora)

    current, previous, plain = text_analyzer(), previous_analyzer(), plain_analyzer()
    raw_current = tokens_only(tantivy.Tokenizer.regex(TOKEN_PATTERN))
    raw_previous = tokens_only(tantivy.Tokenizer.regex(PREVIOUS_PATTERN))
    raw_plain = tokens_only(tantivy.Tokenizer.simple())
    t0 = time.perf_counter()
    counts = {"values": 0, "texts": 0, "tokens": 0, "plain_texts": 0, "plain_tokens": 0, "plain_values": 0}
    differ: list[dict[str, str]] = []
    for where, value in corpus_texts(corpora):
        counts["values"] += 1
        counts["plain_values"] += plain_words(value)
        lines = value.splitlines()
        for i, text in enumerate([value, *lines] if len(lines) > 1 else [value]):
            counts["texts"] += 1
            place = where if i == 0 else f"{where} line {i}"
            terms = current.analyze(text)
            counts["tokens"] += len(terms)
            if raw_current.analyze(text) != raw_previous.analyze(text):
                differ.append({"at": place, "what": "raw tokens differ from the previous pattern's"})
            elif terms != previous.analyze(text):
                differ.append({"at": place, "what": "terms differ from the previous analyzer's"})
            if plain_words(text):
                counts["plain_texts"] += 1
                counts["plain_tokens"] += len(terms)
                if raw_plain.analyze(text) != raw_current.analyze(text):
                    differ.append({"at": place, "what": "the simple tokenizer's raw tokens differ"})
                elif plain.analyze(text) != terms:
                    differ.append({"at": place, "what": "the plain analyzer's terms differ"})
    result = {**counts, "differences": len(differ), "first_differences": differ[:10],
              "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(result, indent=2))
    print(
        f"\n{counts['values']} indexed values ({counts['plain_values']} plain), {counts['texts']} texts with their"
        f" lines, {counts['tokens']} tokens: {len(differ)} differences"
        f" ({counts['plain_texts']} plain texts, {counts['plain_tokens']} tokens, checked against the simple"
        " tokenizer too)"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
