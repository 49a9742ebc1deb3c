"""How an approval says who asks and what for, in one way for every source (the chat's own model, a background
job, the user's MCP client, a check-in): the request before the tap ("Background job #1 “Tidy up” asks to
delete task #4 “old plan”."), the line that tells what came of it ("… asked to delete …"), the line that
says why a call was refused without asking (`not_shown`), and who set a reminder ("set by your MCP client
“laptop”").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.approvals.arguments import escaped

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.approvals.models import Requester

MAX_NAME = 60  # a job's title or a check-in's instruction, as the request names it


def requester_name(requester: Requester, chat_name: str | None = None) -> str:
    """Who asks, as the subject of a sentence: "The assistant in this chat", "Background job #1 “Tidy up”",
    "Your MCP client “laptop”", "Your check-in #2 “review my week”". Outside the chat (the Mini App),
    `chat_name` says which chat the assistant asks in ("The assistant in the group “Family”")."""
    name = _short(requester.name)
    number = f" #{requester.number}" if requester.number is not None else ""
    if requester.kind == "job":
        return f"Background job{number} “{name}”"
    if requester.kind == "mcp_client":
        return f"Your MCP client “{name}”"
    if requester.kind == "checkin":
        return f"Your check-in{number} “{name}”"
    if requester.kind == "secretary":
        return "Your secretary"
    return f"The assistant in {escaped(chat_name) if chat_name else 'this chat'}"


def set_by(requester: Requester) -> str:
    """Who set a reminder or check-in, as /reminders says it: "set in this chat", "set by background job #1
    “Tidy up”", "set by your MCP client “laptop”", "set by your check-in #2 “review my week”"."""
    if requester.kind == "chat":
        return "set in this chat"
    name = requester_name(requester)
    return f"set by {name[0].lower()}{name[1:]}"


def in_sentence(description: str) -> str:
    """A tool's description ("Delete task #1 “milk”.") as the rest of a sentence ("delete task #1 “milk”"):
    without its final stop, and its first word in lower case when it is an ordinary capitalised word (an
    acronym such as "MCP", or a tool's name, stays as it is)."""
    text = description.strip().rstrip(".").rstrip()
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].isalpha() and first[1:].islower():
        return first[0].lower() + text[1:]
    return text


def asks(
    requester: Requester, descriptions: Sequence[str], *, asked: bool = False, chat_name: str | None = None
) -> str:
    """The sentence that says who asks to do what ("… asks to delete task #4 “old plan”."); with `asked`, in
    the past, as the line after the answer; with `chat_name`, naming the chat (see `requester_name`). Several
    calls are listed one a line."""
    verb = "asked to" if asked else "asks to"
    who = requester_name(requester, chat_name)
    clauses = [in_sentence(description) for description in descriptions]
    if len(clauses) == 1:
        stop = "" if "\n" in clauses[0] else "."  # arguments listed a line each end with the last value
        return f"{who} {verb} {clauses[0]}{stop}"
    return f"{who} {verb}:\n" + "\n".join(f"• {clause}" for clause in clauses)


def not_shown(requester: Requester, tools: Sequence[str]) -> str:
    """The one line the chat gets instead of a request that cannot be shown whole: who wanted to call what
    (each tool once, with how many calls), and that it was refused without asking."""
    counts = {tool: tools.count(tool) for tool in tools}
    named = ", ".join(escaped(tool) + (f" ({n} calls)" if n > 1 else "") for tool, n in counts.items())
    whose = "its" if len(tools) == 1 else "their"
    return (
        f"🔐 Not asked, refused: {requester_name(requester)} wanted to call {named}, but {whose} arguments "
        "cannot all be shown in one approval request, and nothing is approved unseen. Nothing was done."
    )


def _short(text: str) -> str:
    """One line of at most MAX_NAME characters, its bidi and other controls escaped (never cut in two)."""
    one_line = escaped(" ".join(text.split()))
    if len(one_line) <= MAX_NAME:
        return one_line
    words = " ".join(text.split())
    keep = MAX_NAME - 1
    while len(escaped(words[:keep])) > MAX_NAME - 1:
        keep -= 1
    return escaped(words[:keep]).rstrip() + "…"
