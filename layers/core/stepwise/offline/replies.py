"""How the offline model words a round of tool results.

Tool results are written for the model; `stepwise.offline.user_wording` turns them into sentences to the user
("There's no task #9 on your list", "You said no, so I didn't delete task #3"). A failed reminder or time
zone call says first what could not be done, then the tool's reason, so that an error is explained and never
hidden. Failures are marked ⚠️; a call the user said no to is not a failure and is not marked.
"""

from __future__ import annotations

from typing import Any

from stepwise.offline.user_wording import declined, for_the_user

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


def tool_inputs(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The input of each tool_use id in the assistant message that the newest results answer."""
    for message in reversed(messages[:-1]):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            return {
                str(block.get("id")): dict(block.get("input") or {})
                for block in message["content"]
                if block.get("type") == "tool_use"
            }
    return {}


def phrase_results(
    results: list[dict[str, Any]], names: dict[str, str], inputs: dict[str, dict[str, Any]] | None = None
) -> str:
    """The user-facing text for a round of tool results; `names` and `inputs` map tool_use ids to the
    calls' tool names and arguments."""
    worded = []
    for block in results:
        call = str(block.get("tool_use_id"))
        name = names.get(call, "")
        content = block.get("content", "")
        text = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)
        failed = FAILED.get(name) if block.get("is_error") else None
        chosen = declined(text)  # the user's own No: said plainly, without a warning sign
        text = for_the_user(text, name, (inputs or {}).get(call, {}), failed)
        if failed and name in HINTS:
            text = f"{text}\n{HINTS[name]}"
        worded.append({**block, "content": text, "is_error": block.get("is_error") and not chosen})
    return summarize_results(worded)


def summarize_results(results: list[dict[str, Any]]) -> str:
    """The text of a round of tool results, one line each, failures marked; "Done." when it is empty."""
    lines = []
    for block in results:
        content = block.get("content", "")
        text = content if isinstance(content, str) else " ".join(c.get("text", "") for c in content)
        lines.append(f"⚠️ {text}" if block.get("is_error") else text)
    return "\n".join(lines) or "Done."
