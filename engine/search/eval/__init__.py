"""Retrieval evaluation: how well search finds what a user meant, measured on fixtures and on BEIR.

Two harnesses share one set of pure metric functions (`metrics`) and one way of running a query
(`runs`):

- `fixtures`: a JSONL file of hand-written queries against a real vault. Each line is
  `{"id", "query", "expected", "alternates", "category"}`; `expected` is a vault-relative path, or null
  for a question the vault cannot answer. Per search mode it reports recall@K, MRR, correct rejection,
  the same per category, the fixture file's SHA-256, a corpus fingerprint and a deterministic miss
  taxonomy (see `metrics.classify_miss`).
- `beir`: a BEIR collection is written out as a throwaway vault (one note per document), indexed into a
  throwaway store, and every judged query is run: nDCG@10, recall@100 and MRR@10.

Both call the engine's search directly: an evaluation is not usage and must never be counted as such.
"""
