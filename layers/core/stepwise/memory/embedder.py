"""Text embeddings behind one small port: Titan Text Embeddings V2 on Bedrock, and a local hashing one."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
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


_WORD = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset(
    {
        *("a", "an", "the", "and", "or", "but", "if", "of", "in", "on", "at", "to", "for", "from", "by"),
        *("with", "about", "as", "into", "is", "are", "was", "were", "be", "been", "am", "do", "does", "did"),
        *("i", "me", "my", "you", "your", "he", "him", "his", "she", "her", "it", "its", "we", "our", "they"),
        *("them", "their", "this", "that", "these", "those", "what", "where", "when", "who", "whom", "which"),
        *("why", "how", "there", "here", "not", "no", "so", "than", "then", "too", "very", "can", "will"),
        *("would", "should", "could", "has", "have", "had", "just"),
    }
)


def _stem(word: str) -> str:
    """A crude suffix strip: plural and third-person "s", "ies" -> "y"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """Lowercased word tokens without punctuation and stop words, crudely stemmed."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]


class LocalHashEmbedder:
    """A deterministic, offline embedder: signed feature hashing of words and word bigrams, L2-normalised.

    Texts that share content words get a clearly higher cosine similarity than unrelated texts; it knows
    nothing about synonyms. blake2b (not Python's salted `hash`) keeps vectors stable across processes.
    """

    BIGRAM_WEIGHT = 0.5

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be positive")
        self._dimensions = dimensions

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, text: str) -> list[float]:
        """The unit vector of `text`; never the zero vector (S3 Vectors rejects those for cosine)."""
        if not text.strip():
            raise ValueError("cannot embed an empty text")
        words = content_words(text) or [word.lower() for word in _WORD.findall(text)] or [text.strip()]
        vector = [0.0] * self._dimensions
        for word in words:
            self._add(vector, word, 1.0)
        for first, second in itertools.pairwise(words):
            self._add(vector, f"{first} {second}", self.BIGRAM_WEIGHT)
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:  # every feature cancelled out: fall back to the text as one feature
            self._add(vector, text.strip().lower(), 1.0)
            norm = math.sqrt(sum(value * value for value in vector))
        return [value / norm for value in vector]

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "big") % self._dimensions
        vector[index] += weight if digest[4] & 1 else -weight
