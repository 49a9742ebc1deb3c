"""A topic's service messages (`forum_topic_created`, `forum_topic_edited`), checked when one arrives. The
webhook's update models keep them as plain mappings, so that only such an update builds these models."""

from typing import Annotated

from pydantic import Field

from stepwise.telegram.model_base import _TelegramModel
from stepwise.telegram.models import MAX_FILE_NAME


class ForumTopicCreated(_TelegramModel):
    """The service message that opens a topic; `is_name_implicit`: Telegram made the name up."""

    name: Annotated[str, Field(max_length=MAX_FILE_NAME)] = ""
    icon_color: int | None = None
    is_name_implicit: bool = False


class ForumTopicEdited(_TelegramModel):
    """The service message of a topic renamed (or its icon changed)."""

    name: Annotated[str, Field(max_length=MAX_FILE_NAME)] | None = None
