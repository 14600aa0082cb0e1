"""Writing the index: one writer per index, adds and deletes by path committed together, a build's plain notes
through the faster plain analyzer."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import tantivy

from agentmd.engine.errors import IndexBusy
from agentmd.engine.index.fulltext.analyzer import plain_analyzer, plain_doc, text_analyzer
from agentmd.engine.index.fulltext.core import IndexCore
from agentmd.engine.index.fulltext.schema import ANALYZER, NO_WALL, WRITER_HEAP, IndexDoc, encoded


def commit_alongside(writer: Any, alongside: Callable[[], None] | None) -> None:
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


class IndexWriting(IndexCore):
    """Adding, replacing and deleting notes' documents."""

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
                    self._write_index.register_tokenizer(ANALYZER, text_analyzer())
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
                self._write_index.register_tokenizer(ANALYZER, plain_analyzer())
                plain = True
            for doc in upserts:
                if plain and (doc.path in held or not plain_doc(doc)):
                    later.append(doc)
                    held.add(doc.path)
                    continue
                self._add(writer, doc, new, added)
            if plain:
                if added and later:
                    writer.commit()
                self._write_index.register_tokenizer(ANALYZER, text_analyzer())
                plain = False
                for doc in later:
                    self._add(writer, doc, new, added)
            commit_alongside(writer, alongside)
        except BaseException:
            with contextlib.suppress(ValueError):
                writer.rollback()
            raise
        finally:
            if plain:
                self._write_index.register_tokenizer(ANALYZER, text_analyzer())
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
