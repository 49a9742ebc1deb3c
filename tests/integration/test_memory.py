"""Long-term memory through the real stack: the scheduled summarizer, recall into the prompt, memory tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.stack import Stack

from stepwise.memory.keys import summary_key
from stepwise.memory.summarizer import SummaryFailedError
from stepwise.memory.vector_index import VectorRecord
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, context_text, error, last_user_text, text, tool_use
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex
from stepwise_local.local_memory import local_index

SUMMARY_MARKER = "long-term memory of a Telegram conversation"


def answering(summary: str) -> Any:
    """Echo chat turns; answer summarization requests with `summary`."""

    def answer(request: dict[str, Any]) -> Scripted:
        if SUMMARY_MARKER in str(request["system"]):
            return text(summary)
        return text(f"Noted: {last_user_text(request)}")

    return answer


@pytest.fixture
def small_window(stack: Stack) -> Stack:
    """A window of 2 messages and a threshold of 2: a chat is due after 2 turns (4 messages)."""
    stack.emulation.config.env.update({"HISTORY_LIMIT": "2", "SUMMARY_THRESHOLD": "2"})
    return stack


def prompt_text(request: dict[str, Any]) -> str:
    """The system prompt and the per-turn context (where the summary and recalled memories go)."""
    return "\n".join([*(block["text"] for block in request["system"]), context_text(request)])


def chat_about_lisbon(stack: Stack, user: int) -> None:
    stack.say(user, "My sister Anna lives in Lisbon")
    stack.say(user, "We plan to visit her in Lisbon in May")


def test_past_the_threshold_one_run_writes_one_summary_vector_per_chat_and_a_second_run_nothing(
    small_window: Stack,
) -> None:
    stack = small_window
    first, second, quiet = stack.new_user(), stack.new_user(), stack.new_user()
    stack.anthropic.default = answering("The user's sister Anna lives in Lisbon; a visit is planned for May.")
    chat_about_lisbon(stack, first)
    chat_about_lisbon(stack, second)
    stack.say(quiet, "just one message")
    run = stack.emulation.run_summarizer()
    assert (run["visited"], run["summarized"], run["failed"]) == (2, 2, [])
    records = local_index().records
    for user in (first, second):
        record = records[summary_key(user)]
        assert record.metadata["user_id"] == user and record.metadata["chat_id"] == user
        assert record.metadata["kind"] == "summary" and "text" not in record.metadata
        assert record.text == "The user's sister Anna lives in Lisbon; a visit is planned for May."
    assert summary_key(quiet) not in records
    before = dict(records)
    again = stack.emulation.run_summarizer()
    assert (again["visited"], again["summarized"]) == (0, 0)
    assert local_index().records == before
    assert len(stack.stored(first)) == 4, "history is never deleted"


def test_a_later_message_on_the_subject_brings_the_memory_and_another_users_never(
    small_window: Stack,
) -> None:
    stack = small_window
    user, stranger = stack.new_user(), stack.new_user()
    summary = "Anna, the user's sister, lives in Lisbon; they plan a visit in May."
    stack.anthropic.default = answering(summary)
    chat_about_lisbon(stack, user)
    stack.emulation.run_summarizer()
    stack.anthropic.reset()
    stack.anthropic.default = answering(summary)
    # the same chat: the rolling summary is in the prompt's per-turn section
    stack.say(user, "Remind me, who lives in Lisbon?")
    same_chat = prompt_text(stack.anthropic.requests[-1])
    assert f"## Earlier in this conversation (summary)\n{summary}" in same_chat
    assert summary not in json.dumps(stack.anthropic.requests[-1]["system"]), "not in the cached prefix"
    # another chat of the same user (a group): recall brings the memory in
    group = -1_000_000 - user
    update = updates.text_message(user, "What do I know about Lisbon and Anna?", chat_id=group)
    stack.emulation.post_update(update)
    stack.emulation.wait_for_update(update["message"]["chat"]["id"], update["update_id"])
    other_chat = prompt_text(stack.anthropic.requests[-1])
    assert f"- [{summary_key(user)}] {summary}" in other_chat
    # another user asking the same never sees it
    stack.say(stranger, "What do I know about Lisbon and Anna?")
    assert summary not in prompt_text(stack.anthropic.requests[-1])
    assert "Memories about the user" not in prompt_text(stack.anthropic.requests[-1])


def test_remember_then_recall_in_another_turn_and_forget_after_approval(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("remember", {"fact": "The user's bike lock code is 4711"})), text("Saved.")
    )
    stack.say(user, "remember my bike lock code is 4711")
    stack.anthropic.script(tool_use(("recall", {"query": "bike lock code"})), text("It's 4711."))
    stack.say(user, "what's my bike lock code?")
    recalled = stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"]
    assert recalled.endswith("The user's bike lock code is 4711")
    memory_id = recalled.split("]")[0].lstrip("[")
    stack.anthropic.script(tool_use(("forget", {"memory_id": memory_id})), text("Forgotten."))
    name = stack.send(user, "forget the lock code")
    message = stack.buttons(user)
    assert (
        f"asks to forget the memory {memory_id}: “The user's bike lock code is 4711”."
        in stack.telegram.text_of(message)
    )
    assert memory_id in local_index().records, "nothing is removed before the tap"
    stack.press(user, message, "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert memory_id not in local_index().records
    stack.anthropic.script(tool_use(("recall", {"query": "bike lock code"})), text("I don't know it."))
    stack.say(user, "what's my bike lock code?")
    assert stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"] == "No memories yet."


def test_a_summarizer_failing_half_way_loses_nothing_and_the_next_run_completes(
    small_window: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = small_window
    user = stack.new_user()
    chat_about_lisbon(stack, user)
    # the model fails (after the SDK's own attempt): the run fails, the chat stays due
    stack.anthropic.always(error(500))
    with pytest.raises(SummaryFailedError):
        stack.emulation.run_summarizer()
    assert summary_key(user) not in local_index().records
    # then the index fails
    stack.anthropic.default = answering("Anna lives in Lisbon.")
    original_put = InMemoryVectorIndex.put

    def failing_put(self: InMemoryVectorIndex, records: list[VectorRecord]) -> None:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(InMemoryVectorIndex, "put", failing_put)
    with pytest.raises(SummaryFailedError):
        stack.emulation.run_summarizer()
    monkeypatch.setattr(InMemoryVectorIndex, "put", original_put)
    # the next run completes the same batch
    run = stack.emulation.run_summarizer()
    assert run["summarized"] >= 1
    assert local_index().records[summary_key(user)].text == "Anna lives in Lisbon."
    chat = stack.emulation.table("ChatsTable").get_item(Key={"chat_id": user})["Item"]
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat
