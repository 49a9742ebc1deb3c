"""The prompt: a byte-stable system prompt, the history with its cache breakpoints, then the context."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from stepwise.history.models import StoredMessage
from stepwise.prompt.layout import build_prompt
from stepwise.prompt.messages import build_messages
from stepwise.prompt.system import (
    CONTEXT_HEADER,
    ToolSummary,
    build_system_prompt,
    is_turn_context,
    turn_context,
)
from stepwise.turn_records.models import ModelStep

NOW = datetime(2026, 11, 22, 9, 30, 5, tzinfo=UTC)
EPHEMERAL = {"type": "ephemeral"}


def message(n: int, role: str, text: str | None = None) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}",
        chat_id=1,
        role=role,
        content=text or f"message {n}",  # type: ignore[arg-type]
        created_at=f"2026-11-22T09:00:{n:02d}.000Z",
    )


def conversation(count: int) -> list[StoredMessage]:
    return [message(n, "user" if n % 2 == 0 else "assistant") for n in range(count)]


def round_step(n: int) -> ModelStep:
    use = {"type": "tool_use", "id": f"t{n}", "name": "add_task", "input": {"title": f"task {n}"}}
    result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"added #{n}"}
    return ModelStep(
        step=n,
        content=[use],
        stop_reason="tool_use",
        model="m",
        message_id=f"s{n}",
        created_at="x",
        tool_results=[result],
    )


def breakpoints(messages: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(message index, block index) of every block carrying cache_control."""
    return [
        (i, j)
        for i, m in enumerate(messages)
        for j, block in enumerate(m["content"])
        if block.get("cache_control") == EPHEMERAL
    ]


def without_context(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": m["role"], "content": [b for b in m["content"] if not is_turn_context(b)]} for m in messages
    ]


def prefix_bytes(messages: list[dict[str, Any]], up_to: tuple[int, int]) -> str:
    """The messages up to and including one block, as the API compares them (without cache_control)."""
    i, j = up_to
    blocks = [
        (n, m["role"], {k: v for k, v in b.items() if k != "cache_control"})
        for n, m in enumerate(messages[: i + 1])
        for b in (m["content"] if n < i else m["content"][: j + 1])
    ]
    return json.dumps(blocks, sort_keys=True)


def test_the_system_prompt_is_one_cached_block_without_anything_per_turn() -> None:
    (system,) = build_system_prompt([], persona="## Character\nWarm and direct.")
    assert "You are Stepwise" in system["text"] and "Warm and direct." in system["text"]
    assert system["cache_control"] == EPHEMERAL
    assert "2026" not in system["text"], "the time must stay out of the cached prefix"
    assert build_system_prompt([], persona="## Character\nWarm and direct.") == [system], (
        "the same every turn"
    )


def test_without_tools_the_prompt_says_none_are_available() -> None:
    (system,) = build_system_prompt([])
    assert "## Tools" in system["text"] and "No tools are available" in system["text"]


def test_tools_are_listed_with_their_approval_requirement() -> None:
    tools = [ToolSummary("add_task", "Add a task."), ToolSummary("delete_task", "Delete a task.", True)]
    (system,) = build_system_prompt(tools)
    assert "- add_task: Add a task.\n" in system["text"]
    assert "- delete_task: Delete a task. (the user must approve" in system["text"]


def test_the_turn_context_gives_the_time_in_iso_8601_then_the_sections() -> None:
    context = turn_context(NOW, per_turn=["## Memories\n- likes tea", "  "])
    assert context.startswith(CONTEXT_HEADER)
    assert "The current date and time is 2026-11-22T09:30:05+00:00." in context
    assert context.index("## Now") < context.index("## Memories")
    assert "\n\n  " not in context, "blank sections are left out"


def test_the_context_ends_the_newest_user_message_after_its_breakpoint() -> None:
    prompt = build_prompt([], NOW, conversation(5), [], per_turn=["## Memories\n- likes tea"])
    last = prompt.messages[-1]["content"]
    assert [b["text"] for b in last] == ["message 4", turn_context(NOW, ["## Memories\n- likes tea"])]
    assert last[0]["cache_control"] == EPHEMERAL and "cache_control" not in last[1]
    assert "likes tea" not in json.dumps(prompt.system)


def test_history_becomes_alternating_messages_oldest_first() -> None:
    history = [message(1, "user"), message(2, "assistant"), message(3, "user")]
    assert without_context(build_messages(history, [])) == [
        {"role": "user", "content": [{"type": "text", "text": "message 1", "cache_control": EPHEMERAL}]},
        {"role": "assistant", "content": [{"type": "text", "text": "message 2"}]},
        {"role": "user", "content": [{"type": "text", "text": "message 3", "cache_control": EPHEMERAL}]},
    ]


def test_a_lone_user_message_from_a_failed_turn_is_merged_with_the_next() -> None:
    history = [message(1, "user", "first try"), message(2, "user", "second try")]
    assert build_messages(history, []) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first try"},
                {"type": "text", "text": "second try", "cache_control": EPHEMERAL},
            ],
        }
    ]


def test_a_window_starting_with_the_assistant_drops_it_and_empty_messages() -> None:
    history = [message(1, "assistant"), message(2, "user", "  "), message(3, "user")]
    assert [m["content"][0]["text"] for m in build_messages(history, [])] == ["message 3"]


def test_tool_rounds_follow_the_history_and_the_context_follows_the_last_results() -> None:
    steps = [
        round_step(0),
        ModelStep(step=1, content=[], stop_reason="end_turn", model="m", message_id="b", created_at="y"),
    ]
    messages = build_messages([message(1, "user")], steps, context=turn_context(NOW))
    use, result = steps[0].content[0], steps[0].tool_results[0]
    assert messages[1] == {"role": "assistant", "content": [use]}
    assert messages[2]["content"][0] == {**result, "cache_control": EPHEMERAL}
    assert is_turn_context(messages[2]["content"][1])
    assert "cache_control" not in steps[0].tool_results[0], "the stored step is not changed"


def test_at_most_two_message_breakpoints_the_newest_user_message_and_the_one_before_the_last_answer() -> None:
    assert breakpoints(build_messages(conversation(1), [], "ctx")) == [(0, 0)]
    assert breakpoints(build_messages(conversation(9), [], "ctx")) == [(6, 0), (8, 0)]
    with_rounds = build_messages(conversation(9), [round_step(0), round_step(1)], "ctx")
    assert breakpoints(with_rounds) == [(10, 0), (12, 0)]
    # with the system prompt's, three of the API's four
    assert len(breakpoints(with_rounds)) + len(build_system_prompt([])) <= 4


def test_each_call_reads_the_prefix_the_previous_call_wrote_byte_for_byte() -> None:
    # turn 1 (messages 0..4), its tool round, then turn 2 after the answer and a new message, then its round
    history = conversation(5)
    calls = [
        build_messages(history, [], turn_context(NOW)),
        build_messages(history, [round_step(0)], turn_context(NOW + timedelta(seconds=2))),
        build_messages(conversation(7), [], turn_context(NOW + timedelta(minutes=1), ["## Memories\n- new"])),
        build_messages(conversation(7), [round_step(1)], turn_context(NOW + timedelta(minutes=2))),
    ]
    # turn 2 reads what turn 1's first call wrote (its tool rounds are not part of the stored history)
    for previous, current in ((0, 1), (0, 2), (2, 3)):
        written = breakpoints(calls[previous])[-1]
        read = breakpoints(calls[current])[0]
        assert read == written, "a breakpoint where the previous call wrote"
        assert prefix_bytes(calls[current], read) == prefix_bytes(calls[previous], written)
