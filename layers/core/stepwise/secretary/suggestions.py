"""Suggested replies (issue 42, docs/secretary.md): at most one per contact's chat in an owner's account, the
one the owner's message shows with Send, Edit and Skip. A newer draft for the same chat takes its place (and
its message); the owner's tap, an answer in person, the wait running out or the connection stopping settle
it. The text is kept here, not in the turn: Edit replaces it, and Send sends what is kept when it runs.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, Protocol

# pending: shown, waiting for a tap; sending: Send pressed, the send not yet done; sent / not_sent /
# unconfirmed (an attempt may have sent it; it is never tried again): what came of it; skipped; expired (no
# answer in time); withdrawn (the owner answered in person, the connection stopped, or a newer draft took its
# place).
SuggestionStatus = Literal[
    "pending", "sending", "sent", "not_sent", "unconfirmed", "skipped", "expired", "withdrawn"
]
OPEN_STATUSES: frozenset[SuggestionStatus] = frozenset({"pending", "sending"})


class Suggestion(NamedTuple):
    """A suggested reply to a contact, and where it is shown."""

    owner_id: int
    chat_id: int  # the contact's chat in the owner's account (the contact's user id)
    connection_id: str
    contact: str  # the contact's first name
    wrote: str  # what the contact wrote, shortened to show
    text: str  # the reply to send (the owner's edit replaces the draft)
    approval_id: str  # the approval request its turn waits on
    turn_id: str
    message_id: int | None = None  # the owner's message that shows it
    status: SuggestionStatus = "pending"
    created_at: str = ""


class SuggestionStore(Protocol):
    """Suggestions by owner and contact's chat, and the Edit prompts the owner replies to. Implementations:
    DynamoDB (SecretaryTable) and in memory."""

    def get(self, owner_id: int, chat_id: int) -> Suggestion | None:
        """The chat's suggestion (pending or settled), or None."""
        ...

    def of_owner(self, owner_id: int) -> list[Suggestion]:
        """Every kept suggestion of the owner's chats (pending or settled), in no particular order."""
        ...

    def put(self, suggestion: Suggestion) -> None:
        """Keep it as the chat's suggestion (a newer draft replaces the older one)."""
        ...

    def settle(
        self,
        owner_id: int,
        chat_id: int,
        approval_id: str,
        status: SuggestionStatus,
        expected: frozenset[SuggestionStatus] = OPEN_STATUSES,
    ) -> bool:
        """Set the status of the chat's suggestion for `approval_id` if its status is one of `expected`: True
        when this call changed it."""
        ...

    def revise(
        self, owner_id: int, chat_id: int, approval_id: str, text: str, message_id: int | None
    ) -> bool:
        """Replace the pending suggestion's text (the owner's edit) and, when given, the message that shows
        it: True when it was still pending."""
        ...

    def show_in(self, owner_id: int, chat_id: int, approval_id: str, message_id: int) -> None:
        """Record the owner's message that shows the suggestion."""
        ...

    def put_edit_prompt(self, owner_id: int, prompt_message_id: int, chat_id: int, approval_id: str) -> None:
        """Remember that the bot's message `prompt_message_id` asked the owner for their own text."""
        ...

    def edit_prompt(self, owner_id: int, prompt_message_id: int) -> tuple[int, str] | None:
        """The (contact's chat, approval id) the prompt asked about, or None."""
        ...

    def note_over_budget(self, owner_id: int, day: str, contact: str) -> tuple[list[str], int | None]:
        """Note that `contact` wrote on `day` (the owner's, ISO) past the owner's daily budget: everyone noted
        that day, sorted, and the id of the owner's message that says so (None: not sent yet)."""
        ...

    def set_budget_message(self, owner_id: int, day: str, message_id: int) -> None:
        """Record the owner's message that says the day's budget is spent."""
        ...
