"""How the offline model words a round of tool results.

The tools already speak plainly, so what they return passes through. A failed reminder or time zone call
says first what could not be done, then the tool's reason, so that an error is explained and never hidden.
"""

from __future__ import annotations

from typing import Any

from stepwise.model.rules import summarize_results

FAILED = {
    "set_reminder": "I couldn't set that reminder",
    "list_reminders": "I couldn't read your reminders",
    "cancel_reminder": "I couldn't cancel that reminder",
    "set_timezone": "I couldn't change your time zone",
}
HINTS = {
    "set_timezone": "Send its name from the time zone database, like /timezone Europe/Lisbon or "
    "/timezone America/New_York.",
}


def tool_names(messages: list[dict[str, Any]]) -> dict[str, str]:
    """The tool name of each tool_use id in the assistant message that the newest results answer."""
    for message in reversed(messages[:-1]):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            return {
                str(block.get("id")): str(block.get("name"))
                for block in message["content"]
                if block.get("type") == "tool_use"
            }
    return {}


def phrase_results(results: list[dict[str, Any]], names: dict[str, str]) -> str:
    """The user-facing text for a round of tool results; `names` maps tool_use ids to tool names."""
    worded = []
    for block in results:
        name = names.get(str(block.get("tool_use_id")), "")
        if block.get("is_error") and name in FAILED:
            content = block.get("content", "")
            reason = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)
            reason = reason.strip()
            text = f"{FAILED[name]}: {reason}" if reason else f"{FAILED[name]}."
            if name in HINTS:
                text = f"{text}\n{HINTS[name]}"
            block = {**block, "content": text}
        worded.append(block)
    return summarize_results(worded)
