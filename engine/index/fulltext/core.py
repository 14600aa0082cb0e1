"""The index's lifecycle and the parts every use of it shares: opening (created, upgraded, or set aside and
rebuilt), reloading, closing, the damage checks run before every read, the parsed queries of words, and one
note's stored document."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Container, Iterator, Sequence
from pathlib import Path
from typing import Any

import tantivy

from agentmd.engine.errors import IndexDamaged
from agentmd.engine.index.fulltext.analyzer import quote_terms, text_analyzer
from agentmd.engine.index.fulltext.hits import Hit, HitList, Reader
from agentmd.engine.index.fulltext.schema import (
    ANALYZER,
    FIELD_BOOSTS,
    MARKER,
    QUESTION_FIELD_BOOSTS,
    SCHEMA_VERSION,
    SEARCH_FIELDS,
    WALL_NAMES,
    WRITER_BUSY_WAIT,
    index_schema,
    is_panic,
)
from agentmd.engine.index.integrity import CHECK_INTERVAL, IndexGuard

log = logging.getLogger("agentmd.index")

DOC_FREQ_MEMO_MAX = 50_000
VERIFIED_SUFFIX = ".verified.json"  # beside the index folder: the keys of its files last verified (integrity.py)
_QUERY_MEMO_MAX = 4_096


@contextlib.contextmanager
def _opening(directory: Path) -> Iterator[None]:
    """Hold the index folder's opening lock: two processes finding no index (captures of a new vault at once)
    each created one in the same folder, and each took the other's half-made folder for damage and set it aside.
    An existing index opens in milliseconds, so the wait is short."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory.with_name(f"{directory.name}.opening"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class IndexCore:
    """A Tantivy index in `directory`, created, upgraded or set aside and rebuilt as needed: what writing,
    analysing and searching it (the mixins `SearchIndex` is made of) share."""

    def __init__(self, directory: Path, *, busy_wait: float = WRITER_BUSY_WAIT) -> None:
        self.directory = directory
        self.busy_wait = busy_wait  # how long a writer waits for the index's write lock before IndexBusy
        self.schema = index_schema()
        self.created = False  # True when this open started an empty index
        self.set_aside: Path | None = None
        self._writer: Any = None
        self._write_index: Any = None  # the index as the writer opens it: its own analyzers (see `apply`)
        self._writer_threads = 0  # 0: Tantivy's choice (one per core); see `small_commits`
        self._analyzer = text_analyzer()
        self._reloads = 0  # bumped at every reload, so caches of the old state are dropped
        self._df_cache: dict[str, int] = {}
        # the best score of one word's query among the notes outside the walls, or everywhere (see `_word_best`)
        self._best_cache: dict[tuple[str, tuple[tuple[str, float], ...], bool], float] = {}
        self._terms_cache: dict[str, tuple[Container[str], frozenset[str]]] = {}
        self._query_memo: dict[tuple[tuple[str, ...], bool, tuple[tuple[str, float], ...]], Any] = {}
        self._word_memo: dict[str, object] = {}  # one word's parsed query, any boosts (see `_word_query`)
        self._state_key: tuple[int, int, int] | None = None
        # damage seen from outside the memory map (engine/index/integrity.py)
        self.guard = self._new_guard()
        with _opening(directory):
            self._index = self._open()
        self._reader = Reader(self._index.searcher())
        self.generation: str = self._read_marker()["generation"]
        self.guard.refresh()

    # -- opening ---------------------------------------------------------------------------------

    def _new_guard(self) -> IndexGuard:
        record = self.directory.with_name(f"{self.directory.name}{VERIFIED_SUFFIX}")
        return IndexGuard(self.directory, min_interval=CHECK_INTERVAL, record=record)

    def _open(self) -> Any:
        d = self.directory
        if d.exists() and any(d.iterdir()):
            # the guard that serves this index from now on checks it before it is mapped; a guard that saw
            # damage is replaced with a fresh one for the folder rebuilt in its place
            problem = self._check_existing() or self.guard.refresh()
            if problem is None:
                try:
                    index = tantivy.Index(self.schema, path=str(d), reuse=True)
                    index.register_tokenizer(ANALYZER, text_analyzer())
                    index.config_reader(reload_policy="manual")  # see `_reload`
                    self._health_check(index)
                    return index
                except BaseException as exc:
                    if not isinstance(exc, (ValueError, OSError, RuntimeError)) and not is_panic(exc):
                        raise
                    problem = f"index could not be opened ({exc})"
            self._set_aside(problem)
            self.guard = self._new_guard()
        d.mkdir(parents=True, exist_ok=True)
        index = tantivy.Index(self.schema, path=str(d), reuse=False)
        index.register_tokenizer(ANALYZER, text_analyzer())
        index.config_reader(reload_policy="manual")
        (d / MARKER).write_text(
            json.dumps({"schema_version": SCHEMA_VERSION, "generation": uuid.uuid4().hex}), encoding="utf-8"
        )
        self.created = True
        return index

    def _check_existing(self) -> str | None:
        try:
            marker = json.loads((self.directory / MARKER).read_text(encoding="utf-8"))
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
        data: dict[str, Any] = json.loads((self.directory / MARKER).read_text(encoding="utf-8"))
        return data

    # -- reloading and closing -------------------------------------------------------------------

    def _reload(self) -> None:
        """Make the last commit visible, after checking the files the reader is about to open. The reader
        reloads only here (policy "manual"): Tantivy's own reload thread would reopen segments, through
        mappings it keeps, whenever a merge rewrote meta.json, and no check could run before it."""
        self.ensure_sound()
        self._index.reload()
        self._reader = Reader(self._index.searcher())
        self._reloads += 1
        self.guard.refresh()

    def close(self, *, remember: bool = True) -> None:
        """Flush and release the writer; with `remember`, record the files verified for the next open (not for
        an index being replaced after damage: its folder is set aside or gone)."""
        if remember:
            self.guard.remember()  # the next open checksums only the files that changed since (integrity.py)
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
        problem = f"Tantivy panicked: {exc}" if is_panic(exc) else self.guard.verify_all()
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

    @staticmethod
    def _must(*queries: Any) -> Any:
        if len(queries) == 1:
            return queries[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in queries])
