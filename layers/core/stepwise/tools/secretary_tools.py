"""send_reply: the step a secretary turn makes of its draft (issue 42, docs/secretary.md). It waits for the
owner's tap like any call that needs approval (Send approves it, Skip denies it), then sends the suggestion
as kept (the owner's edit, if any) to the contact's chat through the business connection, at most once
(`secretary.sending`). It is never offered to the model (`Tool.offered`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from stepwise.secretary.sending import (
    AlreadySent,
    BusinessReply,
    FailedForNow,
    InProgress,
    Refused,
    Sent,
    Unconfirmed,
    send_suggestion_once,
)
from stepwise.tools.registry import EffectIncomplete, Tool, ToolContext, ToolError

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.ledger.store import ToolCallLedger
    from stepwise.secretary.connections import BusinessConnectionStore
    from stepwise.secretary.suggestions import SuggestionStore
    from stepwise.telegram.client import TelegramClient
    from stepwise.tools.registry import ToolRegistry

SEND_REPLY = "send_reply"
REPLACED = "Not sent: a newer suggestion for this chat took this one's place."
WITHDRAWN = "Not sent: the suggestion was withdrawn."
CONNECTION_OFF = "Not sent: secretary mode is off for this account (the connection was disabled)."
UNCONFIRMED = (
    "Not sent again: an earlier attempt may have sent it, and whether it did could not be confirmed."
)


class SendReplyInput(BaseModel):
    """The draft, as the turn made it (what is sent is the suggestion as kept when Send is tapped)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    text: str = Field(min_length=1)


def send_reply(
    suggestions: SuggestionStore,
    connections: BusinessConnectionStore,
    ledger: ToolCallLedger,
    telegram: Callable[[], TelegramClient],
    context: ToolContext,
    args: SendReplyInput,
) -> str:
    """Send the chat's kept suggestion once; its status says what came of it (the turn's finish shows it)."""
    owner, chat = context.scope.owner, context.scope.conversation.chat_id
    kept = suggestions.get(owner, chat)
    if kept is None or kept.turn_id != context.turn_id:
        raise ToolError(REPLACED)
    if kept.status == "sent":  # a retried run after the outcome was kept
        return f"Sent to {kept.contact}."
    if kept.status in ("not_sent", "unconfirmed"):
        raise ToolError(UNCONFIRMED if kept.status == "unconfirmed" else "Not sent.")
    if not suggestions.settle(owner, chat, kept.approval_id, "sending"):
        raise ToolError(WITHDRAWN)
    connection = connections.get(kept.connection_id)
    if connection is None or not connection.active:
        suggestions.settle(owner, chat, kept.approval_id, "not_sent")
        raise ToolError(CONNECTION_OFF)
    reply = BusinessReply(
        key=kept.approval_id, connection_id=kept.connection_id, chat_id=chat, text=kept.text
    )
    match send_suggestion_once(ledger, telegram(), reply):
        case Sent() | AlreadySent():
            suggestions.settle(owner, chat, kept.approval_id, "sent")
            return f"Sent to {kept.contact}."
        case Refused() as refused:
            suggestions.settle(owner, chat, kept.approval_id, "not_sent")
            raise ToolError(f"Not sent: {refused.words}.")
        case Unconfirmed():
            suggestions.settle(owner, chat, kept.approval_id, "unconfirmed")
            raise ToolError(UNCONFIRMED)
        case FailedForNow() | InProgress():  # nothing sent: the state is retried (within the attempts left)
            raise EffectIncomplete("the suggestion could not be sent now")


def describe_send(context: ToolContext, args: SendReplyInput, room: int) -> str:
    return f"send the suggested reply: {args.text}"


# Read-only tools a secretary turn does not get either: the owner's skills are instructions for their chats.
NOT_FOR_SECRETARY = frozenset({"use_skill"})


def secretary_registry(built_in: ToolRegistry, send: Tool[SendReplyInput]) -> ToolRegistry:
    """A secretary turn's tools: the built-in ones that only read the owner's data, and send_reply."""
    return built_in.read_only().without(NOT_FOR_SECRETARY).with_tools([send])


def send_reply_tool(
    suggestions: SuggestionStore,
    connections: BusinessConnectionStore,
    ledger: ToolCallLedger,
    telegram: Callable[[], TelegramClient],
) -> Tool[SendReplyInput]:
    """The tool, bound to what it needs."""

    def run(context: ToolContext, args: SendReplyInput) -> str:
        return send_reply(suggestions, connections, ledger, telegram, context, args)

    return Tool(
        SEND_REPLY,
        "Send the suggested reply to the contact, in the owner's name.",
        SendReplyInput,
        run,
        needs_approval=True,
        describe=describe_send,
        destructive=True,  # a message in the owner's name cannot be unsent
        offered=False,
    )
