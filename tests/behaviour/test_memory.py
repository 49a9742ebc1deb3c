"""Long-term memory on the in-memory stack (support.memory_stack): the scheduled summarizer's core (one
summary vector per due chat, a second run writing nothing, failures half-way, offline small talk, a failing
embedder), the memory recalled into the prompt (never in a group's nor another user's), and the memory tools.
The emulated stack keeps the scheduled Summarize function through its schedule's event, and voice notes that
could not be heard through the speech-to-text server (tests/integration/test_memory.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.memory_stack import MemoryStack

from stepwise.memory.keys import summary_key
from stepwise.memory.summarizer import MAX_SUMMARY_ATTEMPTS
from stepwise.memory.vector_index import VectorRecord
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, context_text, error, last_user_text, text, tool_use
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

SUMMARY_MARKER = "long-term memory of a Telegram conversation"
OFFLINE = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY_PARAMETER": ""}
SMALL_WINDOW = {"HISTORY_LIMIT": "2", "SUMMARY_THRESHOLD": "2"}


def answering(summary: str) -> Any:
    """Echo chat turns; answer summarization requests with `summary`."""

    def answer(request: dict[str, Any]) -> Scripted:
        if SUMMARY_MARKER in str(request["system"]):
            return text(summary)
        return text(f"Noted: {last_user_text(request)}")

    return answer


@pytest.fixture
def small_window() -> MemoryStack:
    """A window of 2 messages and a threshold of 2: a chat is due after 2 turns (4 messages)."""
    return MemoryStack(env=SMALL_WINDOW)


def prompt_text(request: dict[str, Any]) -> str:
    """The system prompt and the per-turn context (where the summary and recalled memories go)."""
    return "\n".join([*(block["text"] for block in request["system"]), context_text(request)])


def chat_about_lisbon(stack: MemoryStack, user: int) -> None:
    stack.say(user, "My sister Anna lives in Lisbon")
    stack.say(user, "We plan to visit her in Lisbon in May")


def test_past_the_threshold_one_run_writes_one_summary_vector_per_chat_and_a_second_run_nothing(
    small_window: MemoryStack,
) -> None:
    stack = small_window
    first, second, quiet = stack.new_user(), stack.new_user(), stack.new_user()
    stack.anthropic.default = answering("The user's sister Anna lives in Lisbon; a visit is planned for May.")
    chat_about_lisbon(stack, first)
    chat_about_lisbon(stack, second)
    stack.say(quiet, "just one message")
    run = stack.run_summarizer()
    assert (run["visited"], run["summarized"], run["failed"]) == (2, 2, [])
    records = stack.vector_index.records
    for user in (first, second):
        record = records[summary_key(Conversation(user))]
        assert record.metadata["user_id"] == user and record.metadata["chat_id"] == user
        assert record.metadata["kind"] == "summary" and "text" not in record.metadata
        assert record.text == "The user's sister Anna lives in Lisbon; a visit is planned for May."
    assert summary_key(Conversation(quiet)) not in records
    before = dict(records)
    again = stack.run_summarizer()
    assert (again["visited"], again["summarized"]) == (0, 0)
    assert stack.vector_index.records == before
    assert len(stack.stored(first)) == 4, "history is never deleted"


def test_a_later_message_on_the_subject_brings_the_memory_and_a_group_or_another_user_never(
    small_window: MemoryStack,
) -> None:
    stack = small_window
    user, stranger = stack.new_user(), stack.new_user()
    summary = "Anna, the user's sister, lives in Lisbon; they plan a visit in May."
    stack.anthropic.default = answering(summary)
    chat_about_lisbon(stack, user)
    stack.run_summarizer()
    stack.anthropic.reset()
    stack.anthropic.default = answering(summary)
    # the same chat: the rolling summary is in the prompt's per-turn section
    stack.say(user, "Remind me, who lives in Lisbon?")
    same_chat = prompt_text(stack.anthropic.requests[-1])
    assert f"## Earlier in this conversation (summary)\n{summary}" in same_chat
    assert summary not in json.dumps(stack.anthropic.requests[-1]["system"]), "not in the cached prefix"
    # a group the user is in: their private chat's summary is theirs, never recalled there (docs/groups.md)
    group = -1_000_000 - user
    update = updates.group_message(user, "@stepwise_bot What do I know about Lisbon and Anna?", chat_id=group)
    assert stack.post_update(update)["statusCode"] == 200
    stack.drain()
    assert stack.turn_for_update(Conversation(group), update["update_id"]) is not None
    assert summary not in prompt_text(stack.anthropic.requests[-1])
    # another user asking the same never sees it
    stack.say(stranger, "What do I know about Lisbon and Anna?")
    assert summary not in prompt_text(stack.anthropic.requests[-1])
    assert "Memories about the user" not in prompt_text(stack.anthropic.requests[-1])


def test_remember_then_recall_in_another_turn_and_forget_after_approval(stack: MemoryStack) -> None:
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
    assert memory_id in stack.vector_index.records, "nothing is removed before the tap"
    stack.press(user, message, "Approve")
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert memory_id not in stack.vector_index.records
    stack.anthropic.script(tool_use(("recall", {"query": "bike lock code"})), text("I don't know it."))
    stack.say(user, "what's my bike lock code?")
    assert stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"] == "No memories yet."


def test_a_summarizer_failing_half_way_loses_nothing_and_the_next_run_completes(
    small_window: MemoryStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = small_window
    user = stack.new_user()
    chat_about_lisbon(stack, user)
    # the model fails (after the SDK's own attempt): the chat fails and stays due, the run itself succeeds
    stack.anthropic.always(error(500))
    assert user in stack.run_summarizer()["failed"]
    assert summary_key(Conversation(user)) not in stack.vector_index.records
    # then the index fails
    stack.anthropic.default = answering("Anna lives in Lisbon.")
    original_put = InMemoryVectorIndex.put

    def failing_put(self: InMemoryVectorIndex, records: list[VectorRecord]) -> None:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(InMemoryVectorIndex, "put", failing_put)
    assert user in stack.run_summarizer()["failed"]
    monkeypatch.setattr(InMemoryVectorIndex, "put", original_put)
    # the next run completes the same batch
    run = stack.run_summarizer()
    assert run["summarized"] >= 1
    assert stack.vector_index.records[summary_key(Conversation(user))].text == "Anna lives in Lisbon."
    chat = stack.chat_record(user)
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat


def test_chat_only_messages_offline_write_no_summary_and_the_window_moves_on() -> None:
    # Given the offline model and two turns of small talk (nothing the rules keep)
    stack = MemoryStack(env=SMALL_WINDOW | OFFLINE)
    user = stack.new_user()
    stack.say(user, "hello")
    stack.say(user, "hi there")
    assert stack.chat_record(user).get("summary_due")
    # When the scheduled summarizer runs
    run = stack.run_summarizer()
    # Then the chat does not fail, nothing is embedded or written, and its window moved past the two older
    assert user not in run["failed"]
    assert summary_key(Conversation(user)) not in stack.vector_index.records
    chat = stack.chat_record(user)
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat
    assert chat.get("summary", "") == ""


def test_a_failing_embedder_fails_one_chat_only_logged_once_and_the_run_succeeds(
    small_window: MemoryStack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given two due chats, and an embedder that fails on one chat's summary
    stack = small_window
    broken, fine = stack.new_user(), stack.new_user()
    stack.anthropic.default = lambda request: (
        text(f"Summary: {last_user_text(request)}")
        if SUMMARY_MARKER in str(request["system"])
        else text("Noted.")
    )
    stack.say(broken, "The broken chat talks about pottery")
    stack.say(broken, "More about pottery")
    chat_about_lisbon(stack, fine)
    original_embed = LocalHashEmbedder.embed

    def embed(self: LocalHashEmbedder, text: str) -> list[float]:
        if "pottery" in text:
            raise RuntimeError("Bedrock embedding failed: ThrottlingException")
        return original_embed(self, text)

    monkeypatch.setattr(LocalHashEmbedder, "embed", embed)
    # When the scheduled function runs: it returns (no retry of the whole run), the other chat is summarized
    caplog.clear()
    run = stack.run_summarizer()
    assert broken in run["failed"] and fine not in run["failed"]
    assert summary_key(Conversation(fine)) in stack.vector_index.records
    assert summary_key(Conversation(broken)) not in stack.vector_index.records
    failures = [r for r in caplog.records if r.getMessage().startswith("summarizing failed")]
    assert len([r for r in failures if getattr(r, "chat_id", None) == broken]) == 1, "logged once"
    assert stack.chat_record(broken).get("summary_due"), "tried again by the next run"
    # A chat that keeps failing is no longer due after MAX_SUMMARY_ATTEMPTS runs in a row
    for _ in range(MAX_SUMMARY_ATTEMPTS - 1):
        assert broken in stack.run_summarizer()["failed"]
    assert "summary_due" not in stack.chat_record(broken)
    assert broken not in stack.run_summarizer()["failed"], "the run no longer visits it"
    # until its next message; then, the embedder working again, it is summarized
    monkeypatch.setattr(LocalHashEmbedder, "embed", original_embed)
    stack.say(broken, "And a last word on pottery")
    assert stack.chat_record(broken).get("summary_due")
    assert broken not in stack.run_summarizer()["failed"]
    assert "pottery" in stack.vector_index.records[summary_key(Conversation(broken))].text
    chat = stack.chat_record(broken)
    assert "summary_failures" not in chat and "summary_due" not in chat
