"""Prompt caching through the real state machine: the fake Messages API applies the API's caching rules to a
second turn on Sonnet, its prompt laid out by the LoadContext and CallModel functions. The rest (a tool round,
Haiku's minimum not reached and reached) is tested on the in-memory stack
(tests/behaviour/test_prompt_caching.py)."""

from __future__ import annotations

from support.stack import Stack

from stepwise_local.anthropic_server import approx_tokens, context_text


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
