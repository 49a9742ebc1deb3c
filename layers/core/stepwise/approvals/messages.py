"""What approval requests look like in Telegram: the message, its buttons and the decision shown after."""

from __future__ import annotations

import re

from stepwise.approvals.models import ApprovalCall, ApprovalStatus
from stepwise.telegram.formatting import escape_html
from stepwise.telegram.models import InlineKeyboardButton, InlineKeyboardMarkup

CALLBACK_PATTERN = re.compile(r"^ap:([A-Za-z0-9_-]{1,40}):([ad])$")
DECISION_TEXT: dict[ApprovalStatus, str] = {
    "approved": "✅ Approved",
    "denied": "❌ Denied — nothing was changed.",
    "expired": "⌛ No answer in time — counted as Deny; nothing was changed.",
    "pending": "",
}


def human_duration(seconds: int) -> str:
    """3600 -> "1 hour", 90 -> "2 minutes"."""
    for unit, size in (("day", 86_400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def approval_html(calls: list[ApprovalCall], timeout_seconds: int) -> str:
    """The request message: exactly what will happen, and what silence means."""
    lines = ["🔐 <b>Approval needed</b>"]
    lines += [escape_html(call.description) for call in calls]
    lines.append(f"<i>No answer within {human_duration(timeout_seconds)} counts as Deny.</i>")
    return "\n".join(lines)


def approval_keyboard(approval_id: str) -> InlineKeyboardMarkup:
    """Approve / Deny buttons; the callback data carries only the short id (well under 64 bytes)."""
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text="Approve ✅", callback_data=f"ap:{approval_id}:a"),
                InlineKeyboardButton(text="Deny ❌", callback_data=f"ap:{approval_id}:d"),
            ]
        ]
    )


def parse_callback(data: str | None) -> tuple[str, ApprovalStatus] | None:
    """(approval_id, "approved" | "denied") from a button's callback data, or None."""
    match = CALLBACK_PATTERN.match(data or "")
    if match is None:
        return None
    return match.group(1), "approved" if match.group(2) == "a" else "denied"


def decided_html(message_html: str, status: ApprovalStatus) -> str:
    """The request message with its decision appended (shown after the buttons are removed)."""
    return f"{message_html}\n\n<b>{escape_html(DECISION_TEXT[status])}</b>"
