"""What the vector store and the dense arm pass between them: the embedder a store is filled by, a note's
nearest chunk, a query's scan of every chunk, and how far the embedding has got (engine/index/vectors.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


class TextEmbedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class ChunkHit:
    path: str
    cosine: float
    heading: str  # the best chunk's heading path ("" for the opening text)
    ordinal: int


@dataclass(frozen=True, slots=True)
class Scan:
    """A query's cosine to every chunk row as the store stood at `generation`, and the notes nearest to it.
    A search takes it on the thread that embedded the query, while its lexical arm runs, and reads the
    cosines of that arm's notes from it afterwards (`best_cosines`)."""

    scores: np.ndarray
    generation: int
    hits: list[ChunkHit]


@dataclass(frozen=True, slots=True)
class Coverage:
    done: int
    total: int
    notes: int
    notes_done: int = 0  # notes whose every chunk has its vector

    @property
    def share(self) -> float:
        return self.done / self.total if self.total else 1.0
