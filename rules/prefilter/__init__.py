"""Deterministic content prefilters, run on every write (capture, phone clipper, ingest) before disk.

Four families, each reported with a stable reason code (see `CODES`):

- ``directive``: text addressed to an AI agent or overriding its instructions (prompt injection written into
  memory). Phrase rules read the prose; a sentence scorer (`directive_score`) reads every sentence, HTML and
  Obsidian comments, link texts and titles, prose fences and code comments, and refuses on who a sentence
  speaks to (an AI named as the one addressed, "you" in a memory frame) and what it asks (drop its
  instructions, obey the note, leak secrets, hide things from the user, take an unsafe action). Invisible
  characters, look-alike letters and combining marks are normalised first; encoded runs are decoded and read
  too. A note every rule passes is read last by a learned model (`directive_model`: logistic regression over
  hashed n-grams, weights shipped in `directive_model.npz`), which refuses only a passage it is very sure of.
  An attack quoted inside a discussion of it is kept.
- ``secret:*``: credential-shaped values (cloud keys, tokens, private keys, JWTs, high-entropy assignments).
  Read everywhere, code included, and again with line breaks joined and URL escapes decoded.
- ``executable:*``: content that runs: ``dataviewjs`` fences and inline ``$=`` queries, Templater tags outside
  code, destructive or download-and-run commands in shell blocks or on bare command lines, ``<script>`` tags
  and ``javascript:`` links.
- ``hidden-unicode:*``: bidi controls, Unicode tag characters, zero-width runs or zero-width characters inside
  ASCII words, runs of variation selectors.

No model calls, no network, no file access. A finding's message says what was found and how to fix it and never
contains a secret value, nor any part of one; a directive message quotes at most six words of the phrase, with
anything that could be a value blanked. Line numbers are 1-based within the field's text.

One module per family, each with its helpers beside it: `directives` (its rules in `directive_rules`, the
text they read in `directive_folding` and `directive_views`; more phrasings in `directive_phrases`, with
`directive_phrase_rules`, `directive_word_groups`, `directive_matching`, `directive_foreign` and
`directive_languages`; the sentence scorer `directive_score`, with `directive_sentences` and its vocabulary
`directive_vocabulary`, `directive_requests` and `directive_features`; `directive_addressed`; the learned
model `directive_model`), `credentials`
(with `credential_rules`, `credential_views` and `vendor_tokens`), `executable` and `hidden_unicode`; `core`
holds the reason codes, findings, verdicts and shared text helpers, and `checks` the entry points re-exported
here.
"""

from agentmd.rules.prefilter.checks import check_fields, check_text, require_clean
from agentmd.rules.prefilter.core import CODES, Finding, PrefilterRefused, Verdict

__all__ = [
    "CODES",
    "Finding",
    "PrefilterRefused",
    "Verdict",
    "check_fields",
    "check_text",
    "require_clean",
]
