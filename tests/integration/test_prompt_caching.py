"""Prompt caching through the real state machine: the fake Messages API applies the API's caching rules."""

from __future__ import annotations

from support.stack import Stack

from stepwise_local.anthropic_server import approx_tokens, context_text, text, tool_use


def context_tokens(request: dict[str, object]) -> int:
    return approx_tokens({"type": "text", "text": context_text(request)})  # type: ignore[arg-type]


def test_with_sonnet_the_second_turn_reads_everything_but_its_new_message_and_context_from_cache(
    stack: Stack,
) -> None:
    user = stack.new_user()
    stack.emulation.config.env["ANTHROPIC_MODEL"] = "claude-sonnet-4-5"
    stack.say(user, "hello")
    stack.say(user, "and how are you?")
    first, second = stack.anthropic.usages
    # turn 1 writes tools, system and its message (past Sonnet's 1,024 tokens); its context is plain input
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] >= 1024
    assert first["input_tokens"] == context_tokens(stack.anthropic.requests[0])
    # turn 2 reads all of that back, writes turn 1's answer and its own message, and pays its context in full
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["input_tokens"] == context_tokens(stack.anthropic.requests[1])
    written = approx_tokens({"type": "text", "text": "You said: hello"}) + approx_tokens(
        {"type": "text", "text": "and how are you?"}
    )
    assert second["cache_creation_input_tokens"] == written


def test_a_tool_round_reads_what_the_turns_first_call_wrote(stack: Stack) -> None:
    user = stack.new_user()
    stack.emulation.config.env["ANTHROPIC_MODEL"] = "claude-sonnet-4-5"
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added task #1: buy milk"))
    stack.say(user, "add buy milk")
    asked, answered = stack.anthropic.usages
    assert answered["cache_read_input_tokens"] == asked["cache_creation_input_tokens"] > 0
    assert answered["input_tokens"] == context_tokens(stack.anthropic.requests[1])


def test_with_haiku_a_prefix_under_4096_tokens_is_not_cached(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    stack.say(user, "and how are you?")
    assert [r["model"] for r in stack.anthropic.requests] == ["claude-haiku-4-5"] * 2
    for usage in stack.anthropic.usages:
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0
