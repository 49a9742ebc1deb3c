"""`make chat`: talk to Stepwise in the terminal, with the whole stack running locally.

Each line you type becomes a Telegram update posted to the real webhook handler; the real state machine
runs on the emulation; replies arrive at a local Bot API stand-in that prints them here. Piped input works
too: `echo hello | make chat`.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from stepwise_local import updates
from stepwise_local.emulation import Emulation, LocalConfig
from stepwise_local.telegram_server import FakeBotApi

BOT_TOKEN = "123456:local-bot-token"
# Host variables that map to template parameters, so `HISTORY_LIMIT=5 make chat` behaves like a deployment.
PARAMETER_VARIABLES = {
    "ANTHROPIC_MODEL": "AnthropicModel",
    "HISTORY_LIMIT": "HistoryLimit",
    "MAX_TOOL_STEPS": "MaxToolSteps",
}
TURN_TIMEOUT_SECONDS = 300.0


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
    """Prints what the bot sends, as a person sees it in Telegram; remembers the newest inline keyboard."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.keyboard: Keyboard | None = None
        self.keyboard_shown = threading.Event()

    def show(self, params: dict[str, Any]) -> None:
        text = params.get("text", "")
        if params.get("parse_mode") == "HTML":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        edited = params.get("method") == "editMessageText"
        rows = (params.get("reply_markup") or {}).get("inline_keyboard", [])
        buttons = [button for row in rows for button in row]
        with self.lock:
            self.out.write(f"stepwise> {'(edited) ' if edited else ''}{text}\n")
            if buttons:
                self.out.write(
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
            self.out.flush()

    def say(self, line: str) -> None:
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


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
    with log_path.open("a") as log, FakeBotApi(BOT_TOKEN, on_message=terminal.show) as telegram:
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token=BOT_TOKEN,
            anthropic_api_key=os.environ.get("ANTHROPIC_API_KEY") or None,
            anthropic_base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
            parameters=parameters,
            retry_time_scale=0.2,
            log_stream=log,
        )
        with Emulation(config) as emulation:
            waiting_turn: str | None = None
            print(
                f"Stepwise, running locally with {model_description(config)}.\n"
                f"Logs go to {log_path}. Type a message; /summarize runs the memory summarizer now; "
                "Ctrl-D or /quit ends the chat.",
                file=sys.stderr,
            )
            while True:
                if interactive:
                    out.write("you> ")
                    out.flush()
                line = lines.readline()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-id", type=int, default=1001, help="your Telegram user id in the local chat")
    parser.add_argument("--log", type=Path, default=Path(".chat.log"), help="where the functions' logs go")
    args = parser.parse_args(argv)
    return run(sys.stdin, sys.stdout, sys.stdin.isatty(), args.user_id, args.log)


if __name__ == "__main__":
    raise SystemExit(main())
