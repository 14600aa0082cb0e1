"""The daemon's dense arm: one warm model and the vector store, kept current in the background.

A thread of its own loads the model once (so `/health` and the first pass never wait on it), opens the
vector store in the index's cache folder (both once the daemon's start-up pass has run, when the daemon gives
it that gate: at 100,000 notes loading the store is seconds of work holding the interpreter, which searches
answered from the index and the pass itself would wait behind; hybrid searches answer lexically meanwhile, and
say why) and, each time the indexer finishes a pass, brings the store's
note list in line with the catalog (deleted notes lose their vectors; an edited note re-queues only the
chunks whose text changed, since the store keys vectors by text hash and model id) and embeds the queue
in slices of one model batch, pausing between slices. A search embeds its query beside a running slice (the
model takes calls from several threads), so it never waits for one to finish. The store is
saved every few slices (never spending more than a twentieth of the time on saves, which grow with the
vault), when the queue drains and at shutdown. A save that fails (a full disk, a cache folder that cannot be
written) does not stop the embedding: the vectors stay in memory, searches use them, status turns yellow
with the reason, and the save is tried again every RETRY seconds.

The queue is taken in `embedding_order`: the most-used notes first (the usage counters of
engine/index/usage.py), then the newest. On a CPU a 100,000-note vault takes hours to cover; meanwhile a
hybrid search fuses the vectors made so far with the lexical list, and a note without vectors yet is
still found by its words (engine/search/hybrid.py).

When the model cannot load (switched off, a package or file missing, a hash that differs), the daemon
searches lexical-only and remembers why; status and every hybrid answer show the reason. An embeddings
endpoint (engine/index/endpoint_embedder.py) that does not answer is asked again every RETRY seconds, at
load and while embedding ("waiting" in status, with the reason); searches meanwhile answer lexically.
Anything else that breaks the thread stops the embedding ("stopped", with the reason and a yellow status);
searches go on with the vectors made so far.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from agentmd.engine.index.catalog import Catalog
from agentmd.engine.index.embedder import EmbedderUnavailable
from agentmd.engine.memory import Keeper
from agentmd.engine.search.arm import kept_local, load_embedder
from agentmd.engine.settings import Settings
from agentmd.vault_schema import scripts

if TYPE_CHECKING:
    from agentmd.rules import Contract

log = logging.getLogger("agentmd.dense")

SLICE = 8  # chunks per slice: one model batch, about 0.4 s on 2 cores
SAVE_EVERY = 16  # slices between saves while the queue drains
PAUSE = 0.005  # seconds the thread yields between slices
# The background thread (and the model's worker threads it starts) run at this nice value, so a search, a
# capture or a prompt hook's process gets the CPU first while the vault is embedded (the hook's p95 at 10,000
# notes while embedding, bench/hook_bench.py, four runs each: p95 136 to 370 ms before, 112 to 269 ms after).
# A second model session kept for queries was measured too: no clearer gain, and 120 MiB more memory.
BACKGROUND_NICE = 10
RATE_WINDOW = 30.0  # seconds of embedding the measured rate averages over
RETRY = 30.0  # seconds before an embeddings endpoint that failed is asked again
SAVE_SHARE = 0.05  # at most this share of the embedding time goes to periodic saves
WAITING_FOR_PASS = "the dense arm loads once the start-up pass has run; searches answer by their words until then"


def lower_priority(nice: int = BACKGROUND_NICE) -> bool:
    """Lower the calling thread's scheduling priority by `nice` (Linux: a thread's nice value is its own, and the
    threads it starts take it). False elsewhere, or when the system refuses."""
    if not sys.platform.startswith("linux"):
        return False
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:
        return False
    return True


class Endpoint(TypedDict):
    """The external embeddings endpoint and what it may see."""

    url: str
    model: str | None
    sees: str
    withheld: list[str]  # folders whose notes stay on this machine


class Exposure(TypedDict, total=False):
    endpoint: Endpoint  # only with an external endpoint


class DenseSection(Exposure, total=False):
    """The `dense` section of status: the vectors' coverage and the time left, or why there are none."""

    state: str  # loading, embedding, complete, partial, waiting, stopped, none, lexical-only
    reason: str | None
    model: str
    chunks_done: int
    chunks_total: int
    notes_done: int
    notes_total: int
    rate_per_s: float | None
    eta_s: float | None
    load_seconds: float | None
    save_error: str | None


class DenseWorker:
    """Owns the daemon's embedder and vector store. `arm` is what searches use; `status` what /status shows."""

    def __init__(
        self,
        settings: Settings,
        *,
        slice_size: int = SLICE,
        save_every: int = SAVE_EVERY,
        retry: float = RETRY,
        clock: Callable[[], float] = time.monotonic,
        memory: Keeper | None = None,
    ) -> None:
        self.memory = memory  # gives the heap back once a backlog is embedded
        self.retry = retry
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
        self._saved_at = clock()
        self._save_seconds = 0.0  # how long the last save took
        self.save_error: str | None = None  # why the last save failed, until one succeeds
        self._save_retry_at = 0.0  # no save is tried before this clock reading after a failure
        self._contracts: Any = None  # the contract, for what an external endpoint may see (status)
        self._after: threading.Event | None = None  # set once the daemon's start-up pass has run (see `start`)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, after: threading.Event | None = None) -> None:
        """Start the thread; with `after`, it loads nothing until that event is set (the daemon's start-up pass
        has run) or the worker is stopped."""
        self._after = after
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
        lower_priority()  # before the model loads: its worker threads take this thread's priority
        after = self._after
        if after is not None and not after.is_set() and self.settings.dense:  # switched off: said at once below
            self.reason = WAITING_FOR_PASS
            while not after.wait(0.5):
                if self._stop.is_set():
                    return
            self.reason = None
        while True:
            started = self.clock()
            try:
                embedder = load_embedder(self.settings)
                break
            except EmbedderUnavailable as exc:
                self._lexical_only(str(exc))
            except Exception as exc:  # the model must never take the daemon down
                log.exception("the embedding model failed to load")
                self._lexical_only(f"the embedding model failed to load: {exc}")
            # a bundled model that cannot load will not load later; an endpoint may come up
            if not self.settings.embed_url or self._stop.wait(self.retry):
                return
        from agentmd.engine.index.vectors import VectorStore
        from agentmd.engine.search.hybrid import DenseArm

        self.load_seconds = round(self.clock() - started, 3)
        store = VectorStore(self.settings.cache_dir, embedder.model_id, embedder.dim)
        if store.reset_reason:
            log.info("%s", store.reset_reason)
        log.info("embedding model %s loaded in %.2fs", embedder.model_id, self.load_seconds)
        self.reason = None
        self._arm = DenseArm(store, embedder)
        # "complete" only once the store is in line with the catalog and saved: the first sync comes next
        self.state = "embedding"
        try:
            self._loop()
        except Exception as exc:
            log.exception("background embedding stopped; search goes on with the vectors made so far")
            self.reason = (
                f"background embedding stopped ({type(exc).__name__}: {exc}); searches use the vectors made so "
                "far, and restarting the daemon resumes it (the daemon's log has the details)"
            )
            self.state = "stopped"
        finally:
            if store.dirty:
                self._save(store)

    def _lexical_only(self, reason: str) -> None:
        self.reason = reason
        self.state = "lexical-only"
        log.warning("searching lexical-only: %s", reason)

    def _loop(self) -> None:
        store = self._arm.store
        embedder = self._arm.embedder
        slices = 0
        with self._cond:
            self._due = True  # the store in line with the catalog and the contract before anything is embedded
        while not self._stop.is_set():
            with self._cond:
                idle = not self._due and not store.has_pending()
                if idle and not (store.dirty and self.clock() >= self._save_retry_at):
                    self._cond.wait(5.0 if not store.dirty else max(0.05, self._save_retry_at - self.clock()))
                    continue
                due, self._due = self._due, False
            if idle:  # nothing to embed, but a save that failed earlier is due again
                self._save(store)
                self._settle(store)
                continue
            if due and not self._stop.is_set():
                self._sync(store)
            if self._stop.is_set():
                break
            began = self.clock()
            try:
                count = store.embed_pending(embedder, self.slice_size)
            except EmbedderUnavailable as exc:  # an endpoint that stopped answering: wait and try again
                if self.reason != str(exc):
                    log.warning("embedding paused, trying again in %g s: %s", self.retry, exc)
                self.reason, self.state = str(exc), "waiting"
                self._stop.wait(self.retry)
                continue
            self.reason = None
            if count:
                self._measure(count, self.clock() - began)
                slices += 1
            retry_passed = self.clock() >= self._save_retry_at
            if store.dirty and retry_passed and (not store.has_pending() or self._save_due(slices)):
                self._save(store)
                slices = 0
            self._settle(store)
            self._stop.wait(PAUSE)  # let searches and captures have the CPU between slices

    def _settle(self, store: Any) -> None:
        """The state after a slice or a save: complete once every chunk is embedded and the store saved."""
        cov = store.coverage()
        state = "complete" if cov.done >= cov.total and not store.dirty else "embedding"
        if state == "complete" and self.state != "complete":
            rate = f", {self._rate:.1f} chunks/s" if self._rate else ""
            log.info("vectors complete: %d chunks of %d notes%s", cov.total, cov.notes, rate)
            if self.memory is not None:
                self.memory.after_work()
        self.state = state

    def _sync(self, store: Any) -> None:
        from agentmd.engine.index.vector_refresh import refresh

        try:
            catalog = Catalog.reader(self.settings.catalog_path, timeout=5.0)
        except Exception as exc:
            log.warning("the catalog could not be read for embedding (%s); trying after the next pass", exc)
            return
        try:
            rows = catalog.hashes(catalog.paths())
            uses = catalog.usage_counts(rows)
        finally:
            catalog.close()
        current = {p: h for p, (h, _c, _s) in rows.items()}
        store.prioritise(embedding_order({p: c for p, (_h, c, _s) in rows.items()}, uses))
        keep, chunks = scripts.chunk_rule(self._arm.embedder)  # only what the model reads
        withhold, tag = kept_local(self.settings, self._arm.embedder)  # an endpoint never sees private notes
        rechunked, removed = refresh(
            store,
            self.settings.vault,
            current,
            keep=keep,
            chunks=chunks + tag,
            withhold=withhold,
            stop=self._stop.is_set,  # a shutdown is not held up by a re-chunking of the whole vault
        )
        if removed:
            self._save(store)
        if rechunked or removed:
            log.info("vectors: %d note(s) to (re)embed, %d removed", rechunked, removed)
        if store.has_pending():
            self.state = "embedding"

    def _save_due(self, slices: int) -> bool:
        """Every `save_every` slices, and never more often than SAVE_SHARE of the time goes to saving: a
        save writes the whole store, which takes seconds at 100,000 notes."""
        return slices >= self.save_every and self.clock() - self._saved_at >= self._save_seconds / SAVE_SHARE

    def _save(self, store: Any) -> bool:
        """Save the store; on an OS error keep the vectors in memory, say why and try again after RETRY s."""
        began = self.clock()
        try:
            store.save()
        except OSError as exc:
            why = (
                f"the vectors could not be saved to {store.path} ({exc}); they are kept in memory and searches use "
                f"them; the save is tried again every {self.retry:g} s (free disk space, or make the cache folder "
                "writable)"
            )
            if why != self.save_error:
                log.warning("%s", why)
            self.save_error = why
            self._save_retry_at = self.clock() + self.retry
            return False
        self._saved_at = self.clock()
        self._save_seconds = self._saved_at - began
        if self.save_error is not None:
            log.info("the vectors are saved again to %s", store.path)
        self.save_error = None
        self._save_retry_at = 0.0
        return True

    def _measure(self, count: int, seconds: float) -> None:
        self.embedded += count
        if seconds <= 0:
            return
        rate = count / seconds
        # an average over roughly the last RATE_WINDOW seconds of embedding
        weight = min(1.0, seconds / RATE_WINDOW)
        self._rate = rate if self._rate is None else (1 - weight) * self._rate + weight * rate

    # -- status ----------------------------------------------------------------------------------

    def status(self) -> DenseSection:
        """The `dense` section of /status: coverage and time left, or lexical-only with the reason."""
        if self._arm is None:
            return {"state": self.state, "reason": self.unavailable(), **self._exposure()}
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
            "reason": self.reason,  # why embedding is paused ("waiting") or stopped ("stopped"), else None
            "save_error": self.save_error,  # why the vectors on disk lag the ones in memory, else None
            **self._exposure(),
        }

    def _exposure(self) -> Exposure:
        if not self.settings.embed_url:
            return {}
        if self._contracts is None:
            from agentmd.rules import ContractCache

            self._contracts = ContractCache(self.settings.vault, self.settings.contract_path)
        return endpoint_exposure(self.settings, self._contracts.get().contract)


def endpoint_exposure(settings: Settings, contract: Contract | None = None) -> Exposure:
    """`{"endpoint": {...}}` naming the external embeddings endpoint and what it may see (every chunk of every
    note but those kept on this machine, and every hybrid search's query); {} without an endpoint. `contract`
    is the one in effect (read from the vault when not given)."""
    if not settings.embed_url:
        return {}
    if contract is None:
        from agentmd.rules import load_contract

        contract = load_contract(settings.vault, settings.contract_path).contract
    return {
        "endpoint": {
            "url": settings.embed_url,
            "model": settings.embed_model,
            "sees": "the text of every note's chunks but the withheld folders', and the query of every hybrid search",
            "withheld": contract.kept_local_areas(),
        }
    }


def embedding_order(captured: Mapping[str, str], uses: Mapping[str, tuple[int, int]]) -> list[str]:
    """The order the background embedding takes the notes in: the most-used first (injections plus recalls),
    then the newest by captured date, then by path. At 100,000 notes full coverage takes hours on a CPU, so
    the notes an agent is most likely to be shown get their vectors first."""
    return sorted(captured, key=lambda p: (-sum(uses.get(p, (0, 0))), not captured[p], _negated(captured[p]), p))


def _negated(stamp: str) -> tuple[int, ...]:
    """A captured stamp (`YYYY-MM-DD`, maybe with a time) as a key that sorts the newest first."""
    return tuple(-ord(ch) for ch in stamp)
