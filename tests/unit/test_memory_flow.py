"""Long-term memory: chat bookkeeping, the summarizer's watermark and failures, recall, the memory tools."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, text_response, turn_start

from stepwise.history.models import StoredMessage
from stepwise.memory.keys import summary_key
from stepwise.memory.service import MemoryService
from stepwise.memory.summarizer import (
    MAX_SUMMARY_ATTEMPTS,
    ExtractiveSummarizer,
    ModelSummarizer,
    SummarizeInput,
    SummarizeServices,
    summarize_chats,
)
from stepwise.memory.vector_index import VectorRecord
from stepwise.model.types import ModelResponse
from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.load_context import load_context
from stepwise.states.request_approval import request_approval
from stepwise.states.run_tools import run_tools
from stepwise.telegram.conversation import Conversation
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

USER, CHAT = 7, 7


class FlakySummarizer:
    """Fails the first `failures` calls, then summarizes extractively."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError("model overloaded")
        return ExtractiveSummarizer().summarize(previous, messages)


@pytest.fixture
def index() -> InMemoryVectorIndex:
    return InMemoryVectorIndex()


@pytest.fixture
def summarize(index: InMemoryVectorIndex) -> SummarizeServices:
    ids = itertools.count(1)
    return SummarizeServices(
        chats=InMemoryChatStore(),
        messages=InMemoryMessageRepository(),
        memory=MemoryService(LocalHashEmbedder(), index, new_key=lambda: f"k{next(ids)}"),
        summarizer=ExtractiveSummarizer(),
        history_limit=4,
        threshold=3,
    )


def chat_messages(services: SummarizeServices, count: int, chat_id: int = CHAT, start: int = 0) -> None:
    """Store `count` alternating messages and count them, as LoadContext and SaveTurn do."""
    for n in range(start, start + count):
        message = StoredMessage(
            id=f"m{chat_id}-{n:03d}",
            chat_id=chat_id,
            role="user" if n % 2 == 0 else "assistant",
            content=f"message {n} about Lisbon",
            created_at=f"2026-11-22T09:{n // 60:02d}:{n % 60:02d}.000Z",
        )
        assert services.messages.add(message)
        services.chats.record_message(
            Conversation(chat_id), chat_id, services.history_limit + services.threshold
        )


def test_a_chat_becomes_due_past_the_window_plus_the_threshold(summarize: SummarizeServices) -> None:
    chat_messages(summarize, 6)
    assert list(summarize.chats.due_chats()) == []
    chat_messages(summarize, 1, start=6)
    assert list(summarize.chats.due_chats()) == [Conversation(CHAT)]


def test_one_run_writes_one_summary_vector_and_a_second_run_writes_nothing(
    summarize: SummarizeServices, index: InMemoryVectorIndex
) -> None:
    chat_messages(summarize, 9)
    first = summarize_chats(SummarizeInput(), summarize)
    assert (first.visited, first.summarized, first.messages) == (1, 1, 5), "all but the newest 4"
    (record,) = index.records.values()
    assert record.key == summary_key(Conversation(CHAT))
    assert record.metadata == record.metadata | {"user_id": USER, "chat_id": CHAT, "kind": "summary"}
    assert "message 0 about Lisbon" in record.text and "message 5" not in record.text
    chat = summarize.chats.get(Conversation(CHAT))
    assert chat is not None and chat.summarized_count == 5 and not chat.due
    assert chat.summarized_key == f"2026-11-22T09:00:04.000Z#m{CHAT}-004"
    second = summarize_chats(SummarizeInput(), summarize)
    assert (second.visited, second.summarized) == (0, 0)
    assert len(summarize.messages.recent(Conversation(CHAT), 100)) == 9, "history is never deleted"


def test_a_run_that_reads_only_small_talk_says_it_kept_nothing(
    summarize: SummarizeServices, index: InMemoryVectorIndex
) -> None:
    for n, (role, text) in enumerate([("user", "hello"), ("assistant", "Hello! How can I help?")]):
        summarize.messages.add(
            StoredMessage(
                id=f"m-{n}", chat_id=CHAT, role=role, content=text, created_at=f"2026-11-22T09:00:0{n}.000Z"
            )
        )
        summarize.chats.record_message(Conversation(CHAT), CHAT, 100)
    run = summarize_chats(SummarizeInput(force=True), summarize)
    assert (run.summarized, run.messages, run.kept) == (1, 2, 0)
    assert index.records == {}
    chat_messages(summarize, 2, start=10)  # then something worth keeping
    again = summarize_chats(SummarizeInput(force=True), summarize)
    assert (again.summarized, again.messages, again.kept) == (1, 2, 1)


def test_the_next_summary_folds_the_previous_one_in(
    summarize: SummarizeServices, index: InMemoryVectorIndex
) -> None:
    chat_messages(summarize, 9)
    summarize_chats(SummarizeInput(), summarize)
    chat_messages(summarize, 4, start=9)
    summarize_chats(SummarizeInput(), summarize)
    text = index.records[summary_key(Conversation(CHAT))].text
    assert "message 0 about Lisbon" in text and "message 8 about Lisbon" in text
    assert len(index.records) == 1, "one summary vector per chat, replaced by the newer rolling summary"


def test_a_failure_half_way_loses_nothing_and_the_next_run_completes(
    summarize: SummarizeServices, index: InMemoryVectorIndex
) -> None:
    chat_messages(summarize, 9, chat_id=1)
    chat_messages(summarize, 9, chat_id=2)
    summarize.summarizer = FlakySummarizer(failures=1)
    assert summarize_chats(SummarizeInput(), summarize).failed == [1], "the run itself does not fail"
    assert set(index.records) == {summary_key(Conversation(2))}, "the other chat still got its summary"
    failed = summarize.chats.get(Conversation(1))
    assert failed is not None and failed.due and failed.summarized_key == "" and failed.summarized_count == 0
    retry = summarize_chats(SummarizeInput(), summarize)
    assert (retry.summarized, retry.messages) == (1, 5)
    assert set(index.records) == {summary_key(Conversation(1)), summary_key(Conversation(2))}


def test_an_index_failure_leaves_the_watermark_where_it_was(
    summarize: SummarizeServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat_messages(summarize, 9)

    def broken_put(records: Sequence[VectorRecord]) -> None:
        raise RuntimeError("index unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(InMemoryVectorIndex, "put", lambda self, records: broken_put(records))
        assert summarize_chats(SummarizeInput(), summarize).failed == [CHAT]
    assert summarize.chats.get(Conversation(CHAT)).summarized_count == 0  # type: ignore[union-attr]
    assert summarize_chats(SummarizeInput(), summarize).summarized == 1


class EmptySummarizer:
    """Finds nothing worth keeping (the offline summarizer on small talk, or a model answering nothing)."""

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        return "  \n"


class RefusingEmbedder(LocalHashEmbedder):
    """Fails on every text, as Bedrock does for an empty one."""

    def embed(self, text: str) -> list[float]:
        raise ValueError(f"refused: {text!r}")


def test_an_empty_summary_is_neither_written_nor_embedded_and_the_window_moves_on(
    summarize: SummarizeServices, index: InMemoryVectorIndex
) -> None:
    chat_messages(summarize, 9)
    summarize_chats(SummarizeInput(), summarize)
    before = summarize.chats.get(Conversation(CHAT))
    assert before is not None and before.summary
    chat_messages(summarize, 4, start=9)
    summarize.summarizer = EmptySummarizer()
    summarize.memory = MemoryService(RefusingEmbedder(), index)  # any embedding would fail the chat
    run = summarize_chats(SummarizeInput(), summarize)
    assert (run.failed, run.messages) == ([], 4)
    after = summarize.chats.get(Conversation(CHAT))
    assert after is not None and after.summary == before.summary, "the summary stays as it was"
    assert after.summarized_count == 9 and not after.due
    assert index.records[summary_key(Conversation(CHAT))].text == before.summary


def test_a_chat_failing_run_after_run_waits_for_its_next_message(summarize: SummarizeServices) -> None:
    chat_messages(summarize, 9, chat_id=1)
    summarize.summarizer = FlakySummarizer(failures=MAX_SUMMARY_ATTEMPTS)
    for attempt in range(MAX_SUMMARY_ATTEMPTS):
        assert summarize_chats(SummarizeInput(), summarize).failed == [1], attempt
    assert list(summarize.chats.due_chats()) == [], "no longer retried run after run"
    assert summarize_chats(SummarizeInput(), summarize).visited == 0
    chat_messages(summarize, 1, chat_id=1, start=9)
    run = summarize_chats(SummarizeInput(), summarize)
    assert (run.failed, run.summarized, run.messages) == ([], 1, 6)
    assert summarize.chats.get(Conversation(1)).summary_failures == 0  # type: ignore[union-attr]


def test_a_long_backlog_is_summarized_in_batches(summarize: SummarizeServices) -> None:
    summarize.batch_limit = 3
    chat_messages(summarize, 12)
    assert summarize_chats(SummarizeInput(), summarize).messages == 3
    assert summarize.chats.get(Conversation(CHAT)).due  # type: ignore[union-attr]
    assert summarize_chats(SummarizeInput(), summarize).messages == 3
    # the 2 left are fewer than the threshold: they wait for more messages, like any chat
    assert not summarize.chats.get(Conversation(CHAT)).due  # type: ignore[union-attr]
    assert summarize_chats(SummarizeInput(), summarize).visited == 0


def test_a_forced_run_folds_in_everything(summarize: SummarizeServices) -> None:
    chat_messages(summarize, 2)
    assert summarize_chats(SummarizeInput(force=True), summarize).messages == 2


def test_the_model_summarizer_asks_for_an_updated_summary() -> None:
    model = ScriptedModel(text_response("Anna, the user's sister, lives in Lisbon."))
    summary = ModelSummarizer(lambda: model, "claude-haiku-4-5").summarize(
        "Older: likes tea.",
        [
            StoredMessage(
                id="1", chat_id=1, role="user", content="my sister Anna moved to Lisbon", created_at="x"
            )
        ],
    )
    assert summary == "Anna, the user's sister, lives in Lisbon."
    prompt = model.requests[0].messages[0]["content"][0]["text"]
    assert "Older: likes tea." in prompt and "User: my sister Anna moved to Lisbon" in prompt
    assert "long-term memory" in model.requests[0].system[0]["text"]


def test_the_model_summarizer_answering_nothing_is_an_empty_summary() -> None:
    model = ScriptedModel(text_response(""))
    message = StoredMessage(id="1", chat_id=1, role="user", content="hi", created_at="x")
    assert ModelSummarizer(lambda: model, "claude-haiku-4-5").summarize("Older: likes tea.", [message]) == ""


def tool_use(name: str, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(
        content=[{"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": args}],
        stop_reason="tool_use",
        model="m",
    )


def run_round(
    services: TurnServices, model: ScriptedModel, text: str, update_id: int, call: tuple[str, dict[str, Any]]
) -> Any:
    begin = turn_start(
        services, text, update_id=update_id, created_at=f"2026-11-22T09:{update_id:02d}:00.000Z"
    )
    load_context(begin, services)
    model.responses.append(tool_use(*call))
    routed = call_model(CallModelInput(turn=begin.turn), services)
    approvals = routed.route == "tools_with_approval"
    return begin, run_tools(RunToolsInput(turn=begin.turn, next=routed, approvals=approvals), services)


def last_result(services: TurnServices, turn_id: str) -> str:
    return str(services.stores.turns.get_step(turn_id, 0).tool_results[0]["content"])


def test_remember_recall_and_forget_with_approval(services: TurnServices, model: ScriptedModel) -> None:
    begin, _ = run_round(
        services, model, "remember I like green tea", 1, ("remember", {"fact": "Likes green tea"})
    )
    assert last_result(services, begin.turn.turn_id).startswith("Remembered (fact-")
    begin, _ = run_round(services, model, "what do I drink?", 2, ("recall", {"query": "green tea"}))
    found = last_result(services, begin.turn.turn_id)
    memory_id = found.split("]")[0].lstrip("[")
    assert found.endswith("Likes green tea") and memory_id.startswith("fact-")
    begin, waiting = run_round(services, model, "forget it", 3, ("forget", {"memory_id": memory_id}))
    assert waiting.route == "approval"
    request_approval(
        RequestApprovalInput(turn=begin.turn, approval_id=waiting.approval_id, task_token="t"), services
    )
    services.stores.approvals.decide(waiting.approval_id, "approved", "now", USER)
    run_tools(RunToolsInput(turn=begin.turn, next=waiting, approvals=True, resume=True), services)
    assert last_result(services, begin.turn.turn_id) == f"Forgot {memory_id}: Likes green tea"
    begin, _ = run_round(services, model, "what do I drink?", 4, ("recall", {"query": "green tea"}))
    assert last_result(services, begin.turn.turn_id) == "No memories yet."


def test_memories_never_cross_users(
    services: TurnServices, model: ScriptedModel, memory: MemoryService
) -> None:
    other = memory.remember(99, 99, "The other user's secret is in Lisbon", "now")
    begin, _ = run_round(services, model, "tell me secrets", 1, ("recall", {"query": "secret Lisbon"}))
    assert last_result(services, begin.turn.turn_id) == "No memories yet."
    begin, _ = run_round(services, model, "forget that", 2, ("forget", {"memory_id": other}))
    assert "There is no memory" in last_result(services, begin.turn.turn_id)
    start = turn_start(
        services, "where is the secret? Lisbon", update_id=3, created_at="2026-11-22T09:03:00.000Z"
    )
    load_context(start, services)
    assert services.stores.turns.get_meta(start.turn.turn_id).memories == []


def test_load_context_recalls_the_users_memories_and_the_chat_summary(
    services: TurnServices, memory: MemoryService
) -> None:
    memory.remember(USER, 123, "Anna, the user's sister, lives in Lisbon", "now")
    memory.save_summary(USER, Conversation(CHAT), "We talked about Lisbon trips.", "now")
    services.stores.chats.record_message(Conversation(CHAT), USER, 100)
    chat = services.stores.chats.get(Conversation(CHAT))
    assert chat is not None
    services.stores.chats.advance(
        chat,
        summarized_key="k",
        summarized=0,
        summary="We talked about Lisbon trips.",
        now="n",
        still_due=False,
    )
    start = turn_start(services, "When do I visit Anna in Lisbon?", update_id=5)
    load_context(start, services)
    meta = services.stores.turns.get_meta(start.turn.turn_id)
    assert meta.summary == "We talked about Lisbon trips."
    assert [m.text for m in meta.memories] == ["Anna, the user's sister, lives in Lisbon"], (
        "own summary not twice"
    )


def test_a_failing_recall_does_not_fail_the_turn(
    services: TurnServices, memory: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "recall", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
    start = turn_start(services, "hello")
    assert load_context(start, services).route == "model"
    assert services.stores.turns.get_meta(start.turn.turn_id).memories == []
