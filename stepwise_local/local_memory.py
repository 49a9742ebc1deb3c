"""The local memory backend (`MEMORY_BACKEND=local`): a deterministic embedder and one in-memory index per
process. The emulation installs it into the runtime (`stepwise.runtime.install_memory_backend`) before each
handler runs; the shipped layer never imports this module.

In the local emulation every function runs in one process, so they share this index the way deployed
functions share the S3 Vectors index.
"""

from __future__ import annotations

from stepwise.memory.service import MemoryService
from stepwise.memory.settings import MemoryIndexSettings
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

_index = InMemoryVectorIndex()


def local_index() -> InMemoryVectorIndex:
    """The process-wide index."""
    return _index


def reset_local_index() -> None:
    """Forget every local memory (a new local stack starts empty)."""
    global _index
    _index = InMemoryVectorIndex()


def local_memory(settings: MemoryIndexSettings) -> MemoryService:
    """The `local` memory backend: the deterministic embedder on the process-wide index."""
    return MemoryService(LocalHashEmbedder(settings.embedding_dimensions), _index)
