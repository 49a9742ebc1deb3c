"""Streamed replies through the real state machine: drafts grow in private chats, one final message each."""

from __future__ import annotations

from itertools import pairwise

from support.stack import Stack

from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, broken, text, tool_use

ANSWER = (
    "Rome was not built in a day, and neither is a good habit: start small, repeat daily, and be patient."
)


def paced(answer: Scripted, seconds: float = 0.02) -> Scripted:
    answer.pace = seconds
    return answer


def draft_texts(stack: Stack, chat_id: int) -> list[str]:
    return [stack.telegram.text_of(draft) for draft in stack.telegram.drafts(chat_id)]


def test_a_private_chat_sees_the_answer_grow_then_gets_it_once_as_a_message(stack: Stack) -> None:
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0.05"
    user = stack.new_user()
    stack.anthropic.script(paced(text(ANSWER)))
    assert stack.say(user, "how do I build a habit?")["status"] == "SUCCEEDED"
    assert stack.replies(user) == [ANSWER], "exactly one message, with the whole answer"
    drafts = draft_texts(stack, user)
    assert len(drafts) >= 2, drafts
    assert all(later.startswith(earlier) and len(later) > len(earlier) for earlier, later in pairwise(drafts))
    assert ANSWER.startswith(drafts[-1])
    assert len({draft["draft_id"] for draft in stack.telegram.drafts(user)}) == 1
    assert stack.anthropic.requests[0]["stream"] is True


def test_a_group_chat_gets_no_drafts_and_its_answer_is_not_streamed(stack: Stack) -> None:
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0.05"
    user = stack.new_user()
    group = -1_000_000 - user
    stack.anthropic.script(paced(text(ANSWER)))
    update = updates.text_message(user, "how do I build a habit?", chat_id=group)
    stack.emulation.post_update(update)
    assert stack.emulation.wait_for_update(group, update["update_id"])["status"] == "SUCCEEDED"
    assert stack.replies(group) == [ANSWER]
    assert [a for a in stack.telegram.attempts("sendMessageDraft") if a["params"]["chat_id"] == group] == []
    assert "stream" not in stack.anthropic.requests[0]


def test_drafts_off_means_no_drafts_and_no_streaming(stack: Stack) -> None:
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0"
    user = stack.new_user()
    stack.anthropic.script(text(ANSWER))
    stack.say(user, "how do I build a habit?")
    assert stack.replies(user) == [ANSWER] and stack.telegram.drafts(user) == []
    assert "stream" not in stack.anthropic.requests[0]


def test_a_stream_that_drops_mid_way_is_retried_and_the_user_gets_one_whole_answer(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(broken(text(ANSWER), after=6), text(ANSWER))
    assert stack.say(user, "how do I build a habit?")["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == 2, "the broken call was retried"
    assert stack.replies(user) == [ANSWER], "no half answer, no second message"
    assert [m["content"] for m in stack.stored(user) if m["role"] == "assistant"] == [ANSWER]


def test_an_overloaded_error_mid_stream_is_retried_like_any_model_failure(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(broken(text(ANSWER), after=5, error_type="overloaded_error"), text(ANSWER))
    assert stack.say(user, "how do I build a habit?")["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == 2
    assert stack.replies(user) == [ANSWER]


def test_a_tool_use_turn_works_streamed_and_tool_input_never_shows_as_a_draft(stack: Stack) -> None:
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0.01"
    user = stack.new_user()
    title = "renew the passport before the summer holidays"
    stack.anthropic.script(
        paced(tool_use(("add_task", {"title": title, "due": "2026-12-01"}), preface="Let me note that.")),
        paced(text("Added it to your list.")),
    )
    assert stack.say(user, "remind me to renew my passport")["status"] == "SUCCEEDED"
    assert [(t["title"], t["due"]) for t in stack.tasks(user)] == [(title, "2026-12-01")]
    assert stack.replies(user) == ["Added it to your list."]
    assert all(request["stream"] is True for request in stack.anthropic.requests)
    drafts = draft_texts(stack, user)
    assert drafts and all(
        "Let me note that.".startswith(d) or "Added it to your list.".startswith(d) for d in drafts
    )
