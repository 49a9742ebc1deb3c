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


class Terminal:
    """Prints what the bot sends, as a person would see it in Telegram."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()

    def show(self, params: dict[str, Any]) -> None:
        text = params.get("text", "")
        if params.get("parse_mode") == "HTML":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        with self.lock:
            self.out.write(f"stepwise> {text}\n")
            for row in (params.get("reply_markup") or {}).get("inline_keyboard", []):
                self.out.write("          " + "  ".join(f"[{b['text']}]" for b in row) + "\n")
            self.out.flush()

    def say(self, line: str) -> None:
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()


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
            print(
                f"Stepwise, running locally with {model_description(config)}.\n"
                f"Logs go to {log_path}. Type a message; Ctrl-D or /quit ends the chat.",
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
                if not interactive:
                    terminal.say(f"you> {text}")
                update = updates.text_message(user_id, text)
                emulation.post_update(update)
                result = emulation.wait(f"update-{update['update_id']}", timeout=TURN_TIMEOUT_SECONDS)
                if result["status"] != "SUCCEEDED":
                    terminal.say(f"(the turn ended with {result['status']}: see {log_path})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-id", type=int, default=1001, help="your Telegram user id in the local chat")
    parser.add_argument("--log", type=Path, default=Path(".chat.log"), help="where the functions' logs go")
    args = parser.parse_args(argv)
    return run(sys.stdin, sys.stdout, sys.stdin.isatty(), args.user_id, args.log)


if __name__ == "__main__":
    raise SystemExit(main())
