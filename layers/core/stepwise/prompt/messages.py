"""The message list: the stored history window, this turn's tool rounds, cache breakpoints, then the turn's
context.

Breakpoints (with the system prompt's, three of the API's four): the end of the newest user message before its
context block, which caches everything stable in this call; and the end of the user message before the last
assistant message, which is exactly where the previous call put its own (the previous turn's user message for
a turn's first call, the previous round's user message for a tool round), so this call reads what that one
wrote. The context block comes after both and is never cached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.media.render import content_blocks
from stepwise.prompt.system import EPHEMERAL

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.model.blocks import MessageParam
    from stepwise.turn_records.models import ModelStep


def build_messages(
    history: Sequence[StoredMessage],
    steps: Sequence[ModelStep],
    context: str = "",
    files: Mapping[str, bytes | None] | None = None,
    breakpoints: bool = True,
) -> list[MessageParam]:
    """Alternating user/assistant messages for the Messages API, with cache breakpoints (unless
    `breakpoints` is False) and the context.

    Consecutive messages of one role (a turn whose model call failed leaves a lone user message) are merged
    into one message with several text blocks; leading assistant messages are dropped, since the list must
    start with the user. A photo or document is its file when `files` has it, else a line of text (see
    `stepwise.media.render`). Each completed tool round adds the assistant's tool_use and the user's
    tool_result.
    """
    messages: list[MessageParam] = []
    for stored in history:
        blocks = content_blocks(stored, files or {})
        if not blocks:
            continue
        if not messages and stored.role == "assistant":
            continue
        if messages and messages[-1]["role"] == stored.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": stored.role, "content": [*blocks]})
    for step in steps:
        if not step.tool_results:
            continue
        messages.append({"role": "assistant", "content": [*step.content]})
        messages.append({"role": "user", "content": [*step.tool_results]})
    if not messages or messages[-1]["role"] != "user":
        return messages
    for index in (len(messages) - 3, len(messages) - 1) if breakpoints else ():
        if index >= 0:
            mark_breakpoint(messages[index])
    if context.strip():
        last = messages[-1]
        last["content"] = [*last["content"], {"type": "text", "text": context}]
    return messages


def mark_breakpoint(message: MessageParam) -> None:
    """Put a cache breakpoint on the message's last block (on a copy: blocks may belong to a stored step)."""
    content = list(message["content"])
    marked = content[-1].copy()
    marked["cache_control"] = EPHEMERAL.copy()
    content[-1] = marked
    message["content"] = content
