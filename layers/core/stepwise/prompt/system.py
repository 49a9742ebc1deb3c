"""The system prompt: a stable part first (cacheable), then the per-turn part (time, memories)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

ROLE = """You are Stepwise, a personal assistant who lives in the user's Telegram.
Personality: warm, direct and practical. You keep answers short because they are read on a phone,
use plain language, and ask one clear question when a request is ambiguous. You never pretend to have
done something you did not do, and you say so when you do not know.
Formatting: Telegram shows basic Markdown (bold, italics, inline code, code blocks, links); avoid tables
and headings."""


@dataclass(frozen=True)
class ToolSummary:
    """What the prompt says about one tool."""

    name: str
    description: str
    needs_approval: bool = False


def tools_section(tools: Sequence[ToolSummary]) -> str:
    """The prompt's tools section; says so plainly when no tools are available."""
    if not tools:
        return (
            "## Tools\nNo tools are available in this conversation. Do not claim to save, look up or "
            "change anything: answer from the conversation and your own knowledge."
        )
    lines = [
        "## Tools",
        "You can use these tools. Call them rather than guessing; report what they returned.",
    ]
    for tool in tools:
        suffix = " (the user must approve each call before it runs)" if tool.needs_approval else ""
        lines.append(f"- {tool.name}: {tool.description}{suffix}")
    return "\n".join(lines)


def build_system_prompt(
    tools: Sequence[ToolSummary], now: datetime, per_turn: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """System blocks: the stable part (role, personality, tools) marked for caching, then the turn's part."""
    stable = f"{ROLE}\n\n{tools_section(tools)}"
    turn_lines = [f"## Now\nThe current date and time is {now.isoformat(timespec='seconds')}."]
    turn_lines.extend(section for section in per_turn if section.strip())
    return [
        {"type": "text", "text": stable, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "\n\n".join(turn_lines)},
    ]
