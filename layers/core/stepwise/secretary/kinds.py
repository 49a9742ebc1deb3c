"""A contact's message to an owner's business account (issue 42): the kind of both its inbox message
(`stepwise.inbox.models`) and the secretary turn that drafts a reply to it
(`stepwise.turn_records.models`)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_CONTACT_NAME = 64


class ContactWrote(BaseModel):
    """A contact wrote in a chat of the owner's connected account: its turn drafts a reply the owner may send
    with a tap (`stepwise.states.secretary_turn`). A burst of them is one turn."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["secretary"] = "secretary"
    connection_id: str = Field(min_length=1, max_length=256)
    contact: str = Field(max_length=MAX_CONTACT_NAME)  # the contact's first name, as the owner sees it
    username: str | None = None  # the contact's @username, without the @
