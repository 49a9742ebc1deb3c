"""Text embeddings behind one small port: Titan Text Embeddings V2 on Bedrock (the local emulation has
its own deterministic embedder, `stepwise_local.in_memory.embedder`)."""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ReadTimeoutError,
    ResponseStreamingError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

TITAN_V2_MODEL_ID = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMENSIONS = (256, 512, 1024)
TITAN_V2_MAX_CHARACTERS = 50_000

TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "InternalServerException",
    }
)
_TRANSIENT_BOTOCORE = (BotoConnectionError, ReadTimeoutError, ConnectionClosedError, ResponseStreamingError)


@runtime_checkable
class Embedder(Protocol):
    """Turns a text into a vector of `dimensions` floats."""

    @property
    def dimensions(self) -> int: ...

    def embed(self, text: str) -> list[float]: ...


class EmbeddingError(RuntimeError):
    """The text could not be embedded and retrying will not help (permissions, validation, unknown model)."""


class EmbeddingTransientError(EmbeddingError):
    """Worth retrying: throttling, server errors, a model not ready yet, timeouts, connection failures."""


class BedrockTitanEmbedder:
    """Embedder on Amazon Titan Text Embeddings V2 through a boto3 `bedrock-runtime` client."""

    def __init__(self, client: Any, model_id: str = TITAN_V2_MODEL_ID, dimensions: int = 256) -> None:
        if dimensions not in TITAN_V2_DIMENSIONS:
            raise ValueError(f"Titan V2 dimensions must be one of {TITAN_V2_DIMENSIONS}, not {dimensions}")
        self._client = client
        self._model_id = model_id
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, text: str) -> list[float]:
        """The normalised embedding of `text` (cut to Titan's 50,000-character limit)."""
        if not text.strip():
            raise ValueError("cannot embed an empty text")
        body = json.dumps(
            {
                "inputText": text[:TITAN_V2_MAX_CHARACTERS],
                "dimensions": self._dimensions,
                "normalize": True,
            }
        )
        try:
            response = self._client.invoke_model(
                modelId=self._model_id, contentType="application/json", accept="application/json", body=body
            )
            raw = response["body"].read()
        except ClientError as error:
            raise _from_client_error(error) from error
        except _TRANSIENT_BOTOCORE as error:
            raise EmbeddingTransientError(f"Bedrock embedding failed: {error}") from error
        except BotoCoreError as error:
            raise EmbeddingError(f"Bedrock embedding failed: {error}") from error
        return self._parse(raw)

    def _parse(self, raw: bytes) -> list[float]:
        try:
            embedding = json.loads(raw)["embedding"]
            vector = [float(value) for value in embedding]
        except (ValueError, KeyError, TypeError) as error:
            raise EmbeddingError(f"unexpected Titan response: {error!r}") from error
        if len(vector) != self._dimensions:
            raise EmbeddingError(f"Titan returned {len(vector)} dimensions, expected {self._dimensions}")
        return vector


def _from_client_error(error: ClientError) -> EmbeddingError:
    code = str(error.response.get("Error", {}).get("Code", "Unknown"))
    message = str(error.response.get("Error", {}).get("Message", ""))
    status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    text = f"Bedrock embedding failed: {code}: {message}"
    if code in TRANSIENT_CODES or status == 429 or status >= 500:
        return EmbeddingTransientError(text)
    return EmbeddingError(text)
