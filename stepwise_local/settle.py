"""Piped `make chat`: when the next line may be read.

A line can set more going than its own turn: a background job runs as an execution of its own, raises an
approval, and reports through another turn of the chat; a reminder fired by `/clock` starts a turn. With
piped input the chat reads the next line only once all of that has finished, or waits for a tap on buttons
already on screen, so that a script's "1" presses the button it means.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from boto3.dynamodb.conditions import Attr

from stepwise_local.emulation import Emulation


def parked_on_shown_buttons(emulation: Emulation, shown: Collection[int]) -> set[str]:
    """The executions waiting for a tap on buttons the chat has shown: the turns (or background jobs) of
    the pending approvals whose message is among `shown` (the message ids of keyboards printed)."""
    table = emulation.table("ApprovalsTable")
    arguments = {"FilterExpression": Attr("status").eq("pending"), "ConsistentRead": True}
    parked: set[str] = set()
    while True:
        page = table.scan(**arguments)
        for item in page["Items"]:
            if "message_id" in item and int(item["message_id"]) in shown:
                parked.add(str(item["turn_id"]))
        if "LastEvaluatedKey" not in page:
            return parked
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def wait_until_settled(
    emulation: Emulation,
    chat_id: int,
    shown: Callable[[], Collection[int]],
    deadline: float,
    ignored: Collection[str] = (),
) -> list[str]:
    """Wait until nothing works for the chat (see Emulation.busy_executions) but executions waiting for a
    tap on shown buttons and those `ignored`, or until `deadline` (time.monotonic()). Returns [] once
    settled, else what was still busy when the time ran out."""
    busy: list[str] = []

    def settled() -> bool:
        # The buttons first: an execution that parks after this look still counts as busy, until the next.
        parked = parked_on_shown_buttons(emulation, shown())
        busy[:] = emulation.busy_executions(chat_id, parked | set(ignored))
        return not busy

    emulation.until(settled, max(0.0, deadline - time.monotonic()))
    return busy
