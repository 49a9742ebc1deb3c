"""Long-term memory: text embeddings and a vector index, each a small port with AWS and local adapters."""

from stepwise.memory.embedder import (
    BedrockTitanEmbedder,
    Embedder,
    EmbeddingError,
    EmbeddingTransientError,
    LocalHashEmbedder,
)
from stepwise.memory.vector_index import (
    InMemoryVectorIndex,
    MetadataValue,
    S3VectorsIndex,
    VectorIndex,
    VectorIndexError,
    VectorIndexTransientError,
    VectorMatch,
    VectorRecord,
)

__all__ = [
    "BedrockTitanEmbedder",
    "Embedder",
    "EmbeddingError",
    "EmbeddingTransientError",
    "InMemoryVectorIndex",
    "LocalHashEmbedder",
    "MetadataValue",
    "S3VectorsIndex",
    "VectorIndex",
    "VectorIndexError",
    "VectorIndexTransientError",
    "VectorMatch",
    "VectorRecord",
]
