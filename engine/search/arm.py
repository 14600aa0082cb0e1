"""Opening the dense arm from the settings: the embedder and the vector store on disk.

The daemon loads the model once and keeps it warm; `agentmd reindex` loads it to embed in the foreground;
a process without a daemon (a one-shot `agentmd search`, the stdio MCP server's local backend) opens the
arm only when vectors already exist on disk, so a vault never embedded costs no model load. The prompt
hook never comes here: it searches lexically when no daemon runs.

Every way the arm can be missing has a plain reason (switched off, model not loadable, no vectors yet),
which a hybrid search shows in its `note`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentmd.engine.index.embedder import MODEL_ID, THREADS, EmbedderUnavailable
from agentmd.engine.index.vector_types import TextEmbedder
from agentmd.engine.index.vectors import FILE_NAME
from agentmd.engine.settings import Settings
from agentmd.vault_schema import scripts

if TYPE_CHECKING:
    from agentmd.engine.index.embedder import Embedder
    from agentmd.engine.index.endpoint_embedder import EndpointEmbedder
    from agentmd.engine.search.hybrid import DenseArm

NO_VECTORS = "no vectors on disk yet (`agentmd reindex` or `agentmd serve` embeds the notes)"
SWITCHED_OFF = "the dense arm is switched off (AGENTMD_DENSE=0 or `dense = false` in the config file)"


def threads() -> int:
    """onnxruntime's intra-op threads: 2 at most, fewer on a one-core machine."""
    return max(1, min(THREADS, os.cpu_count() or 1))


def model_id_for(settings: Settings) -> str:
    """The model id the settings' vectors are stored under: the endpoint's model, else the bundled one."""
    if settings.embed_url and settings.embed_model:
        from agentmd.engine.index.endpoint_embedder import endpoint_model_id

        return endpoint_model_id(settings.embed_model)
    return MODEL_ID


def load_embedder(settings: Settings) -> Embedder | EndpointEmbedder:
    """The embedding model for these settings; raises `EmbedderUnavailable` with the reason it cannot run
    (switched off, a package missing, a model file missing or with another hash, an embeddings endpoint that
    does not answer)."""
    if not settings.dense:
        raise EmbedderUnavailable(SWITCHED_OFF)
    if settings.embed_url and settings.embed_model:
        from agentmd.engine.index.endpoint_embedder import EndpointEmbedder

        return EndpointEmbedder(settings.embed_url, settings.embed_model, settings.embed_api_key)
    from agentmd.engine.index.embedder import Embedder, shared_embedder

    if settings.model_file is not None:
        return Embedder(model_file=settings.model_file, threads=threads())
    return shared_embedder()


def kept_local(settings: Settings, embedder: TextEmbedder) -> tuple[Callable[[str], bool] | None, str]:
    """Which notes stay on this machine when the embedder is an external endpoint: the contract's private
    spaces and recall-exempt areas (`Contract.kept_local`), with a tag naming that rule for the store's chunk
    rule (a change of the areas cuts every note again, dropping the vectors of notes now kept local). Such notes
    are searched by their words only. (None, "") for the bundled model: nothing leaves the machine."""
    from agentmd.engine.index.endpoint_embedder import MODEL_PREFIX

    if not str(getattr(embedder, "model_id", "")).startswith(MODEL_PREFIX):
        return None, ""
    from agentmd.rules import load_contract

    contract = load_contract(settings.vault, settings.contract_path).contract
    return contract.kept_local, "|kept-local:" + ",".join(contract.kept_local_areas())


def vectors_path(cache_dir: Path) -> Path:
    return cache_dir / FILE_NAME


def arm_from_disk(settings: Settings) -> tuple[DenseArm | None, str | None]:
    """(the arm, None) when vectors exist on disk and the model loads; else (None, why not). Never embeds."""
    if not settings.dense:
        return None, SWITCHED_OFF
    if not vectors_path(settings.cache_dir).is_file():
        return None, NO_VECTORS
    from agentmd.engine.index.vectors import VectorStore

    store = VectorStore(settings.cache_dir, model_id_for(settings), dim=None)
    if store.coverage().done == 0:
        return None, store.reset_reason or "no note has vectors yet"
    try:
        embedder = load_embedder(settings)
    except EmbedderUnavailable as exc:
        return None, str(exc)
    if embedder.dim != store.dim:
        return None, f"the vectors on disk have {store.dim} dimensions, the model makes {embedder.dim}; reindex"
    from agentmd.engine.search.hybrid import DenseArm

    return DenseArm(store, embedder), None


@dataclass(frozen=True, slots=True)
class EmbedProgress:
    """Where a foreground embedding stands: chunks and notes done of their totals, the measured rate."""

    chunks_done: int
    chunks_total: int
    notes_done: int
    notes_total: int
    embedded: int  # chunks embedded by this run
    seconds: float

    @property
    def rate(self) -> float | None:
        return self.embedded / self.seconds if self.embedded and self.seconds > 0 else None

    @property
    def seconds_left(self) -> float | None:
        rate = self.rate
        left = self.chunks_total - self.chunks_done
        return 0.0 if not left else (left / rate if rate else None)


FOREGROUND_SLICE = 32  # chunks per slice in the foreground (four model batches)
FOREGROUND_SAVE_EVERY = 8  # slices between saves, so an interrupted run keeps most of its work


def embed_foreground(
    settings: Settings,
    current: Mapping[str, str],
    embedder: TextEmbedder,
    progress: Callable[[EmbedProgress], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> EmbedProgress:
    """Bring the vector store in line with `current` (path -> the catalog's content hash) and embed every
    queued chunk now, reporting after each slice. The store is saved every few slices and at the end, also
    when interrupted."""
    from agentmd.engine.index.vector_refresh import refresh
    from agentmd.engine.index.vectors import VectorStore

    store = VectorStore(settings.cache_dir, embedder.model_id, embedder.dim)
    keep, chunks = scripts.chunk_rule(embedder)  # only what the model reads
    withhold, tag = kept_local(settings, embedder)
    refresh(store, settings.vault, current, keep=keep, chunks=chunks + tag, withhold=withhold)
    start = clock()
    embedded = 0
    slices = 0

    def state() -> EmbedProgress:
        cov = store.coverage()
        return EmbedProgress(cov.done, cov.total, cov.notes_done, cov.notes, embedded, clock() - start)

    try:
        if progress:
            progress(state())
        while True:
            count = store.embed_pending(embedder, FOREGROUND_SLICE)
            if not count:
                break
            embedded += count
            slices += 1
            if slices % FOREGROUND_SAVE_EVERY == 0:
                store.save()
            if progress:
                progress(state())
    finally:
        if store.dirty:
            store.save()
    return state()
