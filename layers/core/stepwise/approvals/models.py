"""An approval request: the calls it covers, the task token that resumes the turn, and its decision."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.telegram.conversation import Conversation

ApprovalStatus = Literal["pending", "approved", "denied", "expired"]
# Who asks: the chat's own model, a background job, the user's MCP client, a check-in that fired, or secretary
# mode (a suggested reply to a contact: its `name` is the contact's).
RequesterKind = Literal["chat", "job", "mcp_client", "checkin", "secretary"]


# What a press of Approve or Deny did: `decided` (approved or denied), or why it changed nothing.
PressAction = Literal["decided", "expired", "already_decided", "not_ready", "not_allowed", "ignored"]


class Requester(BaseModel):
    """Who asks for an approval (`stepwise.approvals.wording` says it in words)."""

    model_config = ConfigDict(defer_build=True)

    kind: RequesterKind = "chat"
    number: int | None = None  # the job's or the check-in's number
    name: str = ""  # the job's title, the MCP client's token name, the check-in


class ApprovalCall(BaseModel):
    """One tool call awaiting approval, described for the user."""

    model_config = ConfigDict(defer_build=True)

    tool_use_id: str
    description: str


class ApprovalRequest(BaseModel):
    """Kept server-side; the Telegram button carries only `approval_id`."""

    model_config = ConfigDict(defer_build=True)

    approval_id: str
    turn_id: str
    chat_id: int
    topic: int | None = None  # the topic of the turn that asks: the buttons are shown there
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
    user_id: int  # the member whose request raised it: only they may answer it
    asker: str | None = None  # in a group: their first name, which another member's tap is told
    step: int
    calls: list[ApprovalCall]
    requester: Requester = Field(default_factory=Requester)
    status: ApprovalStatus = "pending"
    task_token: str | None = None
    message_id: int | None = None
    message_html: str = ""
    created_at: str
    decided_at: str | None = None
    decided_by: int | None = None

    @property
    def conversation(self) -> Conversation:
        """The conversation whose turn asks."""
        return Conversation(self.chat_id, self.topic, self.account)

    @property
    def shown_in(self) -> tuple[int, int | None]:
        """The chat (and topic) whose message shows the request: the conversation's own, but for a contact's
        chat in a business account, the owner's private chat with the bot (nothing reaches the contact)."""
        if self.account is not None:
            return self.account, None
        return self.chat_id, self.topic
