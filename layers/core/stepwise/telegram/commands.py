"""Reading a Telegram bot command out of a message: `/name`, `/name@BotName`, `/name arguments`."""

import re
from typing import NamedTuple

# Telegram's command names: 1-32 letters, digits and underscores; a username may follow after "@".
_COMMAND = re.compile(
    r"/(?P<name>[A-Za-z0-9_]{1,32})(?:@(?P<bot>[A-Za-z0-9_]{1,64}))?(?:\s+(?P<args>.*))?", re.S
)


class ParsedCommand(NamedTuple):
    """A command's name (lowercase, without the slash or the bot's username) and the text after it."""

    name: str
    args: str = ""


def parse_command(text: str) -> ParsedCommand | None:
    """The command the message is, or None when it is not one (`/path/to/x` and `/ hi` are not commands)."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return ParsedCommand(match["name"].lower(), (match["args"] or "").strip())


def command_target(text: str) -> str | None:
    """The bot a command names after "@" (`/tasks@stepwise_bot`: "stepwise_bot"), "" for a command that names
    none (`/tasks`), None when the text is not a command."""
    match = _COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return match["bot"] or ""


def is_command(text: str) -> bool:
    """Whether the message is a slash command (a command is always a turn of its own)."""
    return parse_command(text) is not None
