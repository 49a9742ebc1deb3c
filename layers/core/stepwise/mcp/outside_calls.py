"""An MCP client's call that needs the user's approval: it becomes a message in the user's chat inbox (kind
`outside_call`), answered in turn like a reminder. Its turn shows the Approve / Deny buttons, runs the call
once when approved (nothing when denied or unanswered) and tells the chat what happened; the client is told
at once that approval was requested (`ASKED`).
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepwise.inbox.models import QueuedMessage, outside_update_id
from stepwise.inbox.outside_call import OutsideCall
from stepwise.turn.ids import iso_utc

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from stepwise.connections.models import Connection
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.tools.registry import ToolContext

logger = logging.getLogger(__name__)

ASKED = (
    "Approval requested in Telegram: {description}. Nothing has changed yet: the call runs once the user "
    "taps Approve (and not at all if they deny it or do not answer), and the chat will say what happened."
)


def outside_note(call: OutsideCall) -> str:
    """How the call is kept in the chat's history, as the user-side message of its turn."""
    return f"(My MCP client “{call.connection}” asked to run {call.tool}: {call.description}.)"


@dataclass(frozen=True)
class AskInTelegram:
    """The `AskApproval` of the /mcp endpoint: queue the call in the chat of the call's scope (the connection
    owner's private chat: `stepwise.mcp.endpoint`)."""

    connection: Connection
    sequencer: Callable[[], Sequencer]
    clock: Callable[[], datetime]
    new_id: Callable[[], str]

    def __call__(self, context: ToolContext, tool: str, arguments: dict[str, Any], description: str) -> str:
        call = OutsideCall(
            tool=tool, arguments=arguments, connection=self.connection.name, description=description
        )
        now = self.clock()
        message = QueuedMessage(
            chat_id=context.scope.conversation.chat_id,
            update_id=outside_update_id(int(now.timestamp()), secrets.randbelow(10**8)),
            user_id=context.scope.user_id,
            id=self.new_id(),
            text=outside_note(call),
            received_at=iso_utc(now),
            kind=call,
        )
        admitted = self.sequencer().admit(message)
        logger.info("outside call waits for approval", extra={"tool": tool, "admitted": admitted})
        return ASKED.format(description=description.rstrip("."))
