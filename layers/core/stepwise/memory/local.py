"""The local memory backend: a deterministic embedder and one in-memory index per process.

In the local emulation every function runs in one process, so they share this index the way deployed
functions share the S3 Vectors index.
"""

from __future__ import annotations

from stepwise.memory.embedder import LocalHashEmbedder
from stepwise.memory.vector_index import InMemoryVectorIndex

_index = InMemoryVectorIndex()


def local_index() -> InMemoryVectorIndex:
    """The process-wide index."""
    return _index


def local_embedder(dimensions: int) -> LocalHashEmbedder:
    """A deterministic embedder (no network, no model files)."""
    return LocalHashEmbedder(dimensions)


def reset_local_index() -> None:
    """Forget every local memory (a new local stack starts empty)."""
    global _index
    _index = InMemoryVectorIndex()
