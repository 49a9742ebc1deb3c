"""Ledger records, and how a store is asked to record an effect with them."""

from collections.abc import Callable
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

# done: written in the same transaction as the effect, so the effect happened and a retry only returns it.
# intent: written before an idempotent effect that cannot join a transaction; a retry redoes the effect.
RecordKind = Literal["done", "intent"]


def tool_call_id(turn_id: str, tool_use_id: str) -> str:
    """The ledger key of a tool_use block, scoped to its turn (offline-model ids repeat across turns)."""
    return f"{turn_id}:{tool_use_id}"


class ToolCallRecord(BaseModel):
    """What one tool call did: the result text its first run returned."""

    model_config = ConfigDict(defer_build=True)

    call_id: str
    result: str
    kind: RecordKind = "done"
    ref: str = ""  # for an intent: the id of what the effect is about (a reminder's number, say)
    is_error: bool = False  # the recorded result was an error (an outside server's tool can answer one)


class Once[T](NamedTuple):
    """Make an effect once for `call_id`, recording `result(value)` with it (value: what the effect made)."""

    call_id: str
    result: Callable[[T], str]

    def record(self, value: T) -> ToolCallRecord:
        return ToolCallRecord(call_id=self.call_id, result=self.result(value), kind="done")


class CallAlreadyRecorded(Exception):
    """The call's effect was already made by an earlier attempt; `record` holds the result it returned."""

    def __init__(self, record: ToolCallRecord) -> None:
        super().__init__(f"tool call {record.call_id} already ran")
        self.record = record
