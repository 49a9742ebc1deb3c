"""LocalHashEmbedder: deterministic, offline, and similar texts land close together."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import stepwise
from stepwise.memory.embedder import Embedder
from stepwise_local.in_memory.embedder import LocalHashEmbedder


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_is_an_embedder_with_256_dimensions_by_default() -> None:
    embedder = LocalHashEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.dimensions == 256
    assert len(embedder.embed("hello world")) == 256


@pytest.mark.parametrize("dimensions", [8, 64, 1024])
def test_vectors_have_the_configured_dimensions_and_unit_length(dimensions: int) -> None:
    vector = LocalHashEmbedder(dimensions).embed("my sister Anna lives in Lisbon")
    assert len(vector) == dimensions
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-9)


def test_is_deterministic_across_instances() -> None:
    text = "Remember: the dentist appointment is on Tuesday"
    assert LocalHashEmbedder().embed(text) == LocalHashEmbedder().embed(text)


def test_is_stable_across_processes_with_different_hash_seeds() -> None:
    text = "stable across processes"
    core = Path(stepwise.__file__).resolve().parent.parent
    script = (
        "import json, sys; from stepwise_local.in_memory.embedder import LocalHashEmbedder; "
        "print(json.dumps(LocalHashEmbedder().embed(sys.argv[1])))"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": os.pathsep.join([str(core), str(core.parent.parent)]),
        }
        result = subprocess.run(
            [sys.executable, "-c", script, text], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1] == LocalHashEmbedder().embed(text)


def test_texts_sharing_content_words_are_clearly_closer_than_unrelated_ones() -> None:
    embedder = LocalHashEmbedder()
    fact = embedder.embed("my sister Anna lives in Lisbon")
    related = cosine(fact, embedder.embed("where does Anna live?"))
    unrelated = cosine(fact, embedder.embed("buy milk and eggs"))
    assert related > 0.5
    assert related > unrelated + 0.3


def test_ranks_the_relevant_memory_first() -> None:
    embedder = LocalHashEmbedder()
    memories = [
        "buy milk and eggs",
        "my sister Anna lives in Lisbon",
        "the dentist appointment is on Tuesday",
        "I prefer tea over coffee",
    ]
    query = embedder.embed("where does Anna live?")
    ranked = sorted(memories, key=lambda text: cosine(query, embedder.embed(text)), reverse=True)
    assert ranked[0] == "my sister Anna lives in Lisbon"


def test_ignores_case_punctuation_stop_words_and_plural_s() -> None:
    embedder = LocalHashEmbedder()
    assert embedder.embed("Cats, dogs!") == embedder.embed("the cat and the dog")
    assert embedder.embed("Anna LIVES in Lisbon.") == embedder.embed("anna lives lisbon")


def test_word_order_matters_a_little_through_bigrams() -> None:
    embedder = LocalHashEmbedder()
    a = embedder.embed("new york pizza")
    b = embedder.embed("pizza york new")
    assert a != b
    assert cosine(a, b) > 0.5


@pytest.mark.parametrize("text", ["where is it?", "?!", "a"])
def test_texts_without_content_words_still_get_a_unit_vector(text: str) -> None:
    vector = LocalHashEmbedder().embed(text)
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-9)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_is_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        LocalHashEmbedder().embed(text)


def test_dimensions_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LocalHashEmbedder(0)
