"""How the offline model words a round of tool results.

Tool results are written for the model; `stepwise.offline.user_wording` turns them into sentences to the user
("There's no task #9 on your list", "You said no, so I didn't delete task #3"). A failed reminder or time
zone call says first what could not be done, then the tool's reason, so that an error is explained and never
hidden. Failures are marked ⚠️; a call the user said no to is not a failure and is not marked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepwise.offline.user_wording import declined, for_the_user

if TYPE_CHECKING:
    from stepwise.model.blocks import MessageParam, ToolResultBlock

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


def tool_names(messages: list[MessageParam]) -> dict[str, str]:
    """The tool name of each tool_use id in the assistant message that the newest results answer."""
    for message in messages[-2::-1]:  # newest first, but the results (mypy reads reversed() as Any here)
        if message["role"] == "assistant":
            return {block["id"]: block["name"] for block in message["content"] if block["type"] == "tool_use"}
    return {}


def tool_inputs(messages: list[MessageParam]) -> dict[str, dict[str, Any]]:
    """The input of each tool_use id in the assistant message that the newest results answer."""
    for message in messages[-2::-1]:  # newest first, but the results (mypy reads reversed() as Any here)
        if message["role"] == "assistant":
            return {
                block["id"]: block["input"] for block in message["content"] if block["type"] == "tool_use"
            }
    return {}


def phrase_results(
    results: list[ToolResultBlock], names: dict[str, str], inputs: dict[str, dict[str, Any]] | None = None
) -> str:
    """The user-facing text for a round of tool results; `names` and `inputs` map tool_use ids to the
    calls' tool names and arguments."""
    worded: list[ToolResultBlock] = []
    for block in results:
        call = block["tool_use_id"]
        name = names.get(call, "")
        failed = FAILED.get(name) if block["is_error"] else None
        chosen = declined(block["content"])  # the user's own No: said plainly, without a warning sign
        text = for_the_user(block["content"], name, (inputs or {}).get(call, {}), failed)
        if failed and name in HINTS:
            text = f"{text}\n{HINTS[name]}"
        worded.append({**block, "content": text, "is_error": block["is_error"] and not chosen})
    return summarize_results(worded)


def summarize_results(results: list[ToolResultBlock]) -> str:
    """The text of a round of tool results, one line each, failures marked; "Done." when it is empty."""
    lines = []
    for block in results:
        text = block["content"]
        lines.append(f"⚠️ {text}" if block["is_error"] else text)
    return "\n".join(lines) or "Done."
