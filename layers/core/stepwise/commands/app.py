"""`/app`: a button that opens the Mini App (docs/app.md), the page that shows and changes what Stepwise holds
for the user. Inline `web_app` buttons work in private chats only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import WithAppButton

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest

OPEN = "Open Stepwise"


def app(request: CommandRequest) -> str | WithAppButton:
    """The button, in the private chat; a plain answer elsewhere or where the page is not deployed."""
    services, meta = request.services, request.meta
    if not services.settings.deployment.app_url:
        return "The Mini App is not deployed here."
    if meta.chat_id != meta.user_id:
        return "The Mini App opens from our private chat: send /app there."
    return WithAppButton(
        text="Your tasks, reminders, memories, approvals and usage, on one page: tap the button below.",
        button=OPEN,
        url=services.settings.deployment.app_url,
    )
