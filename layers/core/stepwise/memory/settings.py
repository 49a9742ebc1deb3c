"""The memory index's own settings (docs/memory.md), read only where the index is built: the embedding model,
its dimensions, the index's name, and how many messages one summarizer run takes."""

from typing import Annotated

from annotated_types import Interval
from pydantic import field_validator

from stepwise.config import EnvSettings


class MemoryIndexSettings(EnvSettings):
    """EMBEDDING_MODEL_ID, EMBEDDING_DIMENSIONS, VECTOR_INDEX_NAME and SUMMARY_BATCH_LIMIT."""

    vector_index_name: str = "memories"
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    embedding_dimensions: int = 256
    summary_batch_limit: Annotated[int, Interval(ge=1, le=2000)] = 200

    @field_validator("embedding_dimensions")
    @classmethod
    def _titan_dimensions(cls, value: int) -> int:
        if value not in (256, 512, 1024):
            raise ValueError("EMBEDDING_DIMENSIONS must be 256, 512 or 1024 (Titan Text Embeddings V2)")
        return value
