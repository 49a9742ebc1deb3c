"""Tool results reworded for the user, for the offline model, which has no language model to do it.

Tool results are written for the model ("There is no task #99 on the user's list", "Denied by the user;
nothing was changed", "Invalid arguments for add_task: title: String should have at most 200 characters").
The offline model passes them on, so here they become sentences to the user: "There's no task #99 on your
list", "You said no, so I didn't delete task #3. Nothing was changed.", "I couldn't add that task: the title
should have at most 200 characters."
"""

from __future__ import annotations

import re
from typing import Any

# What a call would have done, for "I didn't …" and "I couldn't …".
ACTIONS = {
    "add_task": "add that task",
    "list_tasks": "list your tasks",
    "get_task": "show that task",
    "update_task": "change task #{task_id}",
    "complete_task": "complete task #{task_id}",
    "delete_task": "delete task #{task_id}",
    "remember": "remember that",
    "recall": "search your memories",
    "forget": "forget that memory",
    "set_reminder": "set that reminder",
    "list_reminders": "read your reminders",
    "cancel_reminder": "cancel that reminder",
    "set_timezone": "change your time zone",
}
FIELDS = {
    "title": "the title",
    "description": "the description",
    "due": "the due time",
    "task_id": "the task number",
    "status": "the status",
    "text": "the reminder's text",
    "at": "the time",
    "in_minutes": "the delay",
    "repeat": "the repetition",
    "reminder_id": "the reminder number",
    "timezone": "the time zone",
    "fact": "the fact",
    "query": "the search",
    "memory_id": "the memory",
}
_NO_TASK = re.compile(r"there is no task #(?P<n>\d+)(?: on the user's list|: task numbers run .*)?\.?$", re.I)
_DENIED = re.compile(r"^Denied by the user\b", re.I)
_EXPIRED = re.compile(r"did not answer the approval request in time", re.I)
_UNAVAILABLE = re.compile(r"^Approval could not be requested", re.I)
_INVALID = re.compile(r"^Invalid arguments for (?P<tool>\w+): (?P<problems>.+)$", re.S)
# The line an outside server's result starts with (stepwise.remote_tools.results.marker).
_OUTSIDE_MARKER = re.compile(r"\A\[Result of the outside MCP server “[^”]*”\.[^\]\n]*\]\n")
_UNKNOWN = re.compile(r"^Unknown tool ")
_NOT_RUN = re.compile(r"^Not run: this turn reached its limit of (?P<n>\d+) tool rounds\.?$")
_CRASHED = re.compile(r"^The (?P<tool>\w+) tool failed unexpectedly")
_GENERIC = [
    (re.compile(r"^There is no reminder #(?P<n>\d+) for this user\.?$"), r"There's no reminder #\g<n>."),
    (re.compile(r"^There is no memory (?P<id>\S+) for this user\.?$"), r"I have no memory \g<id>."),
    (
        re.compile(r"^The user has (?P<n>\d+) reminders, the most allowed; cancel one first\.?$"),
        r"You have \g<n> reminders, the most allowed: cancel one first.",
    ),
    (re.compile(r"\(the user's time zone\)"), "(your time zone)"),
    (re.compile(r"\bthe user's\b"), "your"),
    (re.compile(r"\bThe user's\b"), "Your"),
    (re.compile(r"\bthe user\b"), "you"),
    (re.compile(r"\bThe user\b"), "You"),
    (re.compile(r" for this user\b"), ""),
]
NO_TASK_LEAD = "there's no task #"
_LEADING_TYPE = re.compile(r"^(?:String|Input|Value|Input should be a valid \w+ and)\s+", re.I)


def action(name: str, args: dict[str, Any]) -> str:
    """What the call `name(args)` does, in words ("delete task #3"); "do that" for an unknown tool."""
    template = ACTIONS.get(name, "do that")
    try:
        return template.format(**args) if "{" in template else template
    except (KeyError, IndexError, ValueError):
        return re.sub(r" #\{\w+\}", "", template).replace("task", "that task", 1)


def problem(location: str, message: str) -> str:
    """One pydantic problem ("title: String should have at most 200 characters") as words."""
    field = FIELDS.get(location.split(".")[0], "the request" if location in ("", "input") else location)
    message = message.removeprefix("Value error, ").strip()
    no_task = _NO_TASK.match(message)
    if no_task:
        return f"there's no task #{no_task.group('n')}"
    if message == "Field required":
        return f"{field} is missing"
    if message == "Extra inputs are not permitted":
        return f"{field} is not something I can set"
    if _LEADING_TYPE.match(message):
        rest = _LEADING_TYPE.sub("", message)
        return f"{field} {rest[0].lower()}{rest[1:]}" if rest else field
    return f"{field}: {message[0].lower()}{message[1:]}" if message else field


def invalid(problems: str, name: str, args: dict[str, Any]) -> str:
    """ "Invalid arguments for …" as "I couldn't …: …", or "There's no task #N on your list." alone."""
    parts = [part.split(": ", 1) for part in problems.split("; ")]
    worded = [problem(*part) if len(part) == 2 else problem("", part[0]) for part in parts]
    if len(worded) == 1 and worded[0].startswith("there's no task #"):
        return f"There's no task #{worded[0].removeprefix(NO_TASK_LEAD)} on your list."
    return f"I couldn't {action(name, args)}: {'; '.join(worded)}."


def declined(text: str) -> bool:
    """Whether `text` is the result of a call the user said no to: their choice, not a failure."""
    return _DENIED.search(text.strip()) is not None


def for_the_user(text: str, name: str, args: dict[str, Any], failed: str | None = None) -> str:
    """`text`, a tool result for `name(args)`, as the user should read it. `failed` is how a failure of
    this tool starts ("I couldn't set that reminder"), if it has such a lead."""
    text = _OUTSIDE_MARKER.sub("", text.strip(), count=1)  # the model's warning, not the user's
    what = action(name, args)
    if _DENIED.search(text):
        return f"You said no, so I didn't {what}. Nothing was changed."
    if _EXPIRED.search(text):
        return f"No answer came in time, so I didn't {what}. Nothing was changed."
    if _UNAVAILABLE.search(text):
        return f"I couldn't ask for your approval, so I didn't {what}. Nothing was changed."
    invalid_args = _INVALID.match(text)
    if invalid_args:
        return invalid(invalid_args.group("problems"), invalid_args.group("tool"), args)
    if _UNKNOWN.match(text):
        return "I can't do that here."
    not_run = _NOT_RUN.match(text)
    if not_run:
        return (
            f"I stopped before this one: one message can run at most {not_run.group('n')} rounds of actions."
        )
    if _CRASHED.match(text):
        return f"Something went wrong while I tried to {what}; please try again."
    no_task = _NO_TASK.match(text)
    if no_task:
        return f"There's no task #{no_task.group('n')} on your list."
    for pattern, replacement in _GENERIC:
        text = pattern.sub(replacement, text)
    if failed:
        return f"{failed}: {text}" if text else f"{failed}."
    return text
