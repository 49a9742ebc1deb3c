"""`make chat`: talk to Stepwise in the terminal, with the whole stack running locally.

Each line you type becomes a Telegram update posted to the real webhook handler; the real state machine
runs on the emulation; replies arrive at a local Bot API stand-in that prints them here, as do messages the
bot sends on its own (a reminder fired by the local EventBridge Scheduler), even while you are typing.
`/clock +3h` moves the emulated clock ahead and fires what fell due; `/topic NAME` moves the chat into a topic
(opened on first use, as its user would open it; its name shows in the prompt) and `/topic` back to the main
chat; `/group` moves into a local group (a message reaches the bot there only when it addresses it, as
"@stepwise_bot …", a reply or a command) and `/private` back; `/as NAME` speaks as another member, on the
allowlist (`/as NAME unlisted`: not on it), and `/as` as yourself again; `/contact NAME` writes as someone
who writes to your Telegram account (secretary mode: stepwise_local.chat_contacts), `/me` as you again;
`/voice-note PATH` sends an audio file as a voice note (spoken answers, after `/voice on`, are written to
.chat_voice/). Piped input works too:
`echo hello | make chat`; each piped line is read once what the one before set going has finished or waits
for a tap on buttons on screen (stepwise_local.settle). In a terminal, lines can be edited and earlier ones
recalled (kept in `.chat_history`); Ctrl-D or Ctrl-C leaves. Bad settings stop it before it starts, naming
the variable.
"""

from __future__ import annotations

import _thread
import argparse
import gc
import html
import json
import logging
import os
import re
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from stepwise_local import updates
from stepwise_local.chat_contacts import (
    CONTACT_USAGE,
    Contact,
    connect_account,
    contact_message,
    contact_named,
    webhook_detail,
)
from stepwise_local.telegram_server import MAX_TOPIC_NAME, FakeBotApi
from stepwise_local.web_app import init_data, launch_url

# The stack's modules (moto, boto3: a second or more) load where they are used, once main() can take a
# Ctrl-C: pressed while they load, it leaves as it does later (exit status 0, no traceback).
if TYPE_CHECKING:
    from stepwise_local.emulation import Emulation, LocalConfig
    from stepwise_local.example_notes.server import ExampleNotesServer
    from stepwise_local.mcp_http import LocalMcpEndpoint
    from stepwise_local.scheduler import Fired

BOT_TOKEN = "123456:local-bot-token"
# Host variables that map to template parameters, so `HISTORY_LIMIT=5 make chat` behaves like a deployment.
PARAMETER_VARIABLES = {
    "ANTHROPIC_MODEL": "AnthropicModel",
    "HISTORY_LIMIT": "HistoryLimit",
    "MAX_TOOL_STEPS": "MaxToolSteps",
    "WEB_SEARCH": "WebSearch",
    "WEB_FETCH": "WebFetch",
    "WEB_MAX_USES": "WebMaxUses",
    "WEB_ALLOWED_DOMAINS": "WebAllowedDomains",
    "WEB_BLOCKED_DOMAINS": "WebBlockedDomains",
    "LOG_LEVEL": "LogLevel",  # DEBUG shows the webhook's warm-ups in .chat.log
    "WARMUP_AFTER_QUIET_SECONDS": "WarmupAfterQuietSeconds",
}
# `ANTHROPIC_API_KEY=fake make chat`: the tests' fake Messages API (it echoes, and answers a web question with
# made-up search results shaped as the real API's) instead of Claude.
FAKE_KEY = "fake"
MCP_SERVERS_FILE = (
    "mcp-servers.json"  # outside MCP servers for the chat (or the file STEPWISE_MCP_SERVERS names)
)
MCP_SERVERS_PARAMETER = "/stepwise/mcp/servers"
WAIT_VARIABLE = "STEPWISE_CHAT_WAIT_SECONDS"  # how long a line's turns may take before the next line is read
DEFAULT_WAIT_SECONDS = 300.0
DEFAULT_MCP_PORT = 8765
DEFAULT_NOTES_PORT = 8766  # the example notes server's (docs/accounts.md); a free one when taken
NOTES_NAME = "notes"  # its name in the servers list
HISTORY_LENGTH = 1000  # lines kept in the history file
PROMPT = "you> "
CLOCK_USAGE = "(usage: /clock shows the emulated time; /clock +3h moves it ahead: +20m, +2d, +1h30m)"
VOICE_NOTE_USAGE = (
    "(usage: /voice-note PATH sends an audio file, Ogg Opus like Telegram's or WAV/FLAC, as a voice note)"
)
TOPIC_USAGE = (
    "(usage: /topic NAME moves into that topic, opened on first use; /topic goes back to the main chat)"
)
AS_USAGE = (
    "(usage: /as NAME speaks as a member on the allowlist, /as NAME unlisted as one who is not, /as as you)"
)
GROUP_MEMBERS = 8  # local members on the allowlist besides you (/as NAME), ids after yours
UNLISTED_BASE = 900_000_000  # ids of local members who are not on the allowlist (/as NAME unlisted)
YOU = "Local"  # your first name, as the bot sees it in a group
VOICE_DIR = ".chat_voice"  # where spoken answers are written, beside the log
UTC_ZONE = ZoneInfo("UTC")


@dataclass(frozen=True)
class Member:
    """Someone `make chat` speaks as (/as NAME): their id and first name."""

    user_id: int
    name: str


_ADVANCE = re.compile(r"^\+?(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


@dataclass(frozen=True)
class Patience:
    """How long the chat waits for what one line set going before it reads the next (the line's deadline)."""

    seconds: float
    deadline: float

    @classmethod
    def start(cls, seconds: float) -> Patience:
        return cls(seconds, time.monotonic() + seconds)

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


def wait_seconds(environ: Mapping[str, str]) -> float:
    """STEPWISE_CHAT_WAIT_SECONDS, checked before the chat starts (settings_check.chat_problems)."""
    return float(environ.get(WAIT_VARIABLE, "").strip() or DEFAULT_WAIT_SECONDS)


@dataclass
class Keyboard:
    """Inline buttons the bot showed, waiting for a choice."""

    message: dict[str, Any]
    buttons: list[dict[str, Any]]

    def pick(self, choice: str) -> dict[str, Any] | None:
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
        self.keyboards: set[int] = set()  # the message ids of every keyboard shown
        self.prompting = False
        self.busy = False  # a typed line is being handled (a turn may be running)
        self.voice_bytes: Callable[[dict[str, Any]], bytes] | None = None  # a sent voice message's audio
        self.voice_dir = Path(VOICE_DIR)
        self.topic: tuple[int, str] | None = None  # the topic the chat is in (/topic NAME): thread, name
        self.topic_names: Callable[[int], str | None] = lambda _thread: None  # a topic's name (the fake's)
        self.group = False  # in the local group (/group), else the private chat
        self.speaker: Member | None = None  # who is speaking (/as NAME); None: you
        self.contact: Contact | None = None  # who writes to your account (/contact NAME); None: you
        self.contacts: dict[int, str] = {}  # the contacts' names by chat id
        self.reply_prompt: dict[str, Any] | None = None  # the bot's Edit prompt to reply to: id, text

    def chat_id(self, user_id: int) -> int:
        """The chat the next line goes to: the local group, or the speaker's private chat."""
        if self.group:
            return updates.GROUP_CHAT_ID
        return self.speaker.user_id if self.speaker else user_id

    def prompt(self) -> str:
        """`you> `, `you [Trip]> ` in a topic, `you [group]> ` in the group, `Rui [group]> ` as Rui, `Ann> `
        as a contact writing to your account."""
        if self.contact is not None:
            return f"{self.contact.name}> "
        who = self.speaker.name if self.speaker else PROMPT.removesuffix("> ")
        if self.group:
            return f"{who} [group]> "
        if self.topic is None:
            return f"{who}> "
        thread, name = self.topic
        return f"{who} [{self.topic_names(thread) or name}]> "  # its name now (a first answer may rename it)

    def where(self, params: dict[str, Any]) -> str:
        """` [Trip]` for a message the bot sent into a topic, ` [group]` into the group, "" for the main
        chat's."""
        chat = params.get("chat_id")
        if isinstance(chat, int) and chat < 0:
            return " [group]"
        thread = params.get("message_thread_id")
        return "" if thread is None else f" [{self.topic_names(thread) or f'topic #{thread}'}]"

    def show_voice(self, params: dict[str, Any]) -> None:
        """A spoken answer: written to .chat_voice/, its path shown."""
        if self.voice_bytes is None:
            return
        data = self.voice_bytes(params)
        self.voice_dir.mkdir(exist_ok=True)
        path = self.voice_dir / f"reply-{params['chat_id']}-{params['message_id']}.ogg"
        path.write_bytes(data)
        with self.lock:
            self._write(f"stepwise> 🔊 spoken answer ({len(data):,} bytes, Ogg Opus): {path}\n")

    def show(self, params: dict[str, Any]) -> None:
        if params.get("method") == "sendVoice":
            self.show_voice(params)
            return
        text = params.get("text", "")
        if params.get("parse_mode") == "HTML":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        edited = params.get("method") == "editMessageText"
        markup = params.get("reply_markup") or {}
        rows = markup.get("inline_keyboard", [])
        buttons = [button for row in rows for button in row]
        with self.lock:
            if params.get("business_connection_id") is not None:  # sent to a contact, in your name
                name = self.contacts.get(params.get("chat_id", 0), "a contact")
                self._write(f"stepwise → {name}> {'(edited) ' if edited else ''}{text}\n")
                return
            if markup.get("force_reply"):  # the next line you type replies to it (Telegram opens the reply)
                self.reply_prompt = {"message_id": params["message_id"], "text": text}
            lines = f"stepwise{self.where(params)}> {'(edited) ' if edited else ''}{text}\n"
            if buttons:
                lines += (
                    "          " + "  ".join(f"[{n}] {b['text']}" for n, b in enumerate(buttons, 1)) + "\n"
                )
                message = {
                    "message_id": params["message_id"],
                    "date": int(time.time()),
                    "text": text,
                    "chat": {
                        "id": params["chat_id"],
                        "type": "supergroup" if params["chat_id"] < 0 else "private",
                    },
                }
                self.keyboard = Keyboard(message, buttons)
                self.keyboards.add(params["message_id"])
                self.keyboard_shown.set()
            elif edited and self.keyboard and self.keyboard.message["message_id"] == params.get("message_id"):
                self.keyboard = None
            self._write(lines)

    def say(self, line: str) -> None:
        with self.lock:
            self._write(line + "\n")

    def shown_keyboards(self) -> set[int]:
        """The message ids of the keyboards shown so far."""
        with self.lock:
            return set(self.keyboards)

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
                    return input(self.prompt()) + "\n"
                except EOFError:  # Ctrl-D: leave the prompt's line, as a shell does
                    self.out.write("\n")
                    self.out.flush()
                    return ""
            with self.lock:
                self.out.write(self.prompt())
                self.out.flush()
            return lines.readline()
        finally:
            with self.lock:
                self.prompting = False

    def _write(self, text: str) -> None:
        """Write (holding the lock); above the prompt if it is waiting, which is then drawn again."""
        if self.prompting:
            self.out.write("\r\x1b[K" + text + self.prompt() + _typed_so_far())
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


@contextmanager
def line_history(path: Path | None) -> Iterator[None]:
    """Earlier lines, for the up arrow and Ctrl-R: read from `path` at the start, written back at the end."""
    readline = _readline() if path else None
    if readline is None or path is None:
        yield
        return
    readline.set_history_length(HISTORY_LENGTH)
    with suppress(OSError):  # none yet (the first chat), or unreadable: start empty
        readline.read_history_file(path)
    try:
        yield
    finally:
        with suppress(OSError):
            readline.write_history_file(path)


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


def describe_clock(now: datetime, offset: timedelta, zone: ZoneInfo = UTC_ZONE) -> str:
    """The emulated now in the chat's time zone (and in UTC when its clock differs), as reminders give
    times, and how far it is ahead of the real time."""
    local = now.astimezone(zone)
    shown = f"{local:%a %d %b %Y %H:%M:%S} {zone.key}"
    if local.utcoffset():
        shown += f", {now.astimezone(UTC_ZONE):%a %d %b %Y %H:%M:%S} UTC"
    ahead = f"{describe_span(offset)} ahead of the real time" if offset else "the real time"
    return f"(clock: {shown}, {ahead})"


def chat_zone(emulation: Emulation, user_id: int) -> ZoneInfo:
    """The user's time zone as reminders use it: theirs (/timezone), else DEFAULT_TIMEZONE."""
    from stepwise.reminders.dynamodb import DynamoReminderStore

    name = DynamoReminderStore(emulation.table("RemindersTable")).timezone(user_id)
    if name is None:
        settings = (emulation.function_env(spec) for spec in emulation.functions.values())
        name = next((env["DEFAULT_TIMEZONE"] for env in settings if env.get("DEFAULT_TIMEZONE")), "UTC")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC_ZONE


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


def wait_for_turn(
    emulation: Emulation, terminal: Terminal, name: str, log_path: Path, patience: Patience
) -> bool:
    """Wait until the turn ends (its reply sent) or shows buttons (it then waits for a press); False when
    the time ran out first (said)."""
    while time.monotonic() < patience.deadline:
        status = emulation.describe(name)["status"]
        if status != "RUNNING":
            if status != "SUCCEEDED":
                terminal.say(f"(the turn ended with {status}: see {log_path})")
            return True
        if terminal.keyboard_shown.wait(timeout=0.02):
            return True
    terminal.say(f"(still waiting for the turn after {patience.seconds:g}s: see {log_path})")
    return False


def settle(
    emulation: Emulation,
    terminal: Terminal,
    chat_id: int,
    log_path: Path,
    patience: Patience,
    given_up: set[str],
    *,
    said: bool = False,
) -> None:
    """Piped input: wait until what the line set going has finished (background jobs and the turns that
    report them included) or waits for a tap on buttons on screen. When the time runs out, say what still
    runs (unless the line's own wait `said` so) and go on: what runs then is not waited for again."""
    from stepwise_local.settle import wait_until_settled

    deadline = time.monotonic() if said else patience.deadline
    busy = wait_until_settled(emulation, chat_id, terminal.shown_keyboards, deadline, given_up)
    given_up.update(busy)
    if busy and not said:
        terminal.say(
            f"(still running after {patience.seconds:g}s: {', '.join(busy)}; reading the next line anyway; "
            f"{WAIT_VARIABLE} sets how long to wait; see {log_path})"
        )


def resumed_turn(emulation: Emulation, callback_data: str) -> str | None:
    """The turn a button press resumed: the one that asked for the approval, once the press decided it;
    None when the press resumed nothing (not an approval button, or the request was not ready)."""
    from stepwise.approvals.lifecycle import parse_callback  # the layer is on sys.path once the stack runs

    parsed = parse_callback(callback_data)
    if parsed is None:
        return None
    item = emulation.table("ApprovalsTable").get_item(Key={"approval_id": parsed[0]}).get("Item")
    if not item or item.get("status") == "pending":
        return None
    return str(item["turn_id"])


def mcp_servers(environ: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
    """The SSM parameters that list the outside MCP servers for the chat (and hold their tokens), from
    `mcp-servers.json` or the file STEPWISE_MCP_SERVERS names: a JSON list of entries, or an object with
    `servers` and `parameters` (more SSM parameters, such as tokens). Returns (parameters, a problem)."""
    named = environ.get("STEPWISE_MCP_SERVERS")
    path = Path(named) if named else Path(MCP_SERVERS_FILE)
    if not path.is_file():
        return {}, f"STEPWISE_MCP_SERVERS names no file: {path}" if named else None
    try:
        loaded = json.loads(path.read_text())
    except ValueError as error:
        return {}, f"{path} is not valid JSON ({error}); no outside MCP servers"
    extra = loaded.get("parameters", {}) if isinstance(loaded, dict) else {}
    servers = loaded.get("servers", []) if isinstance(loaded, dict) else loaded
    if not isinstance(extra, dict):
        return {}, f"{path}: parameters must be an object of SSM parameter names and values"
    return {MCP_SERVERS_PARAMETER: json.dumps(servers), **{str(k): str(v) for k, v in extra.items()}}, None


def with_example_notes(ssm_parameters: dict[str, str], mcp_url: str) -> dict[str, str]:
    """The chat's SSM parameters with the example notes server in the servers list, as an OAuth entry (each
    person signs in: docs/accounts.md), unless the list names a server `notes` already."""
    servers = json.loads(ssm_parameters.get(MCP_SERVERS_PARAMETER) or "[]")
    if not isinstance(servers, list):
        return ssm_parameters
    if any(isinstance(s, dict) and str(s.get("name", "")).casefold() == NOTES_NAME for s in servers):
        return ssm_parameters
    entry = {"name": NOTES_NAME, "url": mcp_url, "auth": "oauth"}
    return {**ssm_parameters, MCP_SERVERS_PARAMETER: json.dumps([*servers, entry])}


class NotesInBackground:
    """The example notes server, with its own sign-in, on STEPWISE_NOTES_PORT (default 8766; 0: any free
    port), or on a free port when that one is taken; its access tokens age on `clock` (the emulation's). Its
    port is bound and listening at once (`mcp_url` is known), but the server itself (most of a second of
    imports) starts only when the first connection comes: a chat that never signs in never pays for it, and
    that first connection waits in the socket's queue meanwhile."""

    def __init__(self, clock: Callable[[], float]) -> None:
        wanted = int(os.environ.get("STEPWISE_NOTES_PORT", "").strip() or DEFAULT_NOTES_PORT)
        self._socket = _bound_socket(wanted)  # bound now: two chats starting at once never want the same port
        self._socket.listen(64)
        self.port = int(self._socket.getsockname()[1])
        self.mcp_url = f"http://127.0.0.1:{self.port}/mcp"
        self._clock = clock
        self._server: ExampleNotesServer | None = None
        self._leaving = threading.Event()
        self._thread = threading.Thread(target=self._start_when_called, name="example-notes", daemon=True)

    def _start_when_called(self) -> None:
        while not self._leaving.is_set():
            called, _, _ = select.select([self._socket], [], [], 0.2)
            if called:
                break
        else:
            return
        from stepwise_local.example_notes.server import ExampleNotesServer

        try:
            self._server = ExampleNotesServer(clock=self._clock, bound=self._socket).__enter__()
        except Exception:  # the chat goes on; whoever called the server gets no answer
            logging.getLogger(__name__).exception("the example notes server did not start")

    def __enter__(self) -> NotesInBackground:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._leaving.set()
        self._thread.join()
        if self._server is not None:
            self._server.__exit__()
        else:
            self._socket.close()


def _bound_socket(wanted: int) -> socket.socket:
    """A socket bound on 127.0.0.1 to `wanted` when it is free, else to a free port."""
    for port in (wanted, 0):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        return sock
    raise OSError("no free port on 127.0.0.1")


def model_description(config: LocalConfig) -> str:
    if config.anthropic_api_key == FAKE_KEY:
        return "the fake Messages API of the tests (echoes; made-up web search results with WEB_SEARCH=true)"
    if config.anthropic_api_key:
        return "Claude via the Anthropic API"
    if config.anthropic_base_url:
        return f"the Messages API at {config.anthropic_base_url}"
    return "the offline rule-based model (set ANTHROPIC_API_KEY to talk to Claude)"


@contextmanager
def fake_messages_api(environ: Mapping[str, str]) -> Iterator[str | None]:
    """The fake Messages API's URL while the chat runs, when ANTHROPIC_API_KEY is `fake`; else None."""
    if environ.get("ANTHROPIC_API_KEY") != FAKE_KEY:
        yield None
        return
    from stepwise_local.emulation import LAYER_DIR

    if str(LAYER_DIR) not in sys.path:  # the fake reads the prompt's shapes from the layer
        sys.path.insert(0, str(LAYER_DIR))
    from stepwise_local.anthropic_server import FakeAnthropic

    with FakeAnthropic(api_key=FAKE_KEY) as api:
        yield api.base_url


def run(
    lines: TextIO,
    out: TextIO,
    interactive: bool,
    user_id: int,
    log_path: Path,
    history_path: Path | None = None,
) -> int:
    """The chat: check the settings, start the stack, converse; returns the process exit code."""
    from stepwise_local.emulation import Emulation, LocalConfig
    from stepwise_local.settings_check import chat_problems, settings_problems

    terminal = Terminal(out)
    members = ",".join(str(user_id + n) for n in range(GROUP_MEMBERS + 1))  # you, and /as NAME's
    parameters = {"AllowedUserIds": members}
    parameters.update(
        {param: os.environ[var] for var, param in PARAMETER_VARIABLES.items() if os.environ.get(var)}
    )
    ssm_parameters, mcp_problem = mcp_servers(os.environ)
    if mcp_problem:
        print(f"make chat: {mcp_problem}", file=sys.stderr)
    emulation: Emulation | None = None
    notes = NotesInBackground(lambda: (emulation.now() if emulation else datetime.now(UTC_ZONE)).timestamp())
    ssm_parameters = with_example_notes(ssm_parameters, notes.mcp_url)
    parameters["McpServersParameter"] = MCP_SERVERS_PARAMETER
    with (
        log_path.open("a") as log,
        scheduler_log(log),
        FakeBotApi(BOT_TOKEN, on_message=terminal.show) as telegram,
        fake_messages_api(os.environ) as fake_url,
        notes,
    ):
        terminal.voice_bytes = telegram.voice_bytes
        terminal.topic_names = lambda thread: telegram.topics(user_id).get(thread)
        terminal.voice_dir = log_path.parent / VOICE_DIR
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token=BOT_TOKEN,
            anthropic_api_key=os.environ.get("ANTHROPIC_API_KEY") or None,
            anthropic_base_url=fake_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            parameters=parameters,
            ssm_parameters=ssm_parameters,
            retry_time_scale=0.2,
            log_stream=log,
            fire_schedules=True,
            on_fired=lambda delivery: report_delivery(terminal, delivery, log_path),
        )
        emulation = Emulation(config)
        problems = chat_problems(os.environ) or settings_problems(
            emulation.function_env(spec) for spec in emulation.functions.values()
        )
        if problems:
            for problem in problems:
                print(f"make chat: {problem}", file=sys.stderr)
            return 2
        wait = wait_seconds(os.environ)
        with (
            emulation,
            mcp_endpoint(emulation) as endpoint,
            line_history(history_path if interactive else None),
        ):
            print(
                f"Stepwise, running locally with {model_description(config)}.\n"
                f"MCP clients on this machine reach it at {endpoint.url} (a token: /connect <name>); "
                f"the Mini App is served at {endpoint.app_url} (see docs/app.md).\n"
                f"An example notes server with its own sign-in runs at {notes.mcp_url}: /accounts connects "
                "it (see docs/accounts.md).\n"
                f"Logs go to {log_path}. Type a message; /summarize runs the memory summarizer now; "
                "/clock shows the emulated time and /clock +3h (+20m, +2d, +1h30m) moves it ahead, firing "
                "the schedules that fall due; /topic NAME moves into a topic and /topic back to the main "
                "chat; /group moves into a group (address the bot there: @stepwise_bot …) and /private "
                "back; /as NAME speaks as another member (/as NAME unlisted: one not on the allowlist); "
                "/voice-note PATH sends an audio file as a voice note; /contact NAME writes as someone who "
                "writes to your Telegram account (secretary mode; all they type is text, commands too) "
                "and /me back; Ctrl-D, Ctrl-C or /quit ends the chat.",
                file=sys.stderr,
            )
            try:
                converse(emulation, terminal, lines, interactive, user_id, log_path, telegram, wait)
            except KeyboardInterrupt:  # Ctrl-C, at the prompt or while a turn runs: leave, no traceback
                terminal.say("")
                if terminal.busy:
                    print(
                        "(stopped waiting; Ctrl-C again to quit without letting it finish)", file=sys.stderr
                    )
            return 0


def mcp_endpoint(emulation: Emulation) -> LocalMcpEndpoint:
    """The emulated /mcp and /app routes on 127.0.0.1, with the stand-in for Telegram's script the Mini App's
    link needs: on STEPWISE_MCP_PORT (default 8765; 0: any free port), or on a free port when that one is
    taken (a second `make chat`, say)."""
    from stepwise_local.mcp_http import LocalMcpEndpoint

    port = int(os.environ.get("STEPWISE_MCP_PORT", "").strip() or DEFAULT_MCP_PORT)
    try:
        return LocalMcpEndpoint(emulation, port, telegram_stand_in=True)
    except OSError:
        print(f"(port {port} is taken: the MCP endpoint takes a free one)", file=sys.stderr)
        return LocalMcpEndpoint(emulation, 0, telegram_stand_in=True)


def converse(
    emulation: Emulation,
    terminal: Terminal,
    lines: TextIO,
    interactive: bool,
    user_id: int,
    log_path: Path,
    telegram: FakeBotApi | None = None,
    wait: float = DEFAULT_WAIT_SECONDS,
) -> None:
    """Read lines until the input ends or /quit: commands run here, the rest go to the bot as updates.
    Piped input: the next line is read once what this one set going has settled (see `settle`)."""
    given_up: set[str] = set()  # piped input: what still ran when a line's time ran out
    members: dict[str, Member] = {}  # the members /as NAME spoke as, by name
    while True:
        line = terminal.read(lines, interactive)
        if not line or line.strip() in {"/quit", "/exit"}:
            return
        text = line.strip()
        if not text:
            continue
        if not interactive:
            terminal.say(f"{terminal.prompt()}{text}")
        terminal.busy = True
        patience = Patience.start(wait)
        in_time = True
        if text == "/me" or text == "/contact" or text.startswith("/contact "):
            name = "" if text == "/me" else text.removeprefix("/contact").strip()
            as_contact(emulation, telegram, terminal, name, user_id)
        elif terminal.contact is not None and telegram is not None:  # a contact reaches no command
            in_time = contact_says(emulation, terminal, text, user_id, telegram, log_path, patience)
        elif text == "/summarize":
            summarize(emulation, terminal, log_path)
        elif text == "/clock" or text.startswith("/clock "):
            clock(emulation, terminal, text.removeprefix("/clock"), user_id)
        elif text in ("/group", "/private"):
            terminal.group = text == "/group"
            terminal.topic = None
            terminal.say(GROUP_ENTERED if terminal.group else "(back in the private chat)")
        elif text == "/as" or text.startswith("/as "):
            speak_as(terminal, text.removeprefix("/as").strip(), user_id, members)
        elif (text == "/topic" or text.startswith("/topic ")) and telegram is not None and terminal.group:
            terminal.say("(topics: in the private chat only, here)")
        elif (text == "/topic" or text.startswith("/topic ")) and telegram is not None:
            topic(emulation, telegram, terminal, text.removeprefix("/topic").strip(), user_id)
        elif (text == "/voice-note" or text.startswith("/voice-note ")) and telegram is not None:
            argument = text.removeprefix("/voice-note").strip()
            in_time = voice_note(emulation, telegram, terminal, argument, user_id, log_path, patience)
        else:
            in_time = send(emulation, terminal, text, user_id, log_path, patience)
        if not interactive and terminal.contact is not None:
            where = contact_conversation_key(terminal.contact.user_id, user_id)
        elif not interactive:
            where = conversation_key(terminal.chat_id(user_id), terminal.topic[0] if terminal.topic else None)
        if not interactive:
            settle(emulation, terminal, where, log_path, patience, given_up, said=not in_time)
        terminal.busy = False


def summarize(emulation: Emulation, terminal: Terminal, log_path: Path) -> None:
    """/summarize: run the scheduled summarizer now over everything said, and say what memory kept (or that
    it kept nothing, or that nothing was new); a failure is one line (its traceback goes to the log) and the
    chat goes on."""
    try:
        summary = emulation.run_summarizer(force=True)
    except Exception as error:
        # with the scheduler's log (the chat's log file): the summarizer is a scheduled function
        logging.getLogger("stepwise_local.scheduler").exception("the summarizer failed")
        terminal.say(f"(memory: the summarizer failed: {error}; see {log_path})")
        return
    failed = summary.get("failed") or []
    if summary["summarized"] and not summary.get("kept", 1):
        line = (
            f"(memory: read {summary['messages']} message(s) in {summary['summarized']} chat(s), nothing "
            "worth keeping (small talk, questions and commands are left out): memory is as it was"
        )
    elif not summary["summarized"] and not failed:
        line = "(memory: nothing new to summarize since the last run"
    else:
        line = f"(memory: summarized {summary['summarized']} chat(s), {summary['messages']} message(s)"
    terminal.say(f"{line}; {len(failed)} failed, see {log_path})" if failed else f"{line})")


def send(
    emulation: Emulation, terminal: Terminal, text: str, user_id: int, log_path: Path, patience: Patience
) -> bool:
    """A button choice presses the button, anything else is a message; then wait for the turn it moved:
    the one the press resumed, or the one that took the message. False when the time ran out (said)."""
    keyboard = terminal.keyboard
    button = keyboard.pick(text) if keyboard else None
    terminal.keyboard_shown.clear()
    speaker = terminal.speaker or Member(user_id, YOU)
    if keyboard and button and "callback_data" not in button:
        open_link(terminal, button, speaker, int(emulation.now().timestamp()))
        return True
    if keyboard and button:
        press = updates.callback_query(speaker.user_id, button["callback_data"], keyboard.message)
        press["callback_query"]["from"]["first_name"] = speaker.name
        answer = emulation.post_update(press)
        if answer.get("headers", {}).get("x-stepwise-action") == "not_allowed":  # Telegram shows it a moment
            terminal.say(f"({json.loads(answer.get('body') or '{}').get('detail', 'not allowed')})")
            return True
        if resumed := resumed_turn(emulation, button["callback_data"]):
            return wait_for_turn(emulation, terminal, resumed, log_path, patience)
        return True
    if terminal.group:
        update = updates.group_message(speaker.user_id, text, first_name=speaker.name)
    else:
        thread = terminal.topic[0] if terminal.topic else None
        update = updates.text_message(speaker.user_id, text, topic=thread, first_name=speaker.name)
        if terminal.reply_prompt is not None and terminal.speaker is None and thread is None:
            update = updates.reply_to_bot(user_id, text, terminal.reply_prompt)  # Telegram opened the reply
            terminal.reply_prompt = None
    return post_and_wait(emulation, terminal, update, "message", log_path, patience)


def open_link(terminal: Terminal, button: dict[str, Any], speaker: Member, now: int) -> None:
    """A button that opens a page rather than answering the bot (`web_app`, `url`): Telegram opens it and
    tells the bot nothing, so the chat prints its link, and the buttons on screen stay as they were. A
    `web_app` link carries initData signed for the speaker at `now` (the emulated clock's, which the page's
    check reads), as Telegram hands it to the page."""
    label = str(button.get("text", ""))
    web_app = button.get("web_app")
    if isinstance(web_app, dict) and isinstance(web_app.get("url"), str):
        data = init_data(speaker.user_id, BOT_TOKEN, first_name=speaker.name, auth_date=now)
        terminal.say(
            f"(“{label}” opens the Mini App: open this link in a browser, signed in as {speaker.name} for an "
            f"hour; /app again gives a new one) {launch_url(web_app['url'], data)}"
        )
    elif isinstance(button.get("url"), str):
        terminal.say(f"(“{label}” opens a link) {button['url']}")
    else:
        terminal.say(f"(“{label}” does nothing in the local chat)")


GROUP_ENTERED = (
    "(in the group “Local group”: the bot answers what addresses it, as @stepwise_bot …, a reply or a "
    "command; /private goes back)"
)


def speak_as(terminal: Terminal, argument: str, user_id: int, members: dict[str, Member]) -> None:
    """/as NAME: speak as NAME, a member on the allowlist (given an id on first use); /as NAME unlisted: as
    one who is not on it; /as: as yourself."""
    words = argument.split()
    if not words:
        terminal.speaker = None
        terminal.say("(speaking as yourself)")
        return
    unlisted = len(words) == 2 and words[1] == "unlisted"
    if len(words) > 2 or (len(words) == 2 and not unlisted) or len(words[0]) > 64:
        terminal.say(AS_USAGE)
        return
    name = words[0]
    member = members.get(name)
    if member is None or (member.user_id >= UNLISTED_BASE) != unlisted:
        listed = [m for m in members.values() if m.user_id < UNLISTED_BASE]
        if not unlisted and len(listed) >= GROUP_MEMBERS:
            terminal.say(f"(at most {GROUP_MEMBERS} other members on the allowlist here)")
            return
        number = UNLISTED_BASE + len(members) + 1 if unlisted else user_id + len(listed) + 1
        member = members[name] = Member(number, name)
    terminal.speaker = member
    status = "not on the allowlist" if unlisted else "on the allowlist"
    terminal.say(f"(speaking as {name}, {status}; /as goes back to you)")


def as_contact(
    emulation: Emulation, telegram: FakeBotApi | None, terminal: Terminal, name: str, user_id: int
) -> None:
    """/contact NAME: write as NAME, someone who writes to your Telegram account (the bot connected to it on
    first use); /me: as yourself again."""
    if not name:
        if terminal.contact is not None:
            terminal.contact = None
            terminal.say("(writing as yourself again)")
        else:
            terminal.say(CONTACT_USAGE)
        return
    if telegram is None or len(name) > 64 or name.startswith("/"):
        terminal.say(CONTACT_USAGE)
        return
    if not terminal.contacts:
        action = connect_account(emulation, telegram, user_id)
        if action != "connection_noted":
            terminal.say(f"(secretary mode is not available here: {action})")
            return
    contact = contact_named(name)
    terminal.contacts[contact.user_id] = name
    terminal.contact, terminal.group, terminal.topic = contact, False, None
    terminal.say(
        f"({name} now writes to your Telegram account: their suggested reply comes to your chat with the "
        "bot; /me goes back to you)"
    )


def contact_says(
    emulation: Emulation,
    terminal: Terminal,
    text: str,
    user_id: int,
    telegram: FakeBotApi,
    log_path: Path,
    patience: Patience,
) -> bool:
    """The contact's line, through your account's connection: wait for its secretary turn to show the
    suggestion (or end); False when the time ran out (said)."""
    assert terminal.contact is not None
    update = contact_message(terminal.contact, text, telegram)
    answer = emulation.post_update(update)
    action = answer.get("headers", {}).get("x-stepwise-action")
    if action not in ("started", "queued"):
        terminal.say(f"(no turn: {webhook_detail(answer) or action})")
        return True
    where = contact_conversation_key(terminal.contact.user_id, user_id)
    try:
        name = emulation.wait_until_taken(where, update["update_id"], patience.left())
    except TimeoutError:
        terminal.say(f"(no turn took the message after {patience.seconds:g}s: see {log_path})")
        return False
    return wait_for_turn(emulation, terminal, name, log_path, patience)


def post_and_wait(
    emulation: Emulation,
    terminal: Terminal,
    update: dict[str, Any],
    what: str,
    log_path: Path,
    patience: Patience,
) -> bool:
    """Post the update and wait for the turn that takes it to end; False when the time ran out (said). An
    update the webhook starts nothing for (a group message not addressed to the bot, someone not on the
    allowlist) is said in one line."""
    from stepwise.webhook import ACTION_HEADER  # the layer is on sys.path once the stack runs

    answer = emulation.post_update(update)
    action = answer.get("headers", {}).get(ACTION_HEADER)
    if action in ("ignored", "not_allowed", "invalid"):
        detail = json.loads(answer.get("body") or "{}").get("detail", action)
        terminal.say(f"(no turn: {detail})")
        return True
    if action == "edited":  # your own text for a suggested reply (Edit): it is shown again, no turn
        return True
    message = update["message"]
    where = conversation_key(message["chat"]["id"], message.get("message_thread_id"))
    try:
        name = emulation.wait_until_taken(where, update["update_id"], patience.left())
    except TimeoutError:
        terminal.say(f"(no turn took the {what} after {patience.seconds:g}s: see {log_path})")
        return False
    return wait_for_turn(emulation, terminal, name, log_path, patience)


def voice_note(
    emulation: Emulation,
    telegram: FakeBotApi,
    terminal: Terminal,
    argument: str,
    user_id: int,
    log_path: Path,
    patience: Patience,
) -> bool:
    """/voice-note PATH: the file as a voice note of the local Telegram (its length read from the audio, as a
    phone would record it), sent where the chat is (the topic, the group) by who is speaking (/as NAME), then
    wait for its turn; False when the time ran out (said)."""
    if not argument:
        terminal.say(VOICE_NOTE_USAGE)
        return True
    path = Path(argument).expanduser()
    try:
        data = path.read_bytes()
    except OSError as error:
        terminal.say(f"(can't read {path}: {error.strerror or error})")
        return True
    file_id = telegram.add_file(data, f"voice/{path.name}")
    speaker = terminal.speaker or Member(user_id, YOU)
    update = updates.voice_message(
        speaker.user_id,
        file_id=file_id,
        duration=audio_seconds(data),
        file_size=len(data),
        mime_type="audio/ogg",
        first_name=speaker.name,
        topic=terminal.topic[0] if terminal.topic else None,
    )
    if terminal.group:
        updates.in_group(update)
    terminal.say(f"(sending {path.name} as a voice note, {len(data):,} bytes)")
    return post_and_wait(emulation, terminal, update, "voice note", log_path, patience)


def audio_seconds(data: bytes) -> int:
    """The audio's length in whole seconds, rounded up (0 when it cannot be read: the transcriber says so)."""
    import io

    try:
        import soundfile

        info = soundfile.info(io.BytesIO(data))
    except Exception:  # not audio, or soundfile missing: Telegram would still send the note
        return 0
    return int(-(-info.frames // max(1, info.samplerate)))


def topic(emulation: Emulation, telegram: FakeBotApi, terminal: Terminal, name: str, user_id: int) -> None:
    """/topic NAME: into the topic of that name, opened first if the chat has none (the local Telegram opens
    it and tells the bot, as Telegram does when its user opens one); /topic: back to the main chat."""
    if not name:
        terminal.topic = None
        terminal.say("(back in the main chat)")
        return
    if len(name) > MAX_TOPIC_NAME:
        terminal.say(TOPIC_USAGE)
        return
    known = {topic_name: thread for thread, topic_name in telegram.topics(user_id).items()}
    thread = known.get(name)
    if thread is None:
        thread = telegram.add_topic(user_id, name)
        emulation.post_update(updates.topic_created(user_id, thread, name))
        terminal.say(f"(opened the topic “{name}”; /topic goes back to the main chat)")
    else:
        terminal.say(f"(in the topic “{name}”)")
    terminal.topic = (thread, name)


def contact_conversation_key(contact_id: int, owner_id: int) -> int:
    """The key of a contact's chat in your account (the layer is on sys.path once the stack runs)."""
    from stepwise.aws.conversation_key import conversation_key
    from stepwise.telegram.conversation import Conversation

    return conversation_key(Conversation(contact_id, account=owner_id))


def conversation_key(chat_id: int, thread: int | None) -> int:
    """The key of the chat's conversation in `thread` (`stepwise.telegram.conversation`; the layer is on
    sys.path once the stack runs)."""
    from stepwise.aws.conversation_key import conversation_key
    from stepwise.telegram.conversation import Conversation

    return conversation_key(Conversation(chat_id, thread))


def clock(emulation: Emulation, terminal: Terminal, argument: str, user_id: int) -> None:
    """/clock: show the emulated time in the chat's zone; /clock +3h: move it ahead, then fire the
    schedules now due."""
    advance = parse_advance(argument) if argument.strip() else timedelta(0)
    if advance is None:
        terminal.say(CLOCK_USAGE)
        return
    if advance:
        emulation.advance_clock(advance)
    terminal.say(describe_clock(emulation.now(), emulation.clock_offset, chat_zone(emulation, user_id)))
    if advance:
        emulation.fire_due_schedules()


INTERRUPT_AGAIN_SECONDS = 0.05


def _quiet_interrupts(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C that lands in a finalizer or weakref callback (a collection while a turn runs, or the stack
    being taken down) is swallowed there by Python, which prints it as "Exception ignored" with a traceback:
    it is not printed, but delivered again to the main thread, so the chat still stops waiting (lost, the
    turn's answer would come as if nobody had pressed it). Anything else is printed, as Python would."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        # From another thread, a moment later: raised now, it would land in this hook and be swallowed again.
        # When Ctrl-C is ignored by then (the chat's last moments), it does nothing.
        again = threading.Timer(INTERRUPT_AGAIN_SECONDS, _thread.interrupt_main, (signal.SIGINT,))
        again.daemon = True
        with suppress(RuntimeError):  # the interpreter is shutting down: nothing is left to interrupt
            again.start()
        return
    sys.__unraisablehook__(unraisable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-id", type=int, default=1001, help="your Telegram user id in the local chat")
    parser.add_argument("--log", type=Path, default=Path(".chat.log"), help="where the functions' logs go")
    parser.add_argument(
        "--history", type=Path, default=Path(".chat_history"), help="earlier lines, for the up arrow"
    )
    args = parser.parse_args(argv)
    sys.unraisablehook = _quiet_interrupts
    try:
        return run(sys.stdin, sys.stdout, sys.stdin.isatty(), args.user_id, args.log, args.history)
    except KeyboardInterrupt:  # Ctrl-C while starting or shutting down
        print(file=sys.stderr)
        return 0
    finally:
        # Leaving: one more Ctrl-C while the interpreter cleans up (most of a second after a chat) would
        # only end the process by the signal, with status 130 instead of the chat's.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # The interpreter's garbage collections at exit go over every object moto and the handlers made
        # (two seconds on a small machine) to free memory the process is about to give back: they are
        # skipped. Nothing there waits for a finalizer: the log is closed and the history written by now.
        gc.freeze()


if __name__ == "__main__":
    raise SystemExit(main())
