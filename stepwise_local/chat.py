"""`make chat`: talk to Stepwise in the terminal, with the whole stack running locally.

Each line you type becomes a Telegram update posted to the real webhook handler; the real state machine
runs on the emulation; replies arrive at a local Bot API stand-in that prints them here, as do messages the
bot sends on its own (a reminder fired by the local EventBridge Scheduler), even while you are typing.
`/clock +3h` moves the emulated clock ahead and fires what fell due. Piped input works too:
`echo hello | make chat`.
"""

from __future__ import annotations

import argparse
import html
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from stepwise_local import updates
from stepwise_local.emulation import Emulation, LocalConfig
from stepwise_local.scheduler import Fired
from stepwise_local.telegram_server import FakeBotApi

BOT_TOKEN = "123456:local-bot-token"
# Host variables that map to template parameters, so `HISTORY_LIMIT=5 make chat` behaves like a deployment.
PARAMETER_VARIABLES = {
    "ANTHROPIC_MODEL": "AnthropicModel",
    "HISTORY_LIMIT": "HistoryLimit",
    "MAX_TOOL_STEPS": "MaxToolSteps",
}
TURN_TIMEOUT_SECONDS = 300.0
PROMPT = "you> "
CLOCK_USAGE = "(usage: /clock shows the emulated time; /clock +3h moves it ahead: +20m, +2d, +1h30m)"
_ADVANCE = re.compile(r"^\+?(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


@dataclass
class Keyboard:
    """Inline buttons the bot showed, waiting for a choice."""

    message: dict[str, Any]
    buttons: list[dict[str, str]]

    def pick(self, choice: str) -> dict[str, str] | None:
        """The button meant by "1", "2" or (the start of) its label, case-insensitive."""
        choice = choice.strip().lower()
        if choice.isdigit() and 1 <= int(choice) <= len(self.buttons):
            return self.buttons[int(choice) - 1]
        matches = [b for b in self.buttons if b["text"].lower().startswith(choice)] if choice else []
        return matches[0] if len(matches) == 1 else None


class Terminal:
    """Prints what the bot sends, as a person sees it in Telegram; remembers the newest inline keyboard.

    Messages can arrive at any time (from turns still running, or from the scheduler): while the prompt
    waits for a line, they are printed above it and the prompt is drawn again, with what was typed so far.
    """

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.keyboard: Keyboard | None = None
        self.keyboard_shown = threading.Event()
        self.prompting = False

    def show(self, params: dict[str, Any]) -> None:
        text = params.get("text", "")
        if params.get("parse_mode") == "HTML":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        edited = params.get("method") == "editMessageText"
        rows = (params.get("reply_markup") or {}).get("inline_keyboard", [])
        buttons = [button for row in rows for button in row]
        with self.lock:
            lines = f"stepwise> {'(edited) ' if edited else ''}{text}\n"
            if buttons:
                lines += (
                    "          " + "  ".join(f"[{n}] {b['text']}" for n, b in enumerate(buttons, 1)) + "\n"
                )
                message = {
                    "message_id": params["message_id"],
                    "date": int(time.time()),
                    "text": text,
                    "chat": {"id": params["chat_id"], "type": "private"},
                }
                self.keyboard = Keyboard(message, buttons)
                self.keyboard_shown.set()
            elif edited and self.keyboard and self.keyboard.message["message_id"] == params.get("message_id"):
                self.keyboard = None
            self._write(lines)

    def say(self, line: str) -> None:
        with self.lock:
            self._write(line + "\n")

    def read(self, lines: TextIO, interactive: bool) -> str:
        """The next line ("" at the end of the input), after the prompt when interactive."""
        if not interactive:
            return lines.readline()
        with self.lock:
            self.prompting = True
        try:
            if lines is sys.stdin:
                _readline()
                try:
                    return input(PROMPT) + "\n"
                except EOFError:
                    return ""
            with self.lock:
                self.out.write(PROMPT)
                self.out.flush()
            return lines.readline()
        finally:
            with self.lock:
                self.prompting = False

    def _write(self, text: str) -> None:
        """Write (holding the lock); above the prompt if it is waiting, which is then drawn again."""
        if self.prompting:
            self.out.write("\r\x1b[K" + text + PROMPT + _typed_so_far())
        else:
            self.out.write(text)
        self.out.flush()


def _readline() -> Any:
    """The readline module, if the platform has one: once imported, input() has line editing and history."""
    try:
        import readline
    except ImportError:
        return None
    return readline


def _typed_so_far() -> str:
    readline = _readline()
    return str(readline.get_line_buffer()) if readline else ""


def parse_advance(argument: str) -> timedelta | None:
    """ "+3h", "+20m", "+2d", "+1h30m" (the + is optional) as a timedelta; None if it is not one."""
    match = _ADVANCE.match(argument.strip())
    if not match:
        return None
    days, hours, minutes, seconds = (int(group or 0) for group in match.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def describe_span(span: timedelta) -> str:
    """A timedelta as /clock takes it: 1h30m, 2d, 45s."""
    days, rest = divmod(int(span.total_seconds()), 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = zip((days, hours, minutes, seconds), "dhms", strict=True)
    return "".join(f"{value}{unit}" for value, unit in parts if value) or "0m"


def describe_clock(now: datetime, offset: timedelta) -> str:
    """The emulated now in this machine's time zone, and how far it is ahead of the real time."""
    ahead = f"{describe_span(offset)} ahead of the real time" if offset else "the real time"
    return f"(clock: {now.astimezone():%a %d %b %Y %H:%M:%S %Z}, {ahead})"


def report_delivery(terminal: Terminal, delivery: Fired, log_path: Path) -> None:
    """Say when a schedule's target failed (successful deliveries show by what the bot sends)."""
    if delivery.error:
        target = delivery.function or delivery.target_arn
        terminal.say(
            f"(scheduler: {delivery.name} could not reach {target}: {delivery.error}; see {log_path})"
        )


@contextmanager
def scheduler_log(log: TextIO) -> Iterator[None]:
    """The local scheduler's log (deliveries, failed targets with tracebacks) goes to the chat's log."""
    logger = logging.getLogger("stepwise_local.scheduler")
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = True


def wait_for_turn(emulation: Emulation, terminal: Terminal, name: str, log_path: Path) -> str | None:
    """Wait until the turn ends or shows buttons; returns its name while it waits for a button press."""
    deadline = time.monotonic() + TURN_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = emulation.describe(name)["status"]
        if status != "RUNNING":
            if status != "SUCCEEDED":
                terminal.say(f"(the turn ended with {status}: see {log_path})")
            return None
        if terminal.keyboard_shown.wait(timeout=0.02):
            return name
    terminal.say(f"(still waiting for the turn after {TURN_TIMEOUT_SECONDS:.0f}s: see {log_path})")
    return None


def model_description(config: LocalConfig) -> str:
    if config.anthropic_api_key:
        return "Claude via the Anthropic API"
    if config.anthropic_base_url:
        return f"the Messages API at {config.anthropic_base_url}"
    return "the offline rule-based model (set ANTHROPIC_API_KEY to talk to Claude)"


def run(lines: TextIO, out: TextIO, interactive: bool, user_id: int, log_path: Path) -> int:
    """The chat loop; returns the process exit code."""
    terminal = Terminal(out)
    parameters = {"AllowedUserIds": str(user_id)}
    parameters.update(
        {param: os.environ[var] for var, param in PARAMETER_VARIABLES.items() if os.environ.get(var)}
    )
    with (
        log_path.open("a") as log,
        scheduler_log(log),
        FakeBotApi(BOT_TOKEN, on_message=terminal.show) as telegram,
    ):
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token=BOT_TOKEN,
            anthropic_api_key=os.environ.get("ANTHROPIC_API_KEY") or None,
            anthropic_base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
            parameters=parameters,
            retry_time_scale=0.2,
            log_stream=log,
            fire_schedules=True,
            on_fired=lambda delivery: report_delivery(terminal, delivery, log_path),
        )
        with Emulation(config) as emulation:
            waiting_turn: str | None = None
            print(
                f"Stepwise, running locally with {model_description(config)}.\n"
                f"Logs go to {log_path}. Type a message; /summarize runs the memory summarizer now; "
                "/clock shows the emulated time and /clock +3h (+20m, +2d, +1h30m) moves it ahead, firing "
                "the schedules that fall due; Ctrl-D or /quit ends the chat.",
                file=sys.stderr,
            )
            while True:
                line = terminal.read(lines, interactive)
                if not line or line.strip() in {"/quit", "/exit"}:
                    return 0
                text = line.strip()
                if not text:
                    continue
                if text == "/summarize":
                    if not interactive:
                        terminal.say(f"you> {text}")
                    summary = emulation.run_summarizer(force=True)
                    terminal.say(
                        f"(memory: summarized {summary['summarized']} chat(s), "
                        f"{summary['messages']} message(s))"
                    )
                    continue
                if text == "/clock" or text.startswith("/clock "):
                    if not interactive:
                        terminal.say(f"you> {text}")
                    clock(emulation, terminal, text.removeprefix("/clock"))
                    continue
                if not interactive:
                    terminal.say(f"you> {text}")
                keyboard = terminal.keyboard
                button = keyboard.pick(text) if keyboard else None
                if keyboard and button:
                    terminal.keyboard_shown.clear()
                    emulation.post_update(
                        updates.callback_query(user_id, button["callback_data"], keyboard.message)
                    )
                    if waiting_turn:
                        waiting_turn = wait_for_turn(emulation, terminal, waiting_turn, log_path)
                    continue
                terminal.keyboard_shown.clear()
                update = updates.text_message(user_id, text)
                emulation.post_update(update)
                try:
                    name = emulation.wait_until_taken(user_id, update["update_id"], TURN_TIMEOUT_SECONDS)
                except TimeoutError:
                    terminal.say(
                        f"(no turn took the message after {TURN_TIMEOUT_SECONDS:.0f}s: see {log_path})"
                    )
                    continue
                waiting_turn = wait_for_turn(emulation, terminal, name, log_path)


def clock(emulation: Emulation, terminal: Terminal, argument: str) -> None:
    """/clock: show the emulated time; /clock +3h: move it ahead, then fire the schedules now due."""
    advance = parse_advance(argument) if argument.strip() else timedelta(0)
    if advance is None:
        terminal.say(CLOCK_USAGE)
        return
    if advance:
        emulation.advance_clock(advance)
    terminal.say(describe_clock(emulation.now(), emulation.clock_offset))
    if advance:
        emulation.fire_due_schedules()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-id", type=int, default=1001, help="your Telegram user id in the local chat")
    parser.add_argument("--log", type=Path, default=Path(".chat.log"), help="where the functions' logs go")
    args = parser.parse_args(argv)
    return run(sys.stdin, sys.stdout, sys.stdin.isatty(), args.user_id, args.log)


if __name__ == "__main__":
    raise SystemExit(main())
