"""The daemon's dense arm: one warm model and the vector store, kept current in the background.

A thread of its own loads the model once (so `/health` and the first pass never wait on it), opens the
vector store in the index's cache folder and, each time the indexer finishes a pass, brings the store's
note list in line with the catalog (deleted notes lose their vectors; an edited note re-queues only the
chunks whose text changed, since the store keys vectors by text hash and model id) and embeds the queue
in slices of one model batch, pausing between slices. A search embeds its query beside a running slice (the
model takes calls from several threads), so it never waits for one to finish. The store is
saved every few slices, when the queue drains and at shutdown.

When the model cannot load (switched off, a package or file missing, a hash that differs), the daemon
searches lexical-only and remembers why; status and every hybrid answer show the reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.embedder import EmbedderUnavailable
from agentmd.engine.search.arm import load_embedder
from agentmd.engine.settings import Settings

log = logging.getLogger("agentmd.dense")

SLICE = 8  # chunks per slice: one model batch, about 0.4 s on 2 cores
SAVE_EVERY = 16  # slices between saves while the queue drains
PAUSE = 0.005  # seconds the thread yields between slices
RATE_WINDOW = 30.0  # seconds of embedding the measured rate averages over


class DenseWorker:
    """Owns the daemon's embedder and vector store. `arm` is what searches use; `status` what /status shows."""

    def __init__(
        self,
        settings: Settings,
        *,
        slice_size: int = SLICE,
        save_every: int = SAVE_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.slice_size = slice_size
        self.save_every = save_every
        self.clock = clock
        self.reason: str | None = None  # why the daemon is lexical-only, once known
        self.state = "loading"  # loading -> embedding / complete, or lexical-only
        self.load_seconds: float | None = None
        self._arm: Any = None  # a hybrid.DenseArm once the model is loaded
        self._cond = threading.Condition()
        self._due = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rate: float | None = None  # chunks per second, measured
        self.embedded = 0  # chunks embedded since start

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentmd-embedder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the slice in flight and save what was embedded."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def wake(self) -> None:
        """The catalog changed (a reconcile pass finished): bring the store in line and embed what is new."""
        with self._cond:
            self._due = True
            self._cond.notify_all()

    @property
    def arm(self) -> Any:
        """The `hybrid.DenseArm` searches use, or None while the model loads or when it cannot."""
        return self._arm

    def unavailable(self) -> str | None:
        """Why a hybrid search has no arm right now, or None when it has one."""
        if self._arm is not None:
            return None
        return self.reason or "the embedding model is still loading"

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        started = self.clock()
        try:
            embedder = load_embedder(self.settings)
        except EmbedderUnavailable as exc:
            self._lexical_only(str(exc))
            return
        except Exception as exc:  # the model must never take the daemon down
            log.exception("the embedding model failed to load")
            self._lexical_only(f"the embedding model failed to load: {exc}")
            return
        from agentmd.engine.index.vectors import VectorStore
        from agentmd.engine.search.hybrid import DenseArm

        self.load_seconds = round(self.clock() - started, 3)
        store = VectorStore(self.settings.cache_dir, embedder.model_id, embedder.dim)
        if store.reset_reason:
            log.info("%s", store.reset_reason)
        log.info("embedding model %s loaded in %.2fs", embedder.model_id, self.load_seconds)
        self._arm = DenseArm(store, embedder)
        self.state = "embedding" if store.coverage().done < store.coverage().total else "complete"
        try:
            self._loop()
        except Exception:
            log.exception("background embedding stopped; search goes on with the vectors made so far")
            self.state = "stopped"
        finally:
            if store.dirty:
                store.save()

    def _lexical_only(self, reason: str) -> None:
        self.reason = reason
        self.state = "lexical-only"
        log.warning("searching lexical-only: %s", reason)

    def _loop(self) -> None:
        store = self._arm.store
        embedder = self._arm.embedder
        slices = 0
        while not self._stop.is_set():
            with self._cond:
                if not self._due and not store.pending(1):
                    self._cond.wait(5.0)
                    continue
                due, self._due = self._due, False
            if due:
                self._sync(store)
            if self._stop.is_set():
                break
            began = self.clock()
            count = store.embed_pending(embedder, self.slice_size)
            if count:
                self._measure(count, self.clock() - began)
                slices += 1
            if store.dirty and (slices >= self.save_every or not store.pending(1)):
                store.save()
                slices = 0
            cov = store.coverage()
            state = "complete" if cov.done >= cov.total else "embedding"
            if state == "complete" and self.state != "complete":
                rate = f", {self._rate:.1f} chunks/s" if self._rate else ""
                log.info("vectors complete: %d chunks of %d notes%s", cov.total, cov.notes, rate)
            self.state = state
            self._stop.wait(PAUSE)  # let searches and captures have the CPU between slices

    def _sync(self, store: Any) -> None:
        from agentmd.engine.index.vectors import refresh

        try:
            catalog = Catalog.reader(self.settings.catalog_path, timeout=5.0)
        except Exception as exc:
            log.warning("the catalog could not be read for embedding (%s); trying after the next pass", exc)
            return
        try:
            current = {p: h for p, (h, _c, _s) in catalog.hashes(catalog.paths()).items()}
        finally:
            catalog.close()
        rechunked, removed = refresh(store, self.settings.vault, current)
        if removed:
            store.save()
        if rechunked or removed:
            log.info("vectors: %d note(s) to (re)embed, %d removed", rechunked, removed)

    def _measure(self, count: int, seconds: float) -> None:
        self.embedded += count
        if seconds <= 0:
            return
        rate = count / seconds
        # an average over roughly the last RATE_WINDOW seconds of embedding
        weight = min(1.0, seconds / RATE_WINDOW)
        self._rate = rate if self._rate is None else (1 - weight) * self._rate + weight * rate

    # -- status ----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The `dense` section of /status: coverage and time left, or lexical-only with the reason."""
        if self._arm is None:
            return {"state": self.state, "reason": self.unavailable()}
        cov = self._arm.store.coverage()
        left = cov.total - cov.done
        eta = round(left / self._rate, 1) if self._rate and left else (0.0 if not left else None)
        return {
            "state": self.state,
            "model": self._arm.embedder.model_id,
            "chunks_done": cov.done,
            "chunks_total": cov.total,
            "notes_done": cov.notes_done,
            "notes_total": cov.notes,
            "rate_per_s": None if self._rate is None else round(self._rate, 1),
            "eta_s": eta,
            "load_seconds": self.load_seconds,
            "reason": None,
        }
