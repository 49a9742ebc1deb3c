"""Long-term memory through the real stack: the scheduled Summarize function, invoked with its schedule's
event, writing one summary vector per due chat into the local index and nothing on a second run; voice notes
that could not be heard (the speech-to-text server over HTTP) writing no summary. What memory does (recall
into the prompt, never in a group's nor another user's, the memory tools, failures half-way, offline small
talk, a failing embedder) is tested on the in-memory stack (tests/behaviour/test_memory.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.stack import Stack

from stepwise.memory.keys import summary_key
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, last_user_text, text
from stepwise_local.fake_speech import FakeSpeechToText
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


def chat_record(stack: Stack, user: int) -> dict[str, Any]:
    item: dict[str, Any] = stack.emulation.table("ChatsTable").get_item(Key={"chat_id": user})["Item"]
    return item


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
