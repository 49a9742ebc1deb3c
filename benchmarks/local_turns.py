"""Latency of whole turns on the local emulation (what `make chat` feels like), offline model.

Prints the median and worst time from the webhook call to the end of the execution for plain turns, tool
turns, and a turn with an approval (time to the buttons, then from the press to the end). Run: make bench
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

from stepwise_local import updates  # noqa: E402
from stepwise_local.emulation import Emulation, LocalConfig  # noqa: E402
from stepwise_local.telegram_server import FakeBotApi  # noqa: E402

USER, RUNS = 4242, 10


def timed_turn(emulation: Emulation, text: str) -> float:
    update = updates.text_message(USER, text)
    start = time.perf_counter()
    emulation.post_update(update)
    emulation.wait_for_update(USER, update["update_id"])
    emulation.wait_idle(USER)
    return time.perf_counter() - start


def main() -> None:
    with (
        FakeBotApi("123456:bench") as telegram,
        Emulation(
            LocalConfig(
                telegram_base_url=telegram.base_url,
                bot_token="123456:bench",  # noqa: S106 (a fake token for the local Bot API)
                parameters={"AllowedUserIds": str(USER), "LogLevel": "ERROR"},
            )
        ) as emulation,
    ):
        timed_turn(emulation, "hello")  # first turn pays the imports
        rows = {
            "plain turn (hello)": [timed_turn(emulation, "hello") for _ in range(RUNS)],
            "tool turn (add a task)": [timed_turn(emulation, f"add task {n}") for n in range(RUNS)],
        }
        to_buttons, after_press = [], []
        for n in range(1, 4):
            update = updates.text_message(USER, f"delete {n}")
            start = time.perf_counter()
            emulation.post_update(update)
            while not any(m.get("reply_markup") for m in telegram.messages(USER)[-1:]):
                time.sleep(0.002)
            to_buttons.append(time.perf_counter() - start)
            message = telegram.messages(USER)[-1]
            data = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
            pressed = time.perf_counter()
            emulation.post_update(
                updates.callback_query(
                    USER,
                    data,
                    {"message_id": message["message_id"], "date": 0, "chat": {"id": USER, "type": "private"}},
                )
            )
            emulation.wait_for_update(USER, update["update_id"])
            after_press.append(time.perf_counter() - pressed)
        rows["approval: message to buttons"] = to_buttons
        rows["approval: press to reply"] = after_press
    print(f"{'local turn':<32}{'median':>10}{'worst':>10}")
    for name, values in rows.items():
        print(f"{name:<32}{statistics.median(values) * 1000:>8.0f} ms{max(values) * 1000:>8.0f} ms")


if __name__ == "__main__":
    main()
