"""A tool call of the user's MCP client waiting for the user's approval: the kind of both its inbox message
(`stepwise.inbox.models`) and its turn (`stepwise.turn_records.models`)."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class OutsideCall(BaseModel):
    """A tool call an MCP client made through one of the user's connections, which needs the user's approval:
    its turn asks for it, then runs the call (once) or not, and tells the chat what happened."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["outside_call"] = "outside_call"
    tool: str
    arguments: dict[str, Any]
    connection: str  # the name of the token the client used
    description: str  # what the call will do, as the approval shows it
