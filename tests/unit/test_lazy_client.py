"""LazyClient and lazy adapters: the real one is made on first use, once, and answers for it."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest

from stepwise.aws.lazy_client import LazyClient, lazy


class Made:
    def __init__(self, service: str) -> None:
        self.service = service

    def describe(self) -> str:
        return f"I am {self.service}"


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    services: list[str] = []

    def client(service: str, *args: Any, **kwargs: Any) -> Made:
        services.append(service)
        return Made(service)

    monkeypatch.setattr(boto3, "client", client)
    return services


def test_nothing_is_made_until_the_client_is_used(made: list[str]) -> None:
    lazy = LazyClient("scheduler")
    assert made == [] and "not made yet" in repr(lazy)
    assert lazy.describe() == "I am scheduler"
    assert lazy.describe() == "I am scheduler"
    assert made == ["scheduler"]


def test_threads_that_reach_it_at_once_share_one_client(made: list[str]) -> None:
    lazy = LazyClient("s3vectors")
    threads = [threading.Thread(target=lazy.describe) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert made == ["s3vectors"]


def test_a_missing_attribute_is_the_real_clients_error(made: list[str]) -> None:
    with pytest.raises(AttributeError, match="no_such_operation"):
        LazyClient("scheduler").no_such_operation  # noqa: B018


def test_a_lazy_adapter_is_made_on_first_use_once() -> None:
    # Given an adapter that counts how often it is made
    makes: list[str] = []

    def make() -> Made:
        makes.append("made")
        return Made("approvals")

    adapter = lazy(make)
    # When nothing uses it, Then it is not made; when it is used twice, Then it is made once
    assert makes == [] and "not made yet" in repr(adapter)
    assert adapter.describe() == "I am approvals"
    assert adapter.describe() == "I am approvals"
    assert makes == ["made"]
