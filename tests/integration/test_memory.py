"""Long-term memory through the real stack: the scheduled summarizer, recall into the prompt, memory tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.stack import Stack

from stepwise.memory.keys import summary_key
from stepwise.memory.summarizer import MAX_SUMMARY_ATTEMPTS
from stepwise.memory.vector_index import VectorRecord
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, context_text, error, last_user_text, text, tool_use
from stepwise_local.fake_speech import FakeSpeechToText
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex
from stepwise_local.local_memory import local_index

SUMMARY_MARKER = "long-term memory of a Telegram conversation"
OFFLINE = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY_PARAMETER": ""}


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
    # The stack is shared: what other tests' chats left due at this threshold is summarized first.
    stack.emulation.run_summarizer()
    chat_about_lisbon(stack, first)
    chat_about_lisbon(stack, second)
    stack.say(quiet, "just one message")
    run = stack.emulation.run_summarizer()
    assert (run["visited"], run["summarized"], run["failed"]) == (2, 2, [])
    records = local_index().records
    for user in (first, second):
        record = records[summary_key(Conversation(user))]
        assert record.metadata["user_id"] == user and record.metadata["chat_id"] == user
        assert record.metadata["kind"] == "summary" and "text" not in record.metadata
        assert record.text == "The user's sister Anna lives in Lisbon; a visit is planned for May."
    assert summary_key(Conversation(quiet)) not in records
    before = dict(records)
    again = stack.emulation.run_summarizer()
    assert (again["visited"], again["summarized"]) == (0, 0)
    assert local_index().records == before
    assert len(stack.stored(first)) == 4, "history is never deleted"


def test_a_later_message_on_the_subject_brings_the_memory_and_a_group_or_another_user_never(
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
    # a group the user is in: their private chat's summary is theirs, never recalled there (docs/groups.md)
    group = -1_000_000 - user
    update = updates.group_message(user, "@stepwise_bot What do I know about Lisbon and Anna?", chat_id=group)
    stack.emulation.post_update(update)
    stack.emulation.wait_for_update(group, update["update_id"])
    assert summary not in prompt_text(stack.anthropic.requests[-1])
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
    # the model fails (after the SDK's own attempt): the chat fails and stays due, the run itself succeeds
    stack.anthropic.always(error(500))
    assert user in stack.emulation.run_summarizer()["failed"]
    assert summary_key(Conversation(user)) not in local_index().records
    # then the index fails
    stack.anthropic.default = answering("Anna lives in Lisbon.")
    original_put = InMemoryVectorIndex.put

    def failing_put(self: InMemoryVectorIndex, records: list[VectorRecord]) -> None:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(InMemoryVectorIndex, "put", failing_put)
    assert user in stack.emulation.run_summarizer()["failed"]
    monkeypatch.setattr(InMemoryVectorIndex, "put", original_put)
    # the next run completes the same batch
    run = stack.emulation.run_summarizer()
    assert run["summarized"] >= 1
    assert local_index().records[summary_key(Conversation(user))].text == "Anna lives in Lisbon."
    chat = stack.emulation.table("ChatsTable").get_item(Key={"chat_id": user})["Item"]
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat


def chat_record(stack: Stack, user: int) -> dict[str, Any]:
    item: dict[str, Any] = stack.emulation.table("ChatsTable").get_item(Key={"chat_id": user})["Item"]
    return item


def test_chat_only_messages_offline_write_no_summary_and_the_window_moves_on(small_window: Stack) -> None:
    # Given the offline model and two turns of small talk (nothing the rules keep)
    stack = small_window
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.say(user, "hello")
    stack.say(user, "hi there")
    assert chat_record(stack, user).get("summary_due")
    # When the scheduled summarizer runs
    run = stack.emulation.run_summarizer()
    # Then the chat does not fail, nothing is embedded or written, and its window moved past the two older
    assert user not in run["failed"]
    assert summary_key(Conversation(user)) not in local_index().records
    chat = chat_record(stack, user)
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat
    assert chat.get("summary", "") == ""


def test_voice_notes_that_could_not_be_heard_write_no_summary_and_the_window_moves_on(
    small_window: Stack,
) -> None:
    # Given the offline model and two voice notes the transcriber refused (media only, no words)
    stack = small_window
    with FakeSpeechToText(api_key="sk-test-memory-voice") as speech:
        stack.emulation.put_parameter("/stepwise/memory-test-voice-key", "sk-test-memory-voice")
        stack.emulation.config.env.update(
            OFFLINE
            | {
                "VOICE_TRANSCRIBER": "openai",
                "VOICE_TRANSCRIPTION_URL": speech.base_url,
                "VOICE_TRANSCRIPTION_KEY_PARAMETER": "/stepwise/memory-test-voice-key",
            }
        )
        user = stack.new_user()
        speech.fail_next(400, times=2)
        for n in range(2):
            note = b"OggS\x00\x02" + bytes([n]) * 400
            file_id = stack.telegram.add_file(note, f"voice/memory_{user}_{n}.oga")
            update = updates.voice_message(user, file_id=file_id, duration=2, file_size=len(note))
            assert stack.emulation.post_update(update)["statusCode"] == 200
            stack.emulation.wait_for_update(user, update["update_id"], timeout=60)
    assert [json.loads(item["heard"])["status"] for item in stack.stored(user) if "heard" in item] == [
        "failed",
        "failed",
    ]
    # When the scheduled summarizer runs, then the chat does not fail, nothing is written, the window moves
    run = stack.emulation.run_summarizer()
    assert user not in run["failed"]
    assert summary_key(Conversation(user)) not in local_index().records
    chat = chat_record(stack, user)
    assert int(chat["summarized_count"]) == 2 and "summary_due" not in chat


def test_a_failing_embedder_fails_one_chat_only_logged_once_and_the_run_succeeds(
    small_window: Stack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
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
    run = stack.emulation.run_summarizer()
    assert broken in run["failed"] and fine not in run["failed"]
    assert summary_key(Conversation(fine)) in local_index().records
    assert summary_key(Conversation(broken)) not in local_index().records
    failures = [r for r in caplog.records if r.getMessage().startswith("summarizing failed")]
    assert len([r for r in failures if getattr(r, "chat_id", None) == broken]) == 1, "logged once"
    assert chat_record(stack, broken).get("summary_due"), "tried again by the next run"
    # A chat that keeps failing is no longer due after MAX_SUMMARY_ATTEMPTS runs in a row
    for _ in range(MAX_SUMMARY_ATTEMPTS - 1):
        assert broken in stack.emulation.run_summarizer()["failed"]
    assert "summary_due" not in chat_record(stack, broken)
    assert broken not in stack.emulation.run_summarizer()["failed"], "the run no longer visits it"
    # until its next message; then, the embedder working again, it is summarized
    monkeypatch.setattr(LocalHashEmbedder, "embed", original_embed)
    stack.say(broken, "And a last word on pottery")
    assert chat_record(stack, broken).get("summary_due")
    assert broken not in stack.emulation.run_summarizer()["failed"]
    assert "pottery" in local_index().records[summary_key(Conversation(broken))].text
    chat = chat_record(stack, broken)
    assert "summary_failures" not in chat and "summary_due" not in chat
