"""A burst of five messages in one chat, and what one turn at a time per chat costs.

Sends five messages to one chat through the webhook (local emulation, the real state machine, a fake
Messages API that answers with an echo after half a second) -- all back to back, and one then four more while
its turn runs -- waits until the chat is idle, and prints turns started, model calls, replies, and whether
every message was answered once and in order. Then it measures a plain one-message turn and counts what
serialization adds to it (inbox/lease DynamoDB requests, state transitions, Lambda invocations) and prices
that with us-east-1 list prices. Run: make bench
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

import boto3  # noqa: E402

from stepwise.prompt.system import is_turn_context  # noqa: E402
from stepwise_local import updates  # noqa: E402
from stepwise_local.anthropic_server import FakeAnthropic, slow_echo  # noqa: E402
from stepwise_local.emulation import Emulation, LocalConfig  # noqa: E402
from stepwise_local.telegram_server import FakeBotApi  # noqa: E402

BURST_CHAT, RUNNING_CHAT, SINGLE_CHAT, BURST, MODEL_SECONDS = 5151, 5353, 5252, 5, 0.5
# us-east-1 list prices (2026-11): Step Functions Standard per state transition, DynamoDB on-demand per write
# and read request unit, Lambda per request and per GB-second (x86).
PRICE = {
    "transition": 0.000025,
    "wru": 0.625e-6,
    "rru": 0.125e-6,
    "lambda_request": 0.2e-6,
    "gb_second": 1.66667e-5,
}
ADDED_STATES = ("IsAnythingLeftToAnswer", "FinishTurn")  # the states serialization added to every turn
FINISH_SECONDS, FINISH_GB = 0.1, 0.25  # FinishTurn: a few DynamoDB calls, 256 MB


class InboxRequests:
    """Counts DynamoDB requests on the inbox table (write and read request units), from botocore's events."""

    def __init__(self) -> None:
        self.units: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        operation = model.name
        if operation == "TransactWriteItems":
            tables = [next(iter(item.values()))["TableName"] for item in params["TransactItems"]]
            if "InboxTable" in tables:
                self._count(operation, wru=2 * len(tables))  # transactional writes cost double
            return
        if params.get("TableName") != "InboxTable":
            return
        reads = {"GetItem", "Query"}
        self._count(operation, rru=1 if operation in reads else 0, wru=0 if operation in reads else 1)

    def _count(self, operation: str, wru: int = 0, rru: int = 0) -> None:
        with self._lock:
            self.calls[operation] += 1
            self.units["wru"] += wru
            self.units["rru"] += rru


def states_entered(emulation: Emulation, name: str) -> list[str]:
    return [
        e["stateEnteredEventDetails"]["name"]
        for e in emulation.history(name)
        if "stateEnteredEventDetails" in e
    ]


def main() -> None:
    counter = InboxRequests()
    # The model takes half a second, as a short Claude answer does.
    with FakeBotApi("123456:bench") as telegram, FakeAnthropic(default=slow_echo(MODEL_SECONDS)) as anthropic:
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token="123456:bench",  # noqa: S106 (a fake token for the local Bot API)
            anthropic_api_key=anthropic.api_key,
            anthropic_base_url=anthropic.base_url,
            parameters={"AllowedUserIds": f"{BURST_CHAT},{RUNNING_CHAT},{SINGLE_CHAT}", "LogLevel": "ERROR"},
        )
        with Emulation(config) as emulation:
            boto3._get_default_session().events.register("before-parameter-build.dynamodb", counter)
            print(
                f"burst of {BURST} messages in one chat; without serialization: {BURST} turns, calls, replies"
            )
            print(f"{'':<34}{'turns':>6}{'model calls':>13}{'replies':>9}  order kept")
            for case, chat in (
                ("all five back to back", BURST_CHAT),
                ("four more while turn 1 runs", RUNNING_CHAT),
            ):
                texts = [f"part {n}" for n in range(1, BURST + 1)]
                sent = [updates.text_message(chat, text) for text in texts]
                calls_before = len(anthropic.requests)
                for index, update in enumerate(sent):
                    emulation.post_update(update)
                    if chat == RUNNING_CHAT and index == 0:
                        emulation.wait_until_taken(chat, update["update_id"])
                emulation.wait_idle(chat)
                turns = [e for e in emulation.executions() if e["name"].startswith(f"chat{chat}-")]
                replies = [telegram.text_of(m) for m in telegram.messages(chat)]
                requests = anthropic.requests[calls_before:]
                last_seen = [
                    b["text"]
                    for m in requests[-1]["messages"]
                    if m["role"] == "user"
                    for b in m["content"]
                    if not is_turn_context(b)
                ]
                kept = "yes" if last_seen == texts and replies[-1] == f"You said: {texts[-1]}" else "NO"
                print(f"  {case:<32}{len(turns):>6}{len(requests):>13}{len(replies):>9}  {kept}")

            counter.units.clear()
            counter.calls.clear()
            update = updates.text_message(SINGLE_CHAT, "hello")
            emulation.post_update(update)
            emulation.wait_idle(SINGLE_CHAT)
            (single,) = [e for e in emulation.executions() if e["name"].startswith(f"chat{SINGLE_CHAT}-")]
            states = states_entered(emulation, single["name"])
    added_transitions = sum(states.count(state) for state in ADDED_STATES)
    cost = {
        "state transitions": added_transitions * PRICE["transition"],
        "DynamoDB (inbox, lease)": counter.units["wru"] * PRICE["wru"] + counter.units["rru"] * PRICE["rru"],
        "Lambda (FinishTurn)": PRICE["lambda_request"] + FINISH_SECONDS * FINISH_GB * PRICE["gb_second"],
    }
    print(f"\nwhat one-turn-at-a-time adds to a one-message turn ({len(states)} states entered in all)")
    print(f"  state transitions {added_transitions} ({', '.join(ADDED_STATES)})")
    print(
        f"  inbox requests    {dict(counter.calls)} = {counter.units['wru']} WRU, {counter.units['rru']} RRU"
    )
    for item, dollars in cost.items():
        print(f"  {item:<24}${dollars * 1000:.4f} per 1,000 turns")
    print(f"  {'total':<24}${sum(cost.values()) * 1000:.4f} per 1,000 turns")


if __name__ == "__main__":
    main()
