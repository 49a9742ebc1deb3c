"""Prompt caching on the in-memory stack (support.memory_stack): the fake Messages API applies the API's
caching rules to what the turns send (a second turn and a tool round on Sonnet reading everything but their
new message and context from cache; Haiku's short prefix caching nothing, and a longer one cached once it
reaches Haiku's minimum). The emulated stack keeps a second turn on Sonnet through the real state machine
(tests/integration/test_prompt_caching.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.memory_stack import MemoryStack

from stepwise_local.anthropic_server import approx_tokens, context_text, prefix_units, text, tool_use

PERSONA = Path(__file__).resolve().parents[2] / "persona"


def context_tokens(request: dict[str, object]) -> int:
    return approx_tokens({"type": "text", "text": context_text(request)})  # type: ignore[arg-type]


def test_with_sonnet_the_second_turn_reads_everything_but_its_new_message_and_context_from_cache() -> None:
    stack = MemoryStack(env={"ANTHROPIC_MODEL": "claude-sonnet-4-5"})
    user = stack.new_user()
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


def test_a_tool_round_reads_what_the_turns_first_call_wrote() -> None:
    stack = MemoryStack(env={"ANTHROPIC_MODEL": "claude-sonnet-4-5"})
    user = stack.new_user()
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added task #1: buy milk"))
    stack.say(user, "add buy milk")
    asked, answered = stack.anthropic.usages
    assert answered["cache_read_input_tokens"] == asked["cache_creation_input_tokens"] > 0
    assert answered["input_tokens"] == context_tokens(stack.anthropic.requests[1])


def marks_messages(request: dict[str, Any]) -> bool:
    return any("cache_control" in block for m in request["messages"] for block in m["content"])


def test_with_haiku_a_prefix_under_4096_tokens_is_not_cached_nor_laid_out_for_caching(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()
    for text_ in ("hello", "and how are you?", "what can you do?"):
        stack.say(user, text_)
    requests = stack.anthropic.requests
    assert [r["model"] for r in requests] == ["claude-haiku-4-5"] * 3
    for usage in stack.anthropic.usages:
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0
    # once CallModel measured the prompt's head, the history carries no breakpoints (it slides, see the
    # caching policy); the system prompt keeps its own, which costs nothing below the minimum
    assert [marks_messages(r) for r in requests] == [True, False, False]
    assert all("cache_control" in r["system"][-1] for r in requests)


def test_with_haiku_a_conversation_that_reaches_4096_tokens_reads_from_cache(tmp_path: Path) -> None:
    for name in ("SOUL.md", "AGENTS.md"):
        (tmp_path / name).write_text((PERSONA / name).read_text(encoding="utf-8"), encoding="utf-8")
    notes = "\n".join(f"- Note {n}: the owner prefers short, concrete answers with dates." for n in range(60))
    (tmp_path / "USER.md").write_text(notes, encoding="utf-8")  # the head about 1,000 tokens longer
    (tmp_path / "no-skills").mkdir()  # the head as measured without skills (they add about 415 tokens)
    stack = MemoryStack(
        env={
            "PERSONA_DIR": str(tmp_path),
            "SKILLS_DIR": str(tmp_path / "no-skills"),
            "JOBS_TABLE": "",  # and without spawn_job (about 250 tokens more)
        }
    )
    user = stack.new_user()
    question = "Here is one more thing I would like your help with today, in a couple of sentences: item {}."
    for n in range(1, 10):
        stack.say(user, question.format(n))
    requests, usages = stack.anthropic.requests, stack.anthropic.usages
    prefixes = [approx_prefix(r) for r in requests]
    assert prefixes[1] < 4096 <= prefixes[-1], "the conversation grows past Haiku's minimum"
    laid_out = [marks_messages(r) for r in requests]
    first = laid_out.index(True, 1)
    assert 2 <= first <= len(requests) - 4
    assert not any(laid_out[1:first]) and all(laid_out[first:])
    for usage, prefix in zip(usages[1:first], prefixes[1:first], strict=True):
        assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0
        assert prefix < 4096, "no breakpoints only while the prefix cannot reach the minimum"
    assert usages[first]["cache_creation_input_tokens"] >= 4096
    for usage in usages[first + 1 :]:  # each turn reads what the one before wrote, and pays its context
        assert usage["cache_read_input_tokens"] >= 4096
        assert usage["input_tokens"] < 200
    assert all(r["model"] == "claude-haiku-4-5" for r in requests)


def approx_prefix(request: dict[str, Any]) -> int:
    """The request's prompt up to its newest user message, before the context, as the fake counts it."""
    assert context_text(request)
    return sum(unit.tokens for unit in prefix_units(request)[:-1])
