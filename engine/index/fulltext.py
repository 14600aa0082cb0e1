"""The Tantivy full-text index. This is the only module that imports tantivy.

One document per note, keyed by its vault-relative path (a `raw` field, so delete-by-term works).
`title`, `meta` and `body` go through one analyzer: words of letters, marks and digits (each CJK
ideograph its own token), ASCII folding, lower case and the Snowball English stemmer. Scores are BM25
with field boosts title 4, meta 3, body 1. A `names` field (raw terms, never scored on its own) holds the
note's names, normalised by `name_key`: its title, its file name (and a Dendron hierarchy's last segments),
its aliases and its headings, each as `<kind code>:<key>`, so a query that is a name finds its note by an
exact term (or a term prefix), whatever the query's length. A small JSON file beside the segments records the schema
version and a generation id; the catalog keeps the same id, so a rebuilt index is never paired with a
catalog that describes the old one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable, Container, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import tantivy

from agentmd.engine.errors import IndexBusy, IndexDamaged
from agentmd.engine.index.integrity import CHECK_INTERVAL, IndexGuard
from agentmd.engine.index.terms import BothTerms, TextTerms
from agentmd.vault_schema import cjk

log = logging.getLogger("agentmd.index")

# 4: facts carry the note's summary and opening line (vault_schema/digest.py); 5: the names field (title, file
# name, aliases, headings; see name_key); 6: facts carry `trust` and `probe` (engine/search/trust.py) and `meta`
# (engine/search/confidence.py)
SCHEMA_VERSION = 7
ANALYZER = "agentmd_text"
FIELD_BOOSTS = {"title": 4.0, "meta": 3.0, "body": 1.0}
# The boosts a question's words are scored with (engine/search/searcher.py, QUESTION_BOOSTS): a word counted
# before it is searched (`doc_freq`) is parsed with them, so the question's search finds it parsed.
QUESTION_FIELD_BOOSTS = {"title": 0.2, "meta": 0.2, "body": 1.0}
SEARCH_FIELDS = ["title", "meta", "body"]
NO_WALL = "none"
WALL_NAMES = ("archived", "superseded", "staged")
_WORD = re.compile(r"\w")
# A token is a run of letters, marks, digits and `_`, except that each CJK ideograph, hiragana or katakana is a
# token of its own. The two alternatives never match the same character, so their order changes no token; the
# run comes first because nearly every token is one (bench/token_check.py compares the streams on the corpora).
_TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}_--\p{Han}--\p{Hiragana}--\p{Katakana}]+|[\p{Han}\p{Hiragana}\p{Katakana}]"
_MARKER = "agentmd-index.json"
# The analyzer's tokens never hold white space, so analysing each white-space-separated run of a text apart
# gives exactly the terms of the whole text (tests/test_index_memos.py checks it on the shared corpora).
_SEGMENT_TERMS: dict[str, tuple[str, ...]] = {}
_SEGMENT_MEMO_MAX = 200_000
# A note's terms (all of them, and its title's) by path, with the title, meta and body they were analysed
# from: kept across index changes, which forget the per-state memo of `note_terms` (see `_terms_of`).
_NOTE_TERMS_KEPT: dict[str, tuple[tuple[str, str, str], tuple[Container[str], frozenset[str]]]] = {}
_DOC_FREQ_MEMO_MAX = 50_000
_NOTE_TERMS_MEMO_MAX = 2_048
_QUERY_MEMO_MAX = 4_096
_FACTS_MEMO_MAX = 20_000
# From this many notes a question of common words only is read from the top of its any-word ranking even for
# its whole list (a hybrid search's 200 candidates): per question of the search benchmark's vaults, 1.56 ms
# in full against 1.97 ms from the top at 10,000 notes, 12.5 against 7.5 ms at 100,000.
WIDE_HEAD_FROM = 30_000
WRITER_HEAP = 128_000_000
WRITER_BUSY_WAIT = 5.0  # seconds a writer waits for the write lock of a writer just closed before IndexBusy
# The kinds of name, in the order they rank: a Dendron hierarchy's last segments (`b.c` and `c` of `a.b.c`)
# are a `segment`, reported as a file name; an exact title, file name or alias ranks before them.
NAME_KINDS = ("title", "file name", "alias", "segment", "heading")
_NAME_CODES = {"title": "t", "file name": "f", "alias": "a", "segment": "s", "heading": "h"}
_APOSTROPHES = dict.fromkeys(map(ord, "'\u2019`\u00b4"), None)
# An ASCII name's key in one `translate`: every character that is not a letter or digit a space, apostrophes gone.
_ASCII_KEY: dict[int, str | None] = {i: " " for i in range(128) if not chr(i).isalnum()} | dict.fromkeys(
    map(ord, "'`"), None
)


# A search counts its matches (`SearchIndex._counts`) on a worker thread while it ranks them, and a fused search
# ranks its lists side by side: Tantivy releases the GIL while it searches, so on two cores the count, which
# visits every match, no longer adds to the ranking's time (bench/search_bench.py). One pool per process: a
# forked child makes its own, since the parent's threads do not exist in it.
_SEARCH_WORKERS = 2
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _pairs_cover(groups: Sequence[Sequence[str]]) -> bool:
    """Whether the notes matching any of `groups` are exactly those holding two or more of the first group's
    words: every group holds two or more of them, and every pair of them is a group (the three-word plan's
    full conjunction and its pairs)."""
    first = set(groups[0])
    if len(first) < 2:
        return False
    sets = [set(g) for g in groups]
    if any(len(g) < 2 or not g <= first for g in sets):
        return False
    return all({a, b} in sets for a in first for b in first if a < b)


def _search_pool() -> ThreadPoolExecutor:
    global _pool
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(_SEARCH_WORKERS, thread_name_prefix="agentmd-search"))
        return _pool[1]


@dataclass(frozen=True, slots=True)
class IndexDoc:
    """What the index stores for one note."""

    path: str
    title: str  # the text the title field indexes
    meta: str
    body: str  # frontmatter text + Markdown body: what the body field searches
    text: str  # the Markdown body alone: what snippets are cut from
    wall: str | None
    day: int  # captured date as yyyymmdd
    facts: dict[str, Any] = field(default_factory=dict)  # stored JSON: title, captured, status, project...
    names: tuple[tuple[str, str], ...] = ()  # (kind, name) with kind one of NAME_KINDS; normalised on write
    # `facts` and `names` as the index stores them, made ahead by `encoded` (then those two are left empty)
    facts_json: bytes = b""
    name_terms: tuple[str, ...] | None = None

    def __reduce__(self) -> tuple[type[IndexDoc], tuple[Any, ...]]:
        # pickled as its fields through the constructor: a pass's worker processes send thousands of documents
        return IndexDoc, tuple(getattr(self, name) for name in self.__slots__)


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
    stored: dict[tuple[int, int], tuple[str, dict[str, Any]]] = field(default_factory=dict)
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
        stored: dict[tuple[int, int], tuple[str, dict[str, Any]]] | None = None,
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


def name_key(text: str) -> str:
    """A name as it is matched: accents, case and a trailing `.md` ignored, apostrophes dropped, any other
    character that is not a letter or digit (`-`, `_`, `.`, punctuation) read as a space."""
    text = text.strip()
    if text.lower().endswith(".md"):
        text = text[:-3]
    if text.isascii():  # most names: nothing to fold, decompose or recompose
        return " ".join(text.lower().translate(_ASCII_KEY).split())
    folded = unicodedata.normalize("NFKD", text.casefold().translate(_APOSTROPHES))
    bare = "".join(ch if ch.isalnum() else " " for ch in folded if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", " ".join(bare.split()))


def _analyzer() -> Any:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(_TOKEN_PATTERN))
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _plain_analyzer() -> Any:
    """The analyzer's chain on Tantivy's simple tokenizer (runs of letters and digits), about three times
    faster: on text `plain_words` accepts it makes exactly the analyzer's tokens at the same positions (ASCII
    folding is left out: such text has nothing to fold)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(80))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def plain_words(text: str) -> bool:
    """Whether both tokenizers read `text` alike: in ASCII without `_` the analyzer's runs of letters, marks,
    digits and `_` are the simple tokenizer's runs of [A-Za-z0-9], and there is no CJK character."""
    return text.isascii() and "_" not in text


def encoded(doc: IndexDoc) -> IndexDoc:
    """The document with its facts and names as the index stores them (the facts as JSON, the names as sorted
    `<kind code>:<key>` terms), so that work can be done in a pass's worker process, which also sends fewer
    objects."""
    if doc.name_terms is not None:
        return doc
    terms = tuple(sorted({f"{_NAME_CODES[k]}:{key}" for k, n in doc.names if (key := name_key(n))}))
    facts = json.dumps(doc.facts, ensure_ascii=False).encode("utf-8")
    return IndexDoc(doc.path, doc.title, doc.meta, doc.body, doc.text, doc.wall, doc.day, {}, (), facts, terms)


def facts_of(doc: IndexDoc) -> dict[str, Any]:
    """The facts of a document, encoded or not."""
    if doc.name_terms is None:
        return doc.facts
    loaded: dict[str, Any] = json.loads(doc.facts_json)
    return loaded


def with_facts(doc: IndexDoc, facts: dict[str, Any]) -> IndexDoc:
    """The document with other facts, in the form it has (encoded or not)."""
    if doc.name_terms is None:
        return replace(doc, facts=facts)
    return replace(doc, facts_json=json.dumps(facts, ensure_ascii=False).encode("utf-8"))


def _plain_doc(doc: IndexDoc) -> bool:
    return plain_words(doc.body) and plain_words(doc.title) and plain_words(doc.meta)


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("title", stored=False, tokenizer_name=ANALYZER)
    sb.add_text_field("meta", stored=False, tokenizer_name=ANALYZER)
    sb.add_text_field("body", stored=False, tokenizer_name=ANALYZER)
    sb.add_bytes_field("text", stored=True, indexed=False)  # the Markdown body alone, for snippets
    sb.add_text_field("wall", stored=False, tokenizer_name="raw", index_option="basic", fast=True)
    sb.add_text_field("names", stored=False, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("day", stored=False, indexed=True, fast=True)
    sb.add_bytes_field("facts", stored=True, indexed=False)
    return sb.build()


def _commit(writer: Any, alongside: Callable[[], None] | None) -> None:
    """`writer.commit()`, with `alongside` run in this thread meanwhile; the commit's error wins over its."""
    if alongside is None:
        writer.commit()
        return
    failed: list[BaseException] = []

    def commit() -> None:
        try:
            writer.commit()
        except BaseException as exc:  # a panic too: raised in the caller's thread below
            failed.append(exc)

    thread = threading.Thread(target=commit, name="agentmd-index-commit", daemon=True)
    thread.start()
    try:
        alongside()
    finally:
        thread.join()
        if failed:
            raise failed[0]


def is_panic(exc: BaseException) -> bool:
    """A Rust panic inside Tantivy (pyo3's PanicException derives from BaseException, not Exception)."""
    return type(exc).__name__ == "PanicException"


_is_panic = is_panic


def quote_terms(words: Iterable[str]) -> list[str]:
    """Each user word as a quoted phrase, so no operator, field prefix or wildcard keeps its meaning."""
    out = []
    for word in words:
        if not _WORD.search(word):
            continue
        out.append('"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return out


class SearchIndex:
    """A Tantivy index in `directory`, created, upgraded or set aside and rebuilt as needed."""

    def __init__(self, directory: Path, *, busy_wait: float = WRITER_BUSY_WAIT) -> None:
        self.directory = directory
        self.busy_wait = busy_wait  # how long a writer waits for the index's write lock before IndexBusy
        self.schema = _schema()
        self.created = False  # True when this open started an empty index
        self.set_aside: Path | None = None
        self._writer: Any = None
        self._write_index: Any = None  # the index as the writer opens it: its own analyzers (see `apply`)
        self._writer_threads = 0  # 0: Tantivy's choice (one per core); see `small_commits`
        self._analyzer = _analyzer()
        self._reloads = 0  # bumped at every reload, so caches of the old state are dropped
        self._df_cache: dict[str, int] = {}
        # the best score of one word's query among the notes outside the walls, or everywhere (see `_word_best`)
        self._best_cache: dict[tuple[str, tuple[tuple[str, float], ...], bool], float] = {}
        self._terms_cache: dict[str, tuple[Container[str], frozenset[str]]] = {}
        self._query_memo: dict[tuple[tuple[str, ...], bool, tuple[tuple[str, float], ...]], Any] = {}
        self._word_memo: dict[str, Any] = {}  # one word's parsed query, any boosts (see `_word_query`)
        self._state_key: tuple[int, int, int] | None = None
        # damage seen from outside the memory map (engine/index/integrity.py)
        self.guard = IndexGuard(directory, min_interval=CHECK_INTERVAL)
        self._index = self._open()
        self._reader = Reader(self._index.searcher())
        self.generation: str = self._read_marker()["generation"]
        self.guard.refresh()

    # -- opening ---------------------------------------------------------------------------------

    def _open(self) -> Any:
        d = self.directory
        if d.exists() and any(d.iterdir()):
            problem = self._check_existing() or IndexGuard(d).refresh()
            if problem is None:
                try:
                    index = tantivy.Index(self.schema, path=str(d), reuse=True)
                    index.register_tokenizer(ANALYZER, _analyzer())
                    index.config_reader(reload_policy="manual")  # see `_reload`
                    self._health_check(index)
                    return index
                except BaseException as exc:
                    if not isinstance(exc, (ValueError, OSError, RuntimeError)) and not _is_panic(exc):
                        raise
                    problem = f"index could not be opened ({exc})"
            self._set_aside(problem)
        d.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self.schema, path=str(d), reuse=False)
        index.register_tokenizer(ANALYZER, _analyzer())
        index.config_reader(reload_policy="manual")
        (d / _MARKER).write_text(
            json.dumps({"schema_version": SCHEMA_VERSION, "generation": uuid.uuid4().hex}), encoding="utf-8"
        )
        self.created = True
        return index

    def _check_existing(self) -> str | None:
        try:
            marker = json.loads((self.directory / _MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "index has no readable version marker"
        if marker.get("schema_version") != SCHEMA_VERSION:
            return f"index schema version {marker.get('schema_version')} differs from {SCHEMA_VERSION}"
        try:
            if not tantivy.Index.exists(str(self.directory)):
                return "index metadata is missing"
        except (ValueError, OSError) as exc:
            return f"index metadata is unreadable ({exc})"
        return None

    @staticmethod
    def _health_check(index: Any) -> None:
        searcher = index.searcher()
        result = searcher.search(tantivy.Query.all_query(), 1)
        for _score, addr in result.hits:
            searcher.doc(addr)

    def _set_aside(self, problem: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%S")
        target = self.directory.with_name(f"{self.directory.name}.broken-{stamp}-{uuid.uuid4().hex[:6]}")
        try:
            self.directory.rename(target)
            self.set_aside = target
            log.warning("%s: set aside as %s and rebuilding", problem, target)
        except OSError:
            shutil.rmtree(self.directory, ignore_errors=True)
            log.warning("%s: removed and rebuilding", problem)

    def _read_marker(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.directory / _MARKER).read_text(encoding="utf-8"))
        return data

    # -- writing ---------------------------------------------------------------------------------

    def _get_writer(self) -> Any:
        """The index writer, opened when there is none. Its lock file may still be held for a moment by a
        writer just closed (this process's own, being dropped; a rebuild's), so a busy lock is waited for up to
        `busy_wait` seconds before IndexBusy says another process is writing."""
        deadline = time.monotonic() + self.busy_wait
        pause = 0.005
        while self._writer is None:
            try:
                if self._write_index is None:
                    self._write_index = tantivy.Index(self.schema, path=str(self.directory), reuse=True)
                    self._write_index.register_tokenizer(ANALYZER, _analyzer())
                self._writer = self._write_index.writer(heap_size=WRITER_HEAP, num_threads=self._writer_threads)
            except ValueError as exc:
                if "LockBusy" not in str(exc) and "Lockfile" not in str(exc):
                    raise
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"another process is writing the index at {self.directory} (is `agentmd serve` "
                        "running for this vault?); let it do the work or stop it, then retry"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.2)
        return self._writer

    def small_commits(self) -> None:
        """Index from now on with one writer thread: for many commits of a few notes each (captures, file
        events). Each indexing thread that receives a document writes a segment of its own, and each segment
        costs its files' fsyncs at the commit and later merges: with one thread a commit of a few notes
        syncs less than half as often, which is most of its time. The caller holds the store's lock."""
        if self._writer_threads == 1:
            return
        self.close()  # the next write opens the one-thread writer
        self._writer_threads = 1

    def apply(
        self,
        upserts: Iterable[IndexDoc],
        deletes: Iterable[str] = (),
        *,
        new: bool = False,
        alongside: Callable[[], None] | None = None,
    ) -> None:
        """Delete and (re)add documents by path, then make the change visible.

        `upserts` may be a generator: documents are handed to the indexing threads as they come. Into an
        empty index, or with `new` (the caller knows none of the upserts' paths is in the index: the later
        batches of a build that began empty), nothing is replaced, so a document is deleted by path first
        only when its path came earlier in the same call; that spares the commit a term look-up per note.

        An update is one commit. A build (`new`) may be two: the notes whose title, meta and body are all
        `plain_words` go first through the plain analyzer (the same terms at the same positions, three times
        faster), the others follow through the analyzer itself. The analyzers belong to the writer's own
        opening of the index, so searches meanwhile analyse queries as always. Should the second commit
        fail, the first stays: the catalog has no row for its notes, so the next pass indexes them again,
        each replacing its own document.

        `alongside` runs in this thread while the last commit runs in another (Tantivy's commit leaves the
        interpreter free), so the caller's own writes (a build's catalog rows) cost no time of their own; it
        does not see the commit's outcome, which this method raises once both are done."""
        self.ensure_sound()
        writer = self._get_writer()
        new = new or self._index.searcher().num_docs == 0
        added: set[str] = set()
        later: list[IndexDoc] = []  # a build's notes with other text, for the analyzer itself
        held: set[str] = set()
        plain = False
        try:
            for path in deletes:
                writer.delete_documents_by_term("path", path)
            if new:
                # Read when an indexing thread starts a segment: every segment of this commit gets it.
                self._write_index.register_tokenizer(ANALYZER, _plain_analyzer())
                plain = True
            for doc in upserts:
                if plain and (doc.path in held or not _plain_doc(doc)):
                    later.append(doc)
                    held.add(doc.path)
                    continue
                self._add(writer, doc, new, added)
            if plain:
                if added and later:
                    writer.commit()
                self._write_index.register_tokenizer(ANALYZER, _analyzer())
                plain = False
                for doc in later:
                    self._add(writer, doc, new, added)
            _commit(writer, alongside)
        except BaseException:
            with contextlib.suppress(ValueError):
                writer.rollback()
            raise
        finally:
            if plain:
                self._write_index.register_tokenizer(ANALYZER, _analyzer())
        self._reload()

    @staticmethod
    def _add(writer: Any, doc: IndexDoc, new: bool, added: set[str]) -> None:
        doc = encoded(doc)
        if not new or doc.path in added:
            writer.delete_documents_by_term("path", doc.path)
        if new:
            added.add(doc.path)
        document = tantivy.Document(
            path=doc.path,
            title=doc.title,
            meta=doc.meta,
            body=doc.body,
            text=doc.text.encode("utf-8", "replace"),
            wall=doc.wall or NO_WALL,
            day=doc.day,
            facts=doc.facts_json,
        )
        for term in doc.name_terms or ():
            document.add_text("names", term)
        writer.add_document(document)

    def clear(self) -> None:
        writer = self._get_writer()
        writer.delete_all_documents()
        writer.commit()
        self._reload()

    def _reload(self) -> None:
        """Make the last commit visible, after checking the files the reader is about to open. The reader
        reloads only here (policy "manual"): Tantivy's own reload thread would reopen segments, through
        mappings it keeps, whenever a merge rewrote meta.json, and no check could run before it."""
        self.ensure_sound()
        self._index.reload()
        self._reader = Reader(self._index.searcher())
        self._reloads += 1
        self.guard.refresh()

    def close(self) -> None:
        if self._writer is not None and self.guard.damage is not None:
            self._writer = self._write_index = None  # a damaged index: no merge may read its segments again
            return
        if self._writer is not None:
            try:
                self._writer.wait_merging_threads()
            except (ValueError, RuntimeError) as exc:
                log.warning("index writer did not close cleanly: %s", exc)
            self._writer = self._write_index = None

    # -- reading ---------------------------------------------------------------------------------

    def ensure_sound(self) -> None:
        """Raise IndexDamaged when the folder shows damage (see engine/index/integrity.py); run before any
        read, since reading a truncated segment through its map kills the process. One look at the folder
        serves the reads of the next `CHECK_INTERVAL` seconds."""
        problem = self.guard.check()
        if problem is not None:
            raise IndexDamaged(f"the index at {self.directory} is damaged: {problem}; it is rebuilt from the vault")

    def damaged(self, exc: BaseException) -> IndexDamaged:
        """The IndexDamaged for an error Tantivy raised while reading: a panic is damage; a plain error is
        damage only if the files fail their checksums."""
        problem = f"Tantivy panicked: {exc}" if _is_panic(exc) else self.guard.verify_all()
        if problem is not None:
            self.guard.mark(problem)
        return IndexDamaged(
            f"the index at {self.directory} could not be searched ({problem or exc}); "
            "run `agentmd reindex --from-scratch` if this repeats"
        )

    def doc_count(self) -> int:
        self.ensure_sound()
        return int(self._reader.searcher.num_docs)

    def paths(self) -> set[str]:
        self.ensure_sound()
        searcher = self._index.searcher()
        n = searcher.num_docs
        if n == 0:
            return set()
        result = searcher.search(tantivy.Query.all_query(), n)
        return {searcher.doc(addr)["path"][0] for _s, addr in result.hits}

    def _text_query(
        self, words: Sequence[str], conjunction: bool, boosts: dict[str, float] | None = None
    ) -> Any | None:
        """The parsed query of the words over the searched fields, or None when nothing can match. Parsed
        queries are remembered (they depend on the words, the schema and the analyzer, never on the index's
        contents): one search parses each of its words several times (the plan, the question's word
        clauses, the name search, the confidence's document counts)."""
        key = (tuple(words), conjunction, tuple((boosts or FIELD_BOOSTS).items()))
        memo = self._query_memo
        if key in memo:
            return memo[key]
        quoted = quote_terms(words)
        query: Any | None = None
        if quoted:
            try:
                query = self._index.parse_query(
                    " ".join(quoted),
                    SEARCH_FIELDS,
                    field_boosts=boosts or FIELD_BOOSTS,
                    conjunction_by_default=conjunction,
                )
            except ValueError:
                query = None  # every quoted word analysed to nothing (e.g. only over-long tokens)
        if len(memo) >= _QUERY_MEMO_MAX:
            memo.clear()
            self._word_memo.clear()
        memo[key] = query
        if len(words) == 1 and all(b > 0 for b in (boosts or FIELD_BOOSTS).values()):
            self._word_memo[words[0]] = query
        return query

    def _word_query(self, word: str) -> Any | None:
        """A parsed query of one word over the searched fields, with whatever field boosts it was parsed with
        (all above 0): the notes it matches do not depend on them, so counting them needs no parse of its own."""
        if word in self._word_memo:
            return self._word_memo[word]
        return self._text_query([word], True, QUESTION_FIELD_BOOSTS)

    def _at_least(self, words: Sequence[str], n: int, boosts: dict[str, float] | None) -> Any | None:
        """Notes holding at least `n` of the words (each in any field), scored by BM25 over all of them."""
        per_word = [q for q in (self._text_query([w], True, boosts) for w in words) if q is not None]
        if len(per_word) < n:
            return None
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_word], minimum_number_should_match=n)

    def analyze(self, text: str) -> list[str]:
        """The terms the index makes of `text` (lower-cased, folded, stemmed), in order, exactly as the
        analyzer would (see `_looked_up`)."""
        return list(chain.from_iterable(self._looked_up(text.split())))

    def analyze_whole(self, text: str) -> list[str]:
        """The analyzer run over the whole text at once, as the index runs it when it indexes (and without the
        memo); `analyze` gives the same terms, faster."""
        return list(self._analyzer.analyze(text))

    def term_set(self, text: str) -> set[str]:
        """The distinct terms of `text`."""
        return set(chain.from_iterable(self._looked_up(set(text.split()))))

    def _looked_up(self, segments: Iterable[str]) -> list[tuple[str, ...]]:
        """The terms of each white-space-separated run of a text, from a memo shared by every index: a search
        analyses every section of every note it returns, and the analyzer costs about 1.1 µs a word where
        the memo costs a tenth of that."""
        memo = _SEGMENT_TERMS
        segments = list(segments)
        looked = list(map(memo.get, segments))
        if None in looked:
            if len(memo) >= _SEGMENT_MEMO_MAX:
                memo.clear()
            for i, terms in enumerate(looked):
                if terms is None:
                    looked[i] = memo[segments[i]] = tuple(self._analyzer.analyze(segments[i]))
        return looked  # type: ignore[return-value]  # every None was filled above

    def note_terms(self, path: str, known: tuple[Hit, HitList] | None = None) -> tuple[Container[str], frozenset[str]]:
        """The analysed terms of a note (title, meta and text) and of its title alone, read from the index
        and remembered until the index changes (after it, a note that reads as before takes its terms from
        `_terms_of` instead of being analysed again): the confidence model and the hybrid's word share ask
        for the same notes in one search, and the hook's searches return the same notes again and again.
        `known`: the note's hit as a search of the current state found it, read instead of looking it up."""
        self._check_state()
        cached = self._terms_cache.get(path)
        if cached is not None:
            return cached
        if known is not None and known[1]._searcher is not self._reader.searcher:
            known = None  # found before the last reload: read the note as it is now
        found = known or self.hit_for(path)
        if found is None:
            return frozenset(), frozenset()
        hit, hits = found
        terms = self._terms_of(
            path, str(hit.facts.get("title") or ""), str(hit.facts.get("meta") or ""), hits.text_of(hit)
        )
        if len(self._terms_cache) >= _NOTE_TERMS_MEMO_MAX:
            self._terms_cache.pop(next(iter(self._terms_cache)))
        self._terms_cache[path] = terms
        return terms

    def _cjk_pairs(self, text: str) -> set[str]:
        """The joined pairs of neighbouring CJK characters of `text` (`cjk.pairs`), so a note is known to hold
        a query's `中文` only when the two characters stand together in it."""
        out: set[str] = set()
        if not cjk.has_cjk(text):  # one scan of the text spares splitting most notes that are not ASCII
            return out
        for segment in {s for s in text.split() if cjk.has_cjk(s)}:
            out.update(cjk.pairs(self._looked_up([segment])[0]))
        return out

    def _terms_of(self, path: str, title: str, meta: str, body: str) -> tuple[Container[str], frozenset[str]]:
        """The terms of a note's title, meta and body, and of its title alone; taken from `_NOTE_TERMS_KEPT`
        when the note reads as it did when they were analysed, so a note that an index change left as it was
        is not analysed again (the analysis depends on the text alone, never on the index's contents). The
        terms of an ASCII note's meta and body are found one at a time, as they are asked for (`TextTerms`)."""
        kept = _NOTE_TERMS_KEPT.get(path)
        if kept is not None and kept[0] == (title, meta, body):
            return kept[1]
        title_terms = self.term_set(title)
        terms: tuple[Container[str], frozenset[str]]
        if title.isascii() and meta.isascii() and body.isascii():
            title_set = frozenset(title_terms)
            terms = (BothTerms(title_set, TextTerms(f"{meta}\n{body}", self.run_terms, self.term_set)), title_set)
        else:
            rest = self.term_set(f"{meta}\n{body}")
            title_terms |= self._cjk_pairs(title)  # CJK words are pairs of terms
            rest |= self._cjk_pairs(f"{meta}\n{body}")
            terms = (frozenset(title_terms | rest), frozenset(title_terms))
        if len(_NOTE_TERMS_KEPT) >= _NOTE_TERMS_MEMO_MAX:
            _NOTE_TERMS_KEPT.pop(next(iter(_NOTE_TERMS_KEPT)), None)  # the oldest
        _NOTE_TERMS_KEPT[path] = ((title, meta, body), terms)
        return terms

    def run_terms(self, run: str) -> tuple[str, ...]:
        """The terms of one run of word characters (from the analyzer's memo)."""
        return self._looked_up([run])[0]

    def doc_freq(self, word: str) -> int:
        """How many notes contain `word` in any searched field. Remembered until the index changes: a
        question's words are counted by the plan, the confidence model and the hybrid's word share."""
        self._check_state()
        cached = self._df_cache.get(word)
        if cached is not None:
            return cached
        q = self._word_query(word)
        if q is None:
            n = 0
        else:
            self.ensure_sound()
            n = int(self._reader.searcher.search(q, 1, count=True).count)
        if len(self._df_cache) < _DOC_FREQ_MEMO_MAX:
            self._df_cache[word] = n
        return n

    def _check_state(self) -> None:
        """Drop what is remembered of an older state of the index. A state is told from the next by this
        object's own commits and reloads and, for a writer in another process, by the searcher's document and
        segment counts."""
        searcher = self._reader.searcher
        key = (self._reloads, int(searcher.num_docs), int(searcher.num_segments))
        if key != self._state_key:
            self._df_cache = {}
            self._best_cache = {}
            self._terms_cache = {}
            self._state_key = key

    def search(
        self,
        words: Sequence[str],
        *,
        limit: int,
        include_walled: bool = False,
        day_range: tuple[int | None, int | None] = (None, None),
        conjunction: bool = True,
        snippet_chars: int = 180,
        groups: Sequence[Sequence[str]] | None = None,
        weights: Sequence[float] | None = None,
        boosts: dict[str, float] | None = None,
        rrf_k: float = 60.0,
        evidence_weight: float = 0.0,
        min_match: int | None = None,
        sufficient: Sequence[str] = (),
        head: int | None = None,
    ) -> HitList:
        """Top `limit` matches. With `head` (below `limit`), a question's list may hold only its first `head`
        or more matches, when that is cheaper (`partial` is then True): for a caller that reads only the top
        and asks again without `head` when it needs more.

        Without `groups`: BM25 over `words`, each word required when `conjunction`. With several `groups`
        (fusion): each group is a conjunctive query of its own; their rankings are fused by reciprocal rank
        (sum of weight / (rrf_k + rank)), so a note that satisfies many groups, or ranks high in the strict
        ones, comes first, and a note matching no group is not returned at all.
        """
        empty = HitList([], 0, dict.fromkeys(WALL_NAMES, 0))
        if limit <= 0:
            return empty
        subqueries: list[Any] = []
        counted_q: Any = None  # what matches the same notes as the query, cheaper to count (see `_counts`)
        # a question's any-word query, its words and those of them that are not rare
        loose: tuple[Any, list[str], list[str]] | None = None
        if groups and len(groups) > 1:
            for group in groups:
                q = self._text_query(group, True, boosts)
                if q is not None:
                    subqueries.append(q)
            if not subqueries:
                return empty
            text_q = (
                subqueries[0]
                if len(subqueries) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subqueries])
            )
        elif min_match is not None:
            terms = groups[0] if groups else words
            rule = self._at_least(terms, min_match, boosts)
            # a note holding one of the `sufficient` (rare) words qualifies too
            alone = [q for q in (self._text_query([w], True, boosts) for w in sufficient) if q is not None]
            admitted = [q for q in (rule, *alone) if q is not None]
            if not admitted:
                return empty
            gate = (
                admitted[0]
                if len(admitted) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in admitted])
            )
            # Every admitted note is scored alike, by BM25 over all the words: a constant 0 for the admission
            # rule plus the any-word query's score, so the top can be read from the any-word ranking
            # (`_question_top`) with the very scores the full search gives.
            anyword = self._at_least(terms, 1, boosts)
            clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(gate, 0.0))]
            if anyword is not None:
                clauses.append((tantivy.Occur.Should, anyword))
                loose = (anyword, list(terms), [w for w in terms if w not in sufficient])
            text_q = tantivy.Query.boolean_query(clauses)
            counted_q = gate
        else:
            text_q = self._text_query(groups[0] if groups else words, conjunction, boosts)
            if text_q is None:
                return empty
        filters = self._filters(include_walled, day_range)
        self.ensure_sound()
        reader = self._reader
        searcher = reader.searcher
        try:
            lists = list(subqueries)
            w = list(weights or [1.0] * len(subqueries))
            if len(subqueries) > 1 and evidence_weight > 0:
                # One more ranking: BM25 of every word over the notes that hold at least two of them. It
                # weighs each word's evidence, which the conjunctions alone do not, and like them it
                # never returns a note that shares a single word with the question.
                evidence = self._at_least(groups[0] if groups else words, 2, boosts)
                if evidence is not None:
                    lists.append(evidence)
                    w.append(evidence_weight)
                    text_q = tantivy.Query.boolean_query(
                        [(tantivy.Occur.Should, text_q), (tantivy.Occur.Should, evidence)]
                    )
                    if groups and _pairs_cover(groups):
                        counted_q = evidence  # the same notes as the union of the groups, half the cost to count
            counting = _search_pool().submit(self._counts, searcher, counted_q or text_q, filters, include_walled)
            visible = self._must(text_q, *filters)
            schema = self.schema

            def generator() -> Any:  # built when the first snippet is cut (most rows never need one)
                made = tantivy.SnippetGenerator.create(searcher, text_q, schema, "body")
                made.set_max_num_chars(snippet_chars)
                return made

            if len(subqueries) <= 1:
                # Read from the top when the caller reads the top only, or for the whole list when that is
                # cheaper: a question with a rare word, or one of common words only in a large index (its
                # full admission rule visits most notes; in a small one the whole list costs less).
                wide_ok = bool(sufficient) or searcher.num_docs >= WIDE_HEAD_FROM
                if loose is not None and day_range == (None, None) and (head is not None or wide_ok):
                    first = min(head or limit, limit)
                    quick = self._question_top(searcher, loose, first, filters, boosts)
                    if quick is not None:
                        hidden, matched = counting.result()
                        partial = HitList(
                            quick,
                            matched,
                            hidden,
                            searcher,
                            None,
                            snippet_chars,
                            stored=reader.stored,
                            make_snippets=generator,
                            derived=reader.derived,
                        )
                        partial.partial = first < limit
                        return partial
                result = searcher.search(visible, limit, count=False)
                hidden, matched = counting.result()
                return HitList(
                    list(result.hits),
                    matched,
                    hidden,
                    searcher,
                    None,
                    snippet_chars,
                    stored=reader.stored,
                    make_snippets=generator,
                    derived=reader.derived,
                )
            fused: dict[tuple[int, int], float] = {}
            ranks: dict[tuple[int, int], dict[int, int]] = {}
            addresses: dict[tuple[int, int], Any] = {}
            # the lists after the first are ranked on the pool while this thread ranks the first
            # (no list counts its matches: the count above is the fused query's; a top without a count is cheaper)
            later: list[Future[Any]] = [
                _search_pool().submit(searcher.search, self._must(sub, *filters), limit, False) for sub in lists[1:]
            ]
            first_list = searcher.search(self._must(lists[0], *filters), limit, count=False)
            listed = [first_list, *(f.result() for f in later)]
            hidden, matched = counting.result()
            for i, res in enumerate(listed):
                for rank, (_score, addr) in enumerate(res.hits, 1):
                    key = (addr.segment_ord, addr.doc)
                    addresses[key] = addr
                    fused[key] = fused.get(key, 0.0) + w[i] / (rrf_k + rank)
                    ranks.setdefault(key, {})[i] = rank
            order = sorted(fused, key=lambda k: (-fused[k], min(ranks[k].values())))[:limit]
            hits = [(fused[k], addresses[k]) for k in order]
            details = {k: ranks[k] for k in order}
        except BaseException as exc:
            if isinstance(exc, ValueError) or _is_panic(exc):
                raise self.damaged(exc) from None
            raise
        return HitList(
            hits,
            matched,
            hidden,
            searcher,
            None,
            snippet_chars,
            details,
            stored=reader.stored,
            make_snippets=generator,
            derived=reader.derived,
        )

    def _question_top(
        self,
        searcher: Any,
        loose: tuple[Any, Sequence[str], Sequence[str]],
        limit: int,
        filters: list[Any],
        boosts: dict[str, float] | None,
    ) -> list[tuple[float, Any]] | None:
        """A question's top `limit` found without its admission rule, when that provably gives the same list; else
        None. A question admits the notes holding two of its words or one of its rare words (if it has any), and
        scores each by BM25 over all its words (`loose[0]`, the any-word query, plus a constant 0 for the
        rule): the rule costs most of the search, since counting words per note is far slower than summing
        their scores. Every note the rule admits is in the any-word ranking with the same score (each score is
        the same sum: 0 + the words' BM25), so the top is the any-word ranking without the notes the rule
        turns away. Such a note matches exactly one of the words' clauses, one of a word that is not rare
        (`loose[2]`), and scores what that clause gives it alone. A word whose best score (`_word_best`,
        remembered) is below the `limit`-th kept note's cannot place such a note in the top; for any other
        word, the best-scored notes that hold it and none of the other words are read (`limit` of them)
        and taken out of the ranking. When every note left unread scores less than the `limit`-th kept note,
        the kept notes are the top, with the full search's scores and order."""
        anyword, words, loose_words = loose
        found = searcher.search(self._must(anyword, *filters), 2 * limit, count=False)
        hits = list(found.hits)
        turned_away: set[tuple[int, int]] = set()
        unread_below = float("-inf")  # every turned-away note not read scores at most this
        read: set[str] = set()
        while True:
            kept = [h for h in hits if (h[1].segment_ord, h[1].doc) not in turned_away]
            if len(kept) < limit:
                return None
            last = kept[limit - 1][0]
            if unread_below >= last:
                return None
            more = False
            for word in loose_words:
                if word in read or self._word_best(searcher, word, filters, boosts) < last:
                    continue
                read.add(word)
                alone = self._alone(searcher, word, words, filters, boosts, limit)
                turned_away.update((addr.segment_ord, addr.doc) for _score, addr in alone)
                if len(alone) == limit:
                    unread_below = max(unread_below, float(alone[-1][0]))
                more = True
            if not more:
                return kept[:limit]

    def _alone(
        self,
        searcher: Any,
        word: str,
        words: Sequence[str],
        filters: list[Any],
        boosts: dict[str, float] | None,
        limit: int,
    ) -> list[tuple[float, Any]]:
        """The best `limit` notes (with the walls' filter, scored as a search scores them) that match the clause
        of `word` and the clause of no other of `words`, each clause as `_at_least` makes it."""
        clause = self._text_query([word], True, boosts)
        if clause is None:
            return []
        others = [q for w in words if w != word and (q := self._text_query([w], True, boosts)) is not None]
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, clause)]
            + [(tantivy.Occur.MustNot, q) for q in others]
            + [(tantivy.Occur.Must, f) for f in filters]
        )
        return list(searcher.search(query, limit, count=False).hits)

    def _word_best(self, searcher: Any, word: str, filters: list[Any], boosts: dict[str, float] | None) -> float:
        """The best score a note holding `word` reaches through the word's query alone (with the walls'
        filter, as a search scores it), remembered until the index changes."""
        key = (word, tuple((boosts or FIELD_BOOSTS).items()), bool(filters))
        best = self._best_cache.get(key)
        if best is None:
            q = self._text_query([word], True, boosts)
            if q is None:
                best = float("-inf")
            else:
                got = searcher.search(self._must(q, *filters), 1, count=False).hits
                best = float(got[0][0]) if got else float("-inf")
            if len(self._best_cache) >= _DOC_FREQ_MEMO_MAX:
                self._best_cache.clear()
            self._best_cache[key] = best
        return best

    def _counts(
        self, searcher: Any, query: Any, filters: list[Any], include_walled: bool
    ) -> tuple[dict[str, int], int]:
        """How many notes match `query` (and the day range): those no wall hides, and for each wall those it
        hides (all 0 when the walls are open, `include_walled`, and every match counts). One pass, a terms
        aggregation over the `wall` fast field, which scores nothing: cheaper than a scored count. `filters`
        as `_filters` makes them (the wall's filter last, when there is one)."""
        hidden = dict.fromkeys(WALL_NAMES, 0)
        scope = filters if include_walled else filters[:-1]
        counted = searcher.aggregate(
            self._must(query, *scope), {"walls": {"terms": {"field": "wall", "size": len(WALL_NAMES) + 1}}}
        )
        buckets = {str(b["key"]): int(b["doc_count"]) for b in counted["walls"]["buckets"]}
        if include_walled:
            return hidden, sum(buckets.values())
        for wall in WALL_NAMES:
            hidden[wall] = buckets.get(wall, 0)
        return hidden, buckets.get(NO_WALL, 0)

    def _filters(self, include_walled: bool, day_range: tuple[int | None, int | None]) -> list[Any]:
        filters: list[Any] = []
        lo, hi = day_range
        if lo is not None or hi is not None:
            filters.append(
                tantivy.Query.range_query(self.schema, "day", tantivy.FieldType.Integer, lower_bound=lo, upper_bound=hi)
            )
        if not include_walled:
            filters.append(tantivy.Query.term_query(self.schema, "wall", NO_WALL))
        return filters

    def name_hits(
        self,
        query: str,
        *,
        include_walled: bool = False,
        day_range: tuple[int | None, int | None] = (None, None),
        prefix_notes: int = 5,
        limit: int = 50,
    ) -> list[NameHit]:
        """The notes the query names, best first: a name equal to the query (a title, file name or alias, then
        a Dendron segment, then a heading), then a title, file name or alias that begins with a query of two
        words or more, when at most `prefix_notes` notes share that beginning (a beginning many names share
        names a topic, not a note). Among equals, a note the query names more ways (title and file name)
        comes first, then the higher BM25 of the query's words."""
        key = name_key(query)
        if not key:
            return []
        tries = [(kind, True) for kind in NAME_KINDS]
        if " " in key:
            tries += [(kind, False) for kind in ("title", "file name", "alias")]
        self.ensure_sound()
        searcher = self._reader.searcher
        filters = self._filters(include_walled, day_range)

        def named_query(kind: str, exact: bool) -> Any:
            term = f"{_NAME_CODES[kind]}:{key}"
            # keys hold only letters, digits and single spaces, so the term needs no regex escaping
            if exact:
                return tantivy.Query.term_query(self.schema, "names", term)
            # a prefix automaton at distance 0: names that begin with the key and a space (a regex query
            # compiles a DFA per call, about 1.3 ms; this costs microseconds)
            return tantivy.Query.fuzzy_term_query(self.schema, "names", term + " ", distance=0, prefix=True)

        try:
            if not self._any_name(searcher, key, tries, named_query):
                return []
        except BaseException as exc:
            if isinstance(exc, ValueError) or _is_panic(exc):
                raise self.damaged(exc) from None
            raise
        text_q = self._text_query(key.split(), False)  # orders the notes of one name
        found: dict[str, tuple[int, NameHit]] = {}
        ways: dict[str, int] = {}
        for kind, exact in tries:
            named = named_query(kind, exact)
            clauses = [(tantivy.Occur.Must, tantivy.Query.const_score_query(named, 0.0))]
            clauses += [(tantivy.Occur.Must, f) for f in filters]
            if text_q is not None:
                clauses.append((tantivy.Occur.Should, text_q))
            try:
                res = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=True)
            except BaseException as exc:
                if isinstance(exc, ValueError) or _is_panic(exc):
                    raise self.damaged(exc) from None
                raise
            if not exact and int(res.count) > prefix_notes:
                continue
            rank = {"segment": 1, "heading": 2}.get(kind, 0) if exact else 3
            for score, addr in res.hits:
                doc = searcher.doc(addr)
                path = doc["path"][0]
                if rank == 0:
                    ways[path] = ways.get(path, 0) + 1
                if path in found:
                    continue
                facts = json.loads(bytes(doc["facts"][0]).decode("utf-8")) if doc["facts"] else {}
                shown = "file name" if kind == "segment" else kind
                found[path] = (rank, NameHit(shown, exact, float(score), Hit(path, float(score), facts, doc)))
        ordered = sorted(found.values(), key=lambda r: (r[0], -ways.get(r[1].hit.path, 0), -r[1].score, r[1].hit.path))
        return [h for _rank, h in ordered]

    @staticmethod
    def _any_name(
        searcher: Any, key: str, tries: list[tuple[str, bool]], named_query: Callable[[str, bool], Any]
    ) -> bool:
        """Whether some note may have one of the names: most queries name no note, and the term dictionary
        tells, before one search a way. It counts deleted notes too, which only sends a query on to the
        searches, which find nothing. A Tantivy without `terms_with_prefix` is asked by one search over every
        way of naming."""
        if hasattr(searcher, "terms_with_prefix"):
            return any(
                searcher.doc_freq("names", f"{_NAME_CODES[kind]}:{key}")
                if exact
                else searcher.terms_with_prefix("names", f"{_NAME_CODES[kind]}:{key} ", limit=1)
                for kind, exact in tries
            )
        anyway = tantivy.Query.boolean_query([(tantivy.Occur.Should, named_query(k, e)) for k, e in tries])
        return bool(int(searcher.search(anyway, 1, count=True).count))

    def hit_for(self, path: str) -> tuple[Hit, HitList] | None:
        """The stored document of one note (score 0), with a HitList able to cut its snippets."""
        self.ensure_sound()
        reader = self._reader
        res = reader.searcher.search(tantivy.Query.term_query(self.schema, "path", path), 1)
        if not res.hits:
            return None
        found = HitList(list(res.hits), 1, dict.fromkeys(WALL_NAMES, 0), reader.searcher, None, stored=reader.stored)
        hit = found.load(0)
        return Hit(hit.path, 0.0, hit.facts, hit.doc, hit.addr), found

    def near_spelling(self, term: str, paths: Sequence[str]) -> bool:
        """Whether one of the notes at `paths` holds a term one edit (an insertion, deletion, substitution or
        swap of neighbours) from `term`, an analysed term: what a misspelt query word reads as."""
        if not paths:
            return False
        self.ensure_sound()
        fuzzy = tantivy.Query.fuzzy_term_query
        near = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, fuzzy(self.schema, f, term, 1, True)) for f in SEARCH_FIELDS]
        )
        scope = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "path", p)) for p in paths]
        )
        return bool(self._reader.searcher.search(self._must(near, scope), 1).hits)

    def field_scores(self, words: Sequence[str], path: str, boosts: dict[str, float] | None = None) -> dict[str, float]:
        """BM25 of the words (any of them) in each field of one note, with the field boosts: for --explain."""
        out: dict[str, float] = {}
        self.ensure_sound()
        searcher = self._reader.searcher
        path_q = tantivy.Query.term_query(self.schema, "path", path)
        for field_name in SEARCH_FIELDS:
            quoted = quote_terms(words)
            if not quoted:
                break
            try:
                q = self._index.parse_query(
                    " ".join(quoted), [field_name], field_boosts={field_name: (boosts or FIELD_BOOSTS)[field_name]}
                )
                res = searcher.search(self._must(q, path_q), 1)
            except ValueError:
                continue
            out[field_name] = round(float(res.hits[0][0]), 4) if res.hits else 0.0
        return out

    @staticmethod
    def _must(*queries: Any) -> Any:
        if len(queries) == 1:
            return queries[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])
