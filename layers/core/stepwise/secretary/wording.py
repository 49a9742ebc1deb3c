"""What the owner sees of a suggested reply (issue 42): the message with what the contact wrote and the
suggestion, its buttons (Send, Edit, Skip), and how it reads once settled. HTML, escaped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.telegram.html_escape import escape_html
from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup

if TYPE_CHECKING:
    from stepwise.secretary.suggestions import Suggestion

MAX_WROTE_SHOWN = 400  # what the contact wrote, as the owner's message quotes it
MAX_REPLY_CHARS = 3000  # a suggestion longer than this is cut: what is sent is always what was shown whole
EDIT_DATA = "se:{approval_id}"  # the Edit button's callback data (Send and Skip are the approval's a / d)


def shortened(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a word with "…" when longer."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut.rstrip() + "…"


def wait_words(seconds: int) -> str:
    hours = max(1, round(seconds / 3600))
    return f"{hours} hour{'s' if hours != 1 else ''}"


def suggestion_html(suggestion: Suggestion, wait_seconds: int, note: str = "") -> str:
    """The owner's message: who wrote what, the suggested reply, and what silence means."""
    lines = [
        f"✉️ <b>{escape_html(suggestion.contact or 'Someone')} wrote:</b>",
        f"<blockquote>{escape_html(suggestion.wrote)}</blockquote>",
        "<b>Suggested reply:</b>",
        f"<blockquote>{escape_html(suggestion.text)}</blockquote>",
    ]
    if note:
        lines.append(f"<i>{escape_html(note)}</i>")
    wait = wait_words(wait_seconds)
    lines.append(f"<i>Nothing is sent without your tap; no answer within {wait}: nothing is sent.</i>")
    return "\n".join(lines)


def suggestion_keyboard(approval_id: str) -> InlineKeyboardMarkup:
    """Send / Edit / Skip: Send and Skip answer the approval request (`ap:<id>:a|d`), Edit asks for the
    owner's own text."""
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text="Send ✅", callback_data=f"ap:{approval_id}:a"),
                InlineKeyboardButton(text="Edit ✏️", callback_data=EDIT_DATA.format(approval_id=approval_id)),
                InlineKeyboardButton(text="Skip ❌", callback_data=f"ap:{approval_id}:d"),
            ]
        ]
    )


def settled_html(suggestion: Suggestion, outcome: str) -> str:
    """The message once the suggestion is settled: what the contact wrote, the reply (still readable), and
    what came of it."""
    return "\n".join(
        (
            f"✉️ <b>{escape_html(suggestion.contact or 'Someone')} wrote:</b>",
            f"<blockquote>{escape_html(suggestion.wrote)}</blockquote>",
            f"<blockquote>{escape_html(suggestion.text)}</blockquote>",
            f"<b>{escape_html(outcome)}</b>",
        )
    )


def edit_prompt(contact: str) -> str:
    return f"✏️ Reply to this message with the text to send {contact or 'them'}."
