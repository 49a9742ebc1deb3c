"""BedrockTitanEmbedder against bedrock-runtime's real API shapes, with botocore's Stubber."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from stepwise.memory.embedder import BedrockTitanEmbedder, Embedder, EmbeddingError, EmbeddingTransientError

MODEL_ID = "amazon.titan-embed-text-v2:0"


@pytest.fixture
def client() -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1")


def body(payload: dict[str, Any]) -> StreamingBody:
    data = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(data), len(data))


def expected_request(text: str, dimensions: int = 256) -> dict[str, Any]:
    return {
        "modelId": MODEL_ID,
        "contentType": "application/json",
        "accept": "application/json",
        "body": json.dumps({"inputText": text, "dimensions": dimensions, "normalize": True}),
    }


def add_embedding(stubber: Stubber, text: str, vector: list[float], dimensions: int = 256) -> None:
    stubber.add_response(
        "invoke_model",
        {"body": body({"embedding": vector, "inputTextTokenCount": 7}), "contentType": "application/json"},
        expected_params=expected_request(text, dimensions),
    )


def test_sends_the_titan_v2_request_and_parses_the_embedding(client: Any, stubber: Stubber) -> None:
    vector = [i / 256 for i in range(256)]
    add_embedding(stubber, "my sister Anna lives in Lisbon", vector)
    embedder = BedrockTitanEmbedder(client)
    assert isinstance(embedder, Embedder)
    assert embedder.dimensions == 256
    assert embedder.embed("my sister Anna lives in Lisbon") == vector


@pytest.mark.parametrize("dimensions", [512, 1024])
def test_other_supported_dimensions(client: Any, stubber: Stubber, dimensions: int) -> None:
    add_embedding(stubber, "hello", [0.5] * dimensions, dimensions)
    assert len(BedrockTitanEmbedder(client, dimensions=dimensions).embed("hello")) == dimensions


def test_custom_model_id_is_sent(client: Any, stubber: Stubber) -> None:
    model = "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0"
    stubber.add_response(
        "invoke_model",
        {"body": body({"embedding": [0.1] * 256}), "contentType": "application/json"},
        expected_params={**expected_request("hi"), "modelId": model},
    )
    assert len(BedrockTitanEmbedder(client, model_id=model).embed("hi")) == 256


def test_long_text_is_cut_to_titans_character_limit(client: Any, stubber: Stubber) -> None:
    text = "word " * 12_000  # 60,000 characters
    add_embedding(stubber, text[:50_000], [0.1] * 256)
    BedrockTitanEmbedder(client).embed(text)


@pytest.mark.parametrize("dimensions", [0, 128, 384, 1536])
def test_unsupported_dimensions_are_rejected(client: Any, dimensions: int) -> None:
    with pytest.raises(ValueError):
        BedrockTitanEmbedder(client, dimensions=dimensions)


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text_is_rejected_without_calling_bedrock(client: Any, stubber: Stubber, text: str) -> None:
    with pytest.raises(ValueError):
        BedrockTitanEmbedder(client).embed(text)


def test_an_embedding_of_the_wrong_length_is_an_error(client: Any, stubber: Stubber) -> None:
    add_embedding(stubber, "hello", [0.1] * 512)
    with pytest.raises(EmbeddingError, match="512"):
        BedrockTitanEmbedder(client).embed("hello")


def test_a_response_without_an_embedding_is_an_error(client: Any, stubber: Stubber) -> None:
    stubber.add_response(
        "invoke_model",
        {"body": body({"message": "nope"}), "contentType": "application/json"},
        expected_params=expected_request("hello"),
    )
    with pytest.raises(EmbeddingError) as caught:
        BedrockTitanEmbedder(client).embed("hello")
    assert not isinstance(caught.value, EmbeddingTransientError)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("ServiceUnavailableException", 503),
        ("ModelNotReadyException", 429),
        ("ModelTimeoutException", 408),
        ("InternalServerException", 500),
    ],
)
def test_transient_errors(client: Any, stubber: Stubber, code: str, status: int) -> None:
    stubber.add_client_error(
        "invoke_model", service_error_code=code, service_message="try later", http_status_code=status
    )
    with pytest.raises(EmbeddingTransientError, match=code):
        BedrockTitanEmbedder(client).embed("hello")


@pytest.mark.parametrize(
    ("code", "status"),
    [("AccessDeniedException", 403), ("ValidationException", 400), ("ResourceNotFoundException", 404)],
)
def test_permanent_errors(client: Any, stubber: Stubber, code: str, status: int) -> None:
    stubber.add_client_error(
        "invoke_model", service_error_code=code, service_message="no", http_status_code=status
    )
    with pytest.raises(EmbeddingError, match=code) as caught:
        BedrockTitanEmbedder(client).embed("hello")
    assert not isinstance(caught.value, EmbeddingTransientError)


def test_a_read_timeout_is_transient() -> None:
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", config=Config(retries={"total_max_attempts": 1})
    )

    def time_out(**_: Any) -> None:
        raise ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    client.meta.events.register("before-send.bedrock-runtime.InvokeModel", time_out)
    with pytest.raises(EmbeddingTransientError):
        BedrockTitanEmbedder(client).embed("hello")
