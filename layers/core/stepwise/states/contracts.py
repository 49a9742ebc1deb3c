"""The inputs and outputs of the state machine's states (kept small: ids and counters)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Contract(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore")


class TurnRef(_Contract):
    """Who and what a turn is about; every state receives it. `turn_id` is the execution's name; `user_id`
    and `update_id` are those of the oldest waiting message when it started (LoadContext decides what the
    turn answers, and whose it is)."""

    turn_id: str = Field(min_length=1)
    chat_id: int
    user_id: int
    update_id: int

    def log_keys(self) -> dict[str, object]:
        """The keys every log line of this turn carries."""
        return {"turn_id": self.turn_id, "chat_id": self.chat_id, "update_id": self.update_id}


class TurnInput(_Contract):
    """Every state's input carries the turn; SendReply and SaveTurn need nothing else."""

    turn: TurnRef


class Limits(_Contract):
    """Per-deployment limits the state machine itself reads (TimeoutSecondsPath)."""

    approval_timeout_seconds: int = Field(ge=1)


class TurnStart(TurnInput):
    """The execution's input (the messages themselves wait in the chat's inbox)."""

    limits: Limits | None = None


class LoadContextOutput(_Contract):
    """What LoadContext did: how many waiting messages the turn answers (0: nothing left to answer)."""

    answers: int
    message_id: str | None = None
    context_messages: int = 0


class FinishTurnOutput(_Contract):
    """The chat is free again; `next_turn` names the turn started for messages that arrived meanwhile."""

    next_turn: str | None = None


class RetakeChatOutput(_Contract):
    """A turn back from its approval wait holds the chat again."""

    holder: str


class CallModelInput(TurnInput):
    """CallModel's input: `final` asks for an answer without tools (the tool-step limit was reached);
    `rate_limit_waits` counts the turn's waits for the API's `retry-after` so far."""

    final: bool = False
    rate_limit_waits: int = Field(default=0, ge=0)


Route = Literal["reply", "tools", "limit", "wait"]


class CallModelOutput(_Contract):
    """CallModel's result. `route` (from the stop reason and the step limit) steers the state machine:
    reply -> SendReply, tools -> RunTools, limit -> a final call without tools, wait -> wait `wait_seconds`
    (the API's retry-after) and make the same call (`final` or not) again."""

    route: Route
    stop_reason: str
    step: int
    final: bool = False
    wait_seconds: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class RunToolsInput(TurnInput):
    """RunTools' input: the step whose tool calls to run."""

    step: int = Field(ge=0)


class RunToolsOutput(_Contract):
    """done: every call has a result; needs_approval: some wait for the user (approval_id)."""

    status: Literal["done", "needs_approval"]
    approval_id: str | None = None
    results: int = 0
    errors: int = 0


class RequestApprovalInput(TurnInput):
    """RequestApproval's input: the request to show and the token that resumes the turn."""

    approval_id: str
    task_token: str = Field(min_length=1)


class RequestApprovalOutput(_Contract):
    """The Telegram message that carries the buttons."""

    message_id: int


class FallbackOutput(_Contract):
    """Whether the turn continues with the offline rules model."""

    use_fallback: bool


class SendErrorInput(TurnInput):
    """The error path's input: the name of the error that ended the model calls."""

    error: str | None = None


class DeliveryOutput(_Contract):
    """How a reply was delivered."""

    source: str
    chunks: int
    sent_chunks: int


class SaveTurnOutput(_Contract):
    """Whether an assistant message was stored."""

    saved: bool
