"""A model call's prompt: the cached prefix (tools, system, stable history), then the per-turn part."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from stepwise.history.models import StoredMessage
from stepwise.model.blocks import MessageParam, TextBlock
from stepwise.prompt.messages import build_messages
from stepwise.prompt.system import ToolSummary, build_system_prompt, turn_context
from stepwise.turn_records.models import ModelStep


class Prompt(NamedTuple):
    """The `system` and `messages` of one request."""

    system: list[TextBlock]
    messages: list[MessageParam]


def build_prompt(
    tools: Sequence[ToolSummary],
    now: datetime,
    history: Sequence[StoredMessage],
    rounds: Sequence[ModelStep],
    per_turn: Sequence[str] = (),
    files: Mapping[str, bytes | None] | None = None,
    persona: str = "",
    cache_history: bool = True,
    skills: str = "",
    web: tuple[bool, bool] = (False, False),
) -> Prompt:
    """The byte-stable system prompt and the history with its breakpoints (none on the messages without
    `cache_history`: see `stepwise.prompt.caching`); the time and `per_turn` sections go last, in the newest
    user message. `files`: the bytes of the photos and documents this call shows; `persona` and `skills`
    (the skills' names and descriptions) go into the system prompt, and `web` (search, fetch) what it says
    about web access."""
    context = turn_context(now, per_turn)
    return Prompt(
        system=build_system_prompt(tools, persona, skills, web),
        messages=build_messages(history, rounds, context=context, files=files, breakpoints=cache_history),
    )
