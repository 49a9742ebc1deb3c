"""`/new [title]`: a new conversation, as a topic of the private chat (or of a group that is a forum;
docs/topics.md). The topic is opened when FinishTurn sends the answer, which goes inside it
(`states.topics.open_topic`); where Telegram opens none, the answer says so instead."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest

DEFAULT_NAME = "New chat"
MAX_NAME = 128  # Telegram: a topic's name has 1-128 characters
THREADS_OFF = (
    "Topics are off for this bot, so /new can't open one: its owner turns them on in @BotFather → the bot → "
    "Bot Settings → Threads Settings."
)
NOT_A_FORUM = (
    "This group has no topics, so /new opened none: a group admin can turn on Topics in its settings."
)


class OpensTopic(NamedTuple):
    """An answer that opens a topic named `name` and is sent inside it; the history of the conversation where
    /new was written keeps `kept`. `named`: the user gave the name (else its first answer renames it)."""

    text: str
    kept: str
    name: str
    named: bool


def new_topic(request: CommandRequest) -> str | OpensTopic:
    """Open a topic (named after the arguments, or "New chat"), or say in one line how to turn topics on."""
    services = request.services
    title = " ".join(request.args.split())[:MAX_NAME].strip()
    name = title or DEFAULT_NAME
    if not request.meta.scope.in_group and not services.outbound.bot_info.topics_enabled(
        services.outbound.telegram()
    ):
        return THREADS_OFF
    opening = f"New chat: “{name}”." if title else "A new chat."
    return OpensTopic(
        text=f"{opening} What shall we talk about? Everything here stays in this topic.",
        kept=f"(Opened a new topic, “{name}”.)",
        name=name,
        named=bool(title),
    )
