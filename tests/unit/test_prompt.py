"""The system prompt and the message list."""

from __future__ import annotations

from datetime import UTC, datetime

from stepwise.history.models import StoredMessage
from stepwise.prompt import ToolSummary, build_messages, build_system_prompt
from stepwise.turns.models import ModelStep

NOW = datetime(2026, 11, 22, 9, 30, 5, tzinfo=UTC)


def message(n: int, role: str, text: str | None = None) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}",
        chat_id=1,
        role=role,
        content=text or f"message {n}",  # type: ignore[arg-type]
        created_at=f"2026-11-22T09:00:{n:02d}.000Z",
    )


def test_the_stable_part_comes_first_and_is_marked_for_caching() -> None:
    stable, per_turn = build_system_prompt([], NOW)
    assert "You are Stepwise" in stable["text"] and "Personality" in stable["text"]
    assert stable["cache_control"] == {"type": "ephemeral"}
    assert "2026-11-22T09:30:05+00:00" in per_turn["text"]
    assert "cache_control" not in per_turn
    assert "2026" not in stable["text"], "the time must stay out of the cached prefix"


def test_without_tools_the_prompt_says_none_are_available() -> None:
    stable, _ = build_system_prompt([], NOW)
    assert "## Tools" in stable["text"] and "No tools are available" in stable["text"]


def test_tools_are_listed_with_their_approval_requirement() -> None:
    tools = [ToolSummary("add_task", "Add a task."), ToolSummary("delete_task", "Delete a task.", True)]
    stable, _ = build_system_prompt(tools, NOW)
    assert "- add_task: Add a task.\n" in stable["text"]
    assert "- delete_task: Delete a task. (the user must approve" in stable["text"]


def test_per_turn_sections_follow_the_time() -> None:
    _, per_turn = build_system_prompt([], NOW, per_turn=["## Memories\n- likes tea", "  "])
    assert per_turn["text"].index("## Now") < per_turn["text"].index("## Memories")


def test_history_becomes_alternating_messages_oldest_first() -> None:
    history = [message(1, "user"), message(2, "assistant"), message(3, "user")]
    assert build_messages(history, []) == [
        {"role": "user", "content": [{"type": "text", "text": "message 1"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "message 2"}]},
        {"role": "user", "content": [{"type": "text", "text": "message 3"}]},
    ]


def test_a_lone_user_message_from_a_failed_turn_is_merged_with_the_next() -> None:
    history = [message(1, "user", "first try"), message(2, "user", "second try")]
    assert build_messages(history, []) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first try"}, {"type": "text", "text": "second try"}],
        }
    ]


def test_a_window_starting_with_the_assistant_drops_it_and_empty_messages() -> None:
    history = [message(1, "assistant"), message(2, "user", "  "), message(3, "user")]
    assert build_messages(history, []) == [
        {"role": "user", "content": [{"type": "text", "text": "message 3"}]}
    ]


def test_tool_rounds_follow_the_history() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "add_task", "input": {"title": "milk"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "added #1"}
    steps = [
        ModelStep(
            step=0,
            content=[use],
            stop_reason="tool_use",
            model="m",
            message_id="a",
            created_at="x",
            tool_results=[result],
        ),
        ModelStep(
            step=1,
            content=[{"type": "text", "text": "pending"}],
            stop_reason="end_turn",
            model="m",
            message_id="b",
            created_at="y",
        ),
    ]
    messages = build_messages([message(1, "user")], steps)
    assert messages[1:] == [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
