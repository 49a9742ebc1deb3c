"""What a press on an approval's button did: its own module, because the webhook names it in every answer's
outcome while only a press loads the approvals' models and code."""

from typing import Literal

PressAction = Literal["decided", "expired", "already_decided", "not_ready", "not_allowed", "ignored"]
