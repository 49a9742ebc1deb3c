"""The command table: every command's name, its line in Telegram's command menu, and its answer.

`make webhook` registers the menu from here (setMyCommands), LoadContext routes and answers commands
with it, so a command added here is answered, listed by /help and shown in the menu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from stepwise.commands import handlers
from stepwise.commands.accounts import accounts
from stepwise.commands.app import app
from stepwise.commands.connect import connect
from stepwise.commands.handlers import CommandRequest, ShownOnce, WithAppButton, WithLinks
from stepwise.commands.jobs import jobs
from stepwise.commands.new_topic import OpensTopic, new_topic
from stepwise.commands.secretary import secretary
from stepwise.commands.voice import voice
from stepwise.telegram.commands import parse_command

Handling = Literal["answer", "rules"]  # by the table, or by the offline rules model


@dataclass(frozen=True)
class Command:
    """One command. With `rules_with_arguments`, the command with arguments goes to the offline rules model,
    which calls a tool (`/timezone Europe/Lisbon` calls set_timezone, approvals and audit included)."""

    name: str
    description: str  # Telegram's menu: 1-256 characters
    answer: Callable[[CommandRequest], str | ShownOnce | OpensTopic | WithAppButton | WithLinks]
    in_menu: bool = True
    rules_with_arguments: bool = False
    personal: bool = False  # about one person: in a group it points to the private chat and does nothing


def start(request: CommandRequest) -> str:
    return (
        "Hi, I'm Stepwise, your assistant. Write to me as you would to a person:\n"
        "- tasks: “add buy milk”, “what's on my list”, “done 1”\n"
        "- reminders and check-ins: “remind me at 5pm to call mom”, "
        "“every morning at 8 send me my open tasks”\n"
        "- memory: “remember that I take my coffee black”\n"
        "- voice notes: speak instead of typing; /voice on and I answer aloud too\n"
        "Changes that cannot be undone wait for your Approve.\n\n" + command_lines()
    )


def help_text(request: CommandRequest) -> str:
    return "Just write to me in your own words, or use a command:\n" + command_lines()


COMMANDS: tuple[Command, ...] = (
    Command("start", "What Stepwise can do", start, in_menu=False),
    Command("help", "The commands", help_text),
    Command("tasks", "Your tasks", handlers.tasks),
    Command("reminders", "Your reminders and check-ins", handlers.reminders),
    Command("memory", "What I remember about you", handlers.memory),
    Command("jobs", "Your background jobs; /jobs stop 3 stops one", jobs, personal=True),
    Command("skills", "The skills I can use (weekly review, trip planning…)", handlers.skills),
    Command("new", "A new conversation in a topic of its own; /new Trip plans names it", new_topic),
    Command("reset", "Start a fresh conversation (nothing is deleted)", handlers.reset),
    Command("usage", "Your usage and spend", handlers.usage, personal=True),
    Command("voice", "Spoken answers to voice notes; /voice on or /voice off", voice, personal=True),
    Command(
        "timezone",
        "Your time zone; /timezone Europe/Lisbon sets it",
        handlers.timezone,
        rules_with_arguments=True,
        personal=True,
    ),
    Command("connect", "Tokens for your MCP clients; /connect laptop makes one", connect, personal=True),
    Command(
        "accounts",
        "Your accounts at outside servers (calendar, notes…): connect or disconnect",
        accounts,
        personal=True,
    ),
    Command("app", "Your assistant at a glance: the Mini App", app),
    Command(
        "secretary",
        "Suggested replies to people who write to your Telegram account; /secretary off, on, mute <name>",
        secretary,
        personal=True,
    ),
)
_BY_NAME = {command.name: command for command in COMMANDS}


def find(name: str) -> Command | None:
    return _BY_NAME.get(name)


def command_lines() -> str:
    """One line per command of the menu, as /help shows them."""
    return "\n".join(f"/{c.name} — {c.description}" for c in COMMANDS if c.in_menu)


def menu() -> list[dict[str, str]]:
    """The `commands` parameter of setMyCommands (BotCommand objects)."""
    return [{"command": c.name, "description": c.description} for c in COMMANDS if c.in_menu]


def route(text: str, in_group: bool = False) -> Handling | None:
    """How a message is answered: "answer" (by the table, no model), "rules" (by the offline rules model,
    which calls a tool), or None when it is not a command. In a group a command about one person is
    answered by the table, which points to the private chat (`/timezone Europe/Lisbon` changes nothing)."""
    parsed = parse_command(text)
    if parsed is None:
        return None
    command = find(parsed.name)
    if command is None or (command.personal and in_group):
        return "answer"
    if command.rules_with_arguments and parsed.args:
        return "rules"
    return "answer"


def unknown(name: str) -> str:
    known = " ".join(f"/{c.name}" for c in COMMANDS if c.in_menu)
    return f"I don't know /{name}. The commands are: {known}"


def answer(
    text: str, request_for: Callable[[str], CommandRequest]
) -> str | ShownOnce | OpensTopic | WithAppButton | WithLinks:
    """The answer to a command message; `request_for(args)` builds the request its handler gets."""
    parsed = parse_command(text)
    if parsed is None:
        raise ValueError(f"not a command: {text!r}")
    command = find(parsed.name)
    if command is None:
        return unknown(parsed.name)
    request = request_for(parsed.args)
    if command.personal and request.meta.scope.in_group:
        return in_private(command.name)
    return command.answer(request)


def in_private(name: str) -> str:
    """A group's answer to a command about one person (docs/groups.md): where to ask instead."""
    return f"/{name} is about you alone: ask me in our private chat (open my profile and tap Message)."
