"""A deterministic, offline Embedder for the local emulation and the tests (no network, no model files)."""

from __future__ import annotations

import hashlib
import itertools
import math
import re

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
