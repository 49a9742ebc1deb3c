"""The "typing…" indicator a message gets on arrival: the webhook asks Telegram for it in its HTTP answer
(no request of its own, before any turn's state has started), and LoadContext does not send it again while it
still shows.

Telegram runs a Bot API method given in the answer to a webhook request ("Making requests when getting
updates" in the Bot API's documentation) without telling the bot whether it worked: good enough for an
indicator that lasts about five seconds.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from stepwise.telegram.commands import is_command

if TYPE_CHECKING:
    from stepwise.inbox.models import QueuedMessage

# Telegram shows a chat action for about 5 s; a turn that takes its batch later than this shows it again.
STILL_SHOWN = timedelta(seconds=4)


def typing_on_arrival(message: QueuedMessage) -> bool:
    """Whether the webhook shows "typing…" for this message: a user's text, photo, document or voice note
    that the model will answer (not a slash command, nor an attachment it cannot take)."""
    attachment = message.attachment
    return (
        message.typed
        and not is_command(message.text)
        and (attachment is None or attachment.taken)
        and bool(message.text.strip() or attachment is not None)
    )


def typing_still_shown(batch: list[QueuedMessage], now: datetime) -> bool:
    """True when every message of the batch got "typing…" on arrival and the newest arrived less than
    `STILL_SHOWN` ago: the indicator is on screen already."""
    if not batch or not all(typing_on_arrival(m) for m in batch):
        return False
    newest = max(datetime.fromisoformat(m.received_at) for m in batch)
    return now - newest < STILL_SHOWN
