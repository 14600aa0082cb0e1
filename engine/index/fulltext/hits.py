"""What a search returns: the ranked matches (`HitList`), each loaded on demand as a `Hit`, and the reader
state (`Reader`) whose remembered documents they are read through."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import tantivy

_FACTS_MEMO_MAX = 20_000


@dataclass(frozen=True, slots=True)
class NameHit:
    """A note one of whose names is the query (`exact`) or begins with it at a word boundary."""

    kind: str  # one of NAME_KINDS: the best kind that matched
    exact: bool
    score: float  # BM25 of the query's words (any of them) in the note, to order notes of the same name
    hit: Hit


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    raw_score: float
    facts: dict[str, Any]
    doc: Any = field(default=None, repr=False, compare=False)  # the stored document, for snippets
    addr: Any = field(default=None, repr=False, compare=False)  # where to read it when `doc` is not loaded yet


@dataclass(frozen=True, slots=True)
class Reader:
    """One state of the index as searches read it: the searcher, and what was read through it (each
    document's path and facts by address). Replaced as a whole at every reload (the reader reloads only
    then), so a search that took it reads addresses and remembered documents of the same state."""

    searcher: Any
    stored: dict[tuple[int, int], tuple[str, dict[str, object]]] = field(default_factory=dict)
    # what callers derive from a document's facts alone (e.g. a note's multipliers), by their own keys
    derived: dict[Any, Any] = field(default_factory=dict)


# The text of a huge note, kept with the reader's state across searches: reading and decoding it from the
# index costs more than the rest of a search (4 MB: 18 ms, bench/huge_note_bench.py).
_BIG_TEXTS = "big-texts"
_BIG_TEXT = 200_000  # characters
_BIG_TEXTS_KEPT = 4


class HitList:
    """Matches in raw-score order. Stored fields are loaded on demand (`load`), so a caller that can stop
    early (multipliers never raise a score) does not pay for documents it never looks at; a document's path
    and facts are remembered per reader state, and its text is read when a snippet is cut."""

    def __init__(
        self,
        scored: list[tuple[float, Any]],
        matched: int,
        hidden: dict[str, int],
        searcher: Any = None,
        snippets: Any = None,
        snippet_chars: int = 180,
        details: dict[tuple[int, int], dict[int, int]] | None = None,
        *,
        stored: dict[tuple[int, int], tuple[str, dict[str, object]]] | None = None,
        make_snippets: Any = None,
        derived: dict[Any, Any] | None = None,
    ) -> None:
        self.scored = scored
        self.matched = matched  # documents matching the query (outside the walls unless included)
        self.hidden = hidden  # per wall: matching documents the walls left out
        self._searcher = searcher
        self._snippets = snippets
        self._make_snippets = make_snippets  # builds the snippet generator when the first snippet is cut
        self._snippet_chars = snippet_chars
        self._details = details or {}
        self._stored = stored  # the reader's remembered paths and facts (None: not remembered)
        # kept as long as the reader's state: values callers derive from facts (see `Reader.derived`)
        self.derived: dict[Any, Any] = {} if derived is None else derived
        self._texts: dict[tuple[int, int], str] = {}  # by address: the texts read for snippets
        # True when `scored` is only the beginning of the top asked for (`SearchIndex.search`'s `head`)
        self.partial = False

    @property
    def searcher(self) -> Any:
        """The searcher of the reader state the matches were found in (None for an empty list)."""
        return self._searcher

    def ranks(self, i: int) -> dict[int, int]:
        """For a fused search: the rank the i-th hit had in each group's list (group index -> rank)."""
        addr = self.scored[i][1]
        return dict(self._details.get((addr.segment_ord, addr.doc), {}))

    def __len__(self) -> int:
        return len(self.scored)

    def load(self, i: int) -> Hit:
        score, addr = self.scored[i]
        stored = self._stored
        if stored is not None:
            known = stored.get((addr.segment_ord, addr.doc))
            if known is not None:
                return Hit(known[0], float(score), known[1], None, addr)
        doc = self._searcher.doc(addr)
        facts = json.loads(bytes(doc["facts"][0]).decode("utf-8")) if doc["facts"] else {}
        path = doc["path"][0]
        if stored is not None:
            if len(stored) >= _FACTS_MEMO_MAX:
                stored.clear()
            stored[(addr.segment_ord, addr.doc)] = (path, facts)
        return Hit(path, float(score), facts, doc, addr)

    @property
    def hits(self) -> list[Hit]:
        return [self.load(i) for i in range(len(self.scored))]

    def snippet_of(self, text: str) -> str:
        """A passage of `text` around the matched words (or its opening) in at most the snippet size."""
        fragment = ""
        if self._snippets is None and self._make_snippets is not None and text:
            self._snippets, self._make_snippets = self._make_snippets(), None
        if self._snippets is not None and text:
            fragment = self._snippets.snippet_from_doc(tantivy.Document(body=text)).fragment()
        if not fragment:
            fragment = text[: self._snippet_chars * 2]
        words = " ".join(fragment.split())
        if len(words) > self._snippet_chars:
            words = words[: self._snippet_chars].rsplit(" ", 1)[0] + " …"
        return words

    def text_of(self, hit: Hit) -> str:
        """The note's Markdown body as stored in the index."""
        key = None if hit.addr is None else (hit.addr.segment_ord, hit.addr.doc)
        if key is not None and key in self._texts:
            return self._texts[key]
        big: dict[tuple[int, int], str] = self.derived.setdefault(_BIG_TEXTS, {})
        if key is not None and key in big:
            return big[key]
        doc = hit.doc
        if doc is None and hit.addr is not None and self._searcher is not None:
            doc = self._searcher.doc(hit.addr)
        text = bytes(doc["text"][0]).decode("utf-8", "replace") if doc is not None and doc["text"] else ""
        if key is not None:
            self._texts[key] = text
            if len(text) > _BIG_TEXT and len(big) < _BIG_TEXTS_KEPT:
                big[key] = text
        return text

    def snippet(self, hit: Hit) -> str:
        """A short passage of the note's text around the matched words (computed on demand: it is the
        costly part of a search, so only results that are shown pay for it)."""
        return self.snippet_of(self.text_of(hit))
