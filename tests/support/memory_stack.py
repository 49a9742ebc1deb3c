"""The in-memory stack for behaviour tests: the webhook's core, the turn's loop in code and the in-memory
stores, in this process, with no socket, no thread and no moto. A behaviour test written against it reads
like an integration test on the emulated stack (`support.stack.Stack`), and moves between the two tiers with
few edits.

    def test_tasks_lists_the_users_tasks(stack: MemoryStack) -> None:  # tests/behaviour's fixture
        user = stack.new_user()
        stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
        stack.say(user, "add buy milk")
        assert stack.say(user, "/tasks")["status"] == "SUCCEEDED"
        assert stack.replies(user)[-1] == "1 task:\\n#1 [ ] buy milk"

What it is made of:

- `stack.telegram`: the fake Bot API (`stepwise_local.telegram_server.FakeBotApi`, the same class the
  emulated stack serves over HTTP, not started here), reached by the core's own `BotApiClient` through an
  in-process urllib3 pool (`support.in_process_http`). Its helpers work as on the emulated stack:
  `messages(chat)`, `text_of(message)`, `calls(method)`, `fail_next(...)`, `add_topic(...)`, `drafts(...)`...
- `stack.anthropic`: the fake Messages API (`stepwise_local.anthropic_server.FakeAnthropic`, not serving
  here), reached by the core's own `MessagesApiModel` the same way: `script(*answers)`, `always(answer)`,
  `default`, `requests` (each request's JSON body), `usages`, `rejected`, `reset()`; its answers are built
  with `stepwise_local.anthropic_server`'s `text`, `tool_use`, `error`, `rate_limited`...
- `stack.speech`: the fake OpenAI-compatible speech-to-text API (`stepwise_local.fake_speech.
  FakeSpeechToText`, not serving here; its key is VOICE_TRANSCRIPTION_KEY's), reached the same way by the
  core's `OpenAICompatibleTranscriber` when `env` sets VOICE_TRANSCRIBER=openai (and a
  VOICE_TRANSCRIPTION_URL, only validated): `add_transcript`, `fail_next`, `requests`. Its `slow_next`
  times nothing out here, and Amazon Transcribe and Polly are the emulated stack's (moto).
- `/mcp` and the Mini App: `mcp_request(method, headers, body)` and `app_request(method, path, headers,
  body)` give the McpFunction's and the AppFunction's answers (API Gateway proxy responses) from the core
  entry points their handlers call (`stepwise.mcp.endpoint.serve`, `stepwise.miniapp.endpoint.serve`) over
  these stores, with limits read from `env` (MCP_REQUESTS_PER_MINUTE...) and initData signed with the
  stack's bot token; they run no turn (`drain()` does). `support.memory_api` has the tests' helpers: the MCP
  SDK's client over an httpx transport to `mcp_request` (which it calls in a worker thread, one request at a
  time: Mangum runs an event loop of its own, as in Lambda), raw posts, initData, the page's state and
  actions.
- the turns: the webhook's core (`stepwise.webhook.handle_update`) keeps each message in its conversation's
  inbox and starts turns; `stack.turns` (`stepwise_local.in_memory.workflow.InProcessTurns`) runs them
  through the turn's loop in code (`stepwise.states.loop`, the twin of `statemachine/turn.asl.json`) when
  asked: `say`, `press` and `drain()` run everything queued; `post_update` runs nothing.
- the settings: those the template gives the emulated stack's functions (`template.yaml`), with the same
  local changes (`MEMORY_BACKEND=local`, voice notes heard by PocketSphinx and spoken by eSpeak NG) and
  `env` on top; with `ANTHROPIC_API_KEY` (and its parameter and base URL) blank, the offline rules model
  answers, as it does on the emulated stack; `PERSONA_DIR`, `SKILLS_DIR` and a blank `JOBS_TABLE` (no
  `spawn_job`) are read as the runtime reads them. Each test builds its own stack (the `stack` fixture of
  tests/behaviour, or `MemoryStack(env=...)`): building one costs milliseconds.
- the stores (`stepwise_local.in_memory`), as attributes: `messages`, `turn_records`, `tasks`, `reminders`,
  `schedules`, `usage`, `chats`, `approvals`, `audit`, `jobs`, `connections`, `inbox`, `memory`.

Helpers, as on `support.stack.Stack`: `new_user()`, `say(user, text, topic=None)` (returns the execution that
took the message: `{"name", "status", "states"}`), `send(user, text, topic=None)` (runs the queue until a turn
has taken it; returns that turn's name), `replies(chat, topic=False)`, `stored(chat, topic=None)`,
`tasks(user)`, `buttons(chat)`, `press(user, message, label)`, and `post_update(update)` (the webhook's HTTP
answer); `deliver(update)` posts any update (a voice note: `stepwise_local.updates.voice_message`) and runs
the turns as `say` does; `say_update(update)` posts any message update (a group's: `updates.group_message`)
and runs it as `say` does; `audited(user)` lists the user's audit entries as the audit table's items.
`wait_idle(chat)` runs what is queued (the emulated stack's waits for the turns to end). `waited` lists the
seconds of each WaitOutTheRateLimit the turns went through (not slept), `slept` what the Bot API client waited
for.

Reminders and background jobs: `advance_clock(seconds)` moves the stack's clock (`now()`);
`fire_due_schedules()` fires the reminders' schedules due on it through FireReminder's core
(`support.memory_scheduler`, the twin of the emulation's local EventBridge Scheduler) and runs the turns they
queued; `redeliver(firing)` delivers one again. `schedules_of(user)` are the user's schedules as Scheduler
would hold them; `reminders_of(user)` and `jobs_of(user)` the stored reminders and jobs (their fields). A job
started by `spawn_job` is an execution of `stack.turns` named `job-...` (`job_executions()`), run by
`drain()` like any turn; `/jobs stop` stops it through `stack.turns.stop`.

Long-term memory: `run_summarizer(force=False)` runs the scheduled summarizer's core on the stack's stores;
`vector_index` is the memory's index (`records` by key); `chat_record(chat)` is the chat's record as the
chats table's item holds it.

What it leaves to the emulated stack: the Lambda handlers and their events, the ASL itself (its retries,
timeouts and payload paths: `tests/contract/test_turn_loop_matches_asl.py` holds the loop to its routes),
DynamoDB's adapters, concurrency between turns, warm-ups, real HTTP, and the Scheduler API with the
FireReminder handler and a failing target's retries, the Summarize handler and its schedule's event.
"""

from __future__ import annotations

import itertools
import json
import os
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

from aws_lambda_powertools import Logger

from stepwise.approvals.lifecycle import PressServices
from stepwise.config import Settings
from stepwise.history.dynamodb import message_item
from stepwise.inbox.sequencer import Sequencer
from stepwise.mcp.endpoint import EndpointServices
from stepwise.mcp.endpoint import serve as serve_mcp
from stepwise.mcp.gate import GateLimits
from stepwise.mcp.settings import EndpointSettings
from stepwise.media.voice import VoiceSetup
from stepwise.memory.service import MemoryService
from stepwise.memory.settings import MemoryIndexSettings
from stepwise.memory.summarizer import (
    ExtractiveSummarizer,
    ModelSummarizer,
    SummarizeInput,
    SummarizeServices,
    summarize_chats,
)
from stepwise.miniapp.endpoint import serve as serve_app
from stepwise.miniapp.gate import AppLimits
from stepwise.miniapp.page import Page, build_page
from stepwise.miniapp.services import AppServices
from stepwise.miniapp.settings import AppSettings
from stepwise.model.messages_api import MessagesApiModel
from stepwise.model.types import ChatModel
from stepwise.offline.api import OfflineModel
from stepwise.prompt.persona import load_persona
from stepwise.reminders.firing import FireServices
from stepwise.secretary.intake import Intake
from stepwise.services import (
    JOB_STARTING_TOOLS,
    Models,
    Outbound,
    Prompt,
    Stores,
    Tools,
    TurnServices,
    TurnSettings,
)
from stepwise.skills.catalog import SkillCatalog
from stepwise.telegram.bot_info import BotInfo
from stepwise.telegram.client import BotApiClient
from stepwise.telegram.conversation import Conversation
from stepwise.tools.catalog import build_registry
from stepwise.tools.job_tools import JobSetup
from stepwise.tools.reads import MemoryRecall, Profiles
from stepwise.tools.registry import ToolRegistry
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise.tools.secretary_tools import secretary_registry, send_reply_tool
from stepwise.voice.local_stt import PocketSphinxTranscriber
from stepwise.voice.local_tts import EspeakSpeaker
from stepwise.voice.models import Transcriber
from stepwise.voice.openai_stt import OpenAICompatibleTranscriber
from stepwise.voice.settings import VoiceServiceSettings
from stepwise.webhook import ACTION_HEADER, WebhookOutcome, WebhookServices, handle_update
from stepwise_local import updates
from stepwise_local.anthropic_server import FakeAnthropic
from stepwise_local.fake_speech import FakeSpeechToText
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.connections import InMemoryConnectionStore
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.jobs import InMemoryJobStore
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.secretary import InMemoryBusinessConnectionStore, InMemorySuggestionStore
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.turn_records import InMemoryTurnStore
from stepwise_local.in_memory.usage import InMemoryUsageStore
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex
from stepwise_local.in_memory.workflow import InProcessTurns
from stepwise_local.telegram_server import FakeBotApi
from stepwise_local.template import REPO_ROOT, Template
from support.in_process_http import BotApiPool, MessagesApiPool, SpeechApiPool
from support.memory_scheduler import Firing, MemoryScheduler, schedule_of

MILLISECOND = timedelta(milliseconds=1)
# The Lambda context the MCP function's Mangum is handed (it keeps it in the ASGI scope, unread).
LAMBDA_CONTEXT: Any = SimpleNamespace(function_name="McpFunction", aws_request_id="memory-stack")
ALLOWED_USERS = list(range(101, 900))  # as on the emulated stack; NOT_ALLOWED_USER stays outside
NOT_ALLOWED_USER = 999
BOT_TOKEN = "123456:memory-stack-token"
WEBHOOK_SECRET = "memory-stack-secret"
# The functions whose template environment the turn's services and the webhook read.
TURN_FUNCTIONS = (
    "WebhookFunction",
    "LoadContextFunction",
    "CallModelFunction",
    "RunToolsFunction",
    "RequestApprovalFunction",
    "UseFallbackFunction",
    "FinishTurnFunction",
)


def template_env() -> dict[str, str]:
    """The environment the template gives the turn's functions (merged), as the emulated stack runs them:
    memory on the local backend, voice notes offline, secrets given rather than read from SSM."""
    return dict(_template_env())


@cache
def _template_env() -> dict[str, str]:
    functions = Template(parameters={"AllowedUserIds": ",".join(map(str, ALLOWED_USERS))}).functions()
    env: dict[str, str] = {}
    for name in TURN_FUNCTIONS:
        env |= functions[name].environment
    return env | {
        "MEMORY_BACKEND": "local",
        "VOICE_TRANSCRIBER": "local",
        "VOICE_SPEAKER": "local",
        "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
        "TELEGRAM_BOT_TOKEN_PARAMETER": "",
        "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "TELEGRAM_WEBHOOK_SECRET_PARAMETER": "",
        "ANTHROPIC_API_KEY_PARAMETER": "",
        "WARMUP_AFTER_QUIET_SECONDS": "0",  # no Lambda containers to warm
    }


class MemoryStack:
    """The webhook, the turn's loop and the in-memory stores in one process; see the module's docstring."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.telegram = FakeBotApi(BOT_TOKEN)
        self.anthropic = FakeAnthropic()
        environment = template_env() | {"ANTHROPIC_API_KEY": self.anthropic.api_key} | (env or {})
        with mock.patch.dict(os.environ, environment, clear=True):
            # validated as a function's settings are, from its environment only
            self.settings = Settings()
            self.memory_settings = MemoryIndexSettings()
            self.voice_settings = VoiceServiceSettings()
            self.mcp_limits = EndpointSettings()
            self.app_limits = AppSettings()
        self.turn_settings = TurnSettings.from_settings(self.settings)
        self.clock_offset = timedelta()
        self._last_reading = datetime.now(UTC)
        self.slept: list[float] = []  # what the Bot API client waited for (429s), without waiting
        self.waited: list[int] = []  # each WaitOutTheRateLimit's seconds, in order, without waiting
        key = self.voice_settings.voice_transcription_key
        self.speech = FakeSpeechToText(api_key=key.get_secret_value() if key else None)
        self._users = iter(ALLOWED_USERS)
        self._ids = itertools.count(1)
        self._build_stores()
        self.turns = InProcessTurns(lambda: self.services, wait=self.waited.append)
        self.sequencer = Sequencer(
            inbox=self.inbox,
            starter=self.turns,
            lease_seconds=self.settings.chat_lease_seconds,
            approval_timeout_seconds=self.settings.approval_timeout_seconds,
            secretary_wait_seconds=self.settings.secretary_suggestion_hours * 3600,
            clock=self.now,
            epoch=lambda: self.now().timestamp(),
        )
        self.bot = self._bot_api_client()
        self.services = self._turn_services()
        self.webhook = self._webhook_services()
        self.scheduler = MemoryScheduler(self.schedules, self._fire_services(), self.now)

    # -- the helpers tests use (those of support.stack.Stack) --------------------------------------------

    def new_user(self) -> int:
        return next(self._users)

    def post_update(self, update: dict[str, Any] | str, secret: str | None = "") -> dict[str, Any]:
        """The webhook's answer to this update (secret "": the right one; None: no header), as its HTTP
        answer; a Bot API call in the answer ("typing…") is made, as Telegram makes it. Runs no turn."""
        body = update if isinstance(update, str) else json.dumps(update)
        outcome = handle_update(WEBHOOK_SECRET if secret == "" else secret, body, self.webhook)
        return self._http_answer(outcome)

    def say(self, user_id: int, text: str, topic: int | None = None) -> dict[str, Any]:
        """Send a text message (in `topic`, if given) and run every queued turn; returns the execution that
        took the message (`name`, `status`, the `states` it visited)."""
        update = updates.text_message(user_id, text, topic=topic)
        response = self.post_update(update)
        assert response["statusCode"] == 200, response
        self.drain()
        name = self.turn_for_update(Conversation(user_id, topic), update["update_id"])
        assert name is not None, f"no turn took update {update['update_id']}"
        return self.execution(name)

    def say_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Post any message update (a group's, say) and run every queued turn; returns the execution that
        took it, as `say` does."""
        response = self.post_update(update)
        assert response["statusCode"] == 200, response
        self.drain()
        message = update["message"]
        where = Conversation(message["chat"]["id"], message.get("message_thread_id"))
        name = self.turn_for_update(where, update["update_id"])
        assert name is not None, f"no turn took update {update['update_id']}: {response}"
        return self.execution(name)

    def send(self, user_id: int, text: str, topic: int | None = None) -> str:
        """Send a text message; run queued work only until a turn has taken it; returns that turn's name."""
        update = updates.text_message(user_id, text, topic=topic)
        response = self.post_update(update)
        assert response["statusCode"] == 200, response
        where = Conversation(user_id, topic)
        while (name := self.turn_for_update(where, update["update_id"])) is None:
            assert self.turns.step(), f"no turn took update {update['update_id']}: {self.replies(user_id)}"
        return name

    def deliver(self, update: dict[str, Any]) -> dict[str, Any]:
        """Post any update (a voice note, a photo...) and run every queued turn, as `say` does for a text;
        returns the execution that took it."""
        response = self.post_update(update)
        assert response["statusCode"] == 200, response
        self.drain()
        message = update["message"]
        where = Conversation(message["chat"]["id"], message.get("message_thread_id"))
        name = self.turn_for_update(where, update["update_id"])
        assert name is not None, f"no turn took update {update['update_id']}"
        return self.execution(name)

    def mcp_request(self, method: str, headers: dict[str, str], body: bytes | str = b"") -> dict[str, Any]:
        """The McpFunction's answer to one request to `/mcp` (its API Gateway proxy response), from
        `stepwise.mcp.endpoint.serve` over this stack's stores, as functions/mcp/app.py calls it. Runs no
        turn: an outside call waiting for the tap is queued (`drain()` runs it)."""
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        lower = {name.lower(): value for name, value in headers.items()}
        event = http_api_event(method, "/mcp", lower, text)
        _function_logger()
        answer: dict[str, Any] = serve_mcp(method, lower, text, event, LAMBDA_CONTEXT, self._mcp_services())
        return answer

    def app_request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | str = b""
    ) -> dict[str, Any]:
        """The AppFunction's answer to one request to the Mini App (`/app`, `/app/api/...`), from
        `stepwise.miniapp.endpoint.serve` over this stack's stores, as functions/app/app.py calls it (initData
        is checked with the stack's bot token). Runs no turn: a turn resumed by an approval is queued."""
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        lower = {name.lower(): value for name, value in headers.items()}
        return dict(serve_app(method, path, lower, text, _app_page(), self._app_services))

    def drain(self) -> None:
        """Run every queued turn, continuation and recovery (turns parked on an approval wait on)."""
        self.turns.drain()

    def wait_idle(self, chat_id: int) -> None:
        """What the emulated stack's wait_idle waits for: here, running what is queued."""
        self.drain()

    def execution(self, name: str) -> dict[str, Any]:
        """A turn's execution as a dict: its `name`, `status` and the `states` it visited."""
        run = self.turns.executions[name]
        return {"name": run.name, "status": run.status, "states": list(run.states)}

    def turn_for_update(self, conversation: Conversation, update_id: int) -> str | None:
        """The turn that took an update, if one did."""
        return self.inbox.taken_by.get((conversation, update_id))

    def replies(self, chat_id: int, topic: int | bool | None = False) -> list[str]:
        """What the user saw, message by message (with `topic`, only in that topic; None: outside any)."""
        return [
            self.telegram.text_of(m)
            for m in self.telegram.messages(chat_id)
            if topic is False or m.get("message_thread_id") == topic
        ]

    def stored(self, chat_id: int, topic: int | None = None) -> list[dict[str, Any]]:
        """The conversation's messages as the messages table's items, oldest first."""
        conversation = Conversation(chat_id, topic)
        mine = [(key, m) for (where, key), m in self.messages.items.items() if where == conversation]
        return [message_item(m) for _, m in sorted(mine, key=lambda pair: pair[0])]

    def tasks(self, user_id: int) -> list[dict[str, Any]]:
        """The user's tasks as the tasks table's items."""
        mine = sorted((key, task) for key, task in self.task_store.tasks.items() if key[0] == user_id)
        return [{k: v for k, v in task.model_dump().items() if v is not None} for _, task in mine]

    def audited(self, user_id: int) -> list[dict[str, Any]]:
        """The user's audit entries as the audit table's items (`arguments` as JSON), oldest first."""
        entries = sorted(self.audit.entries(user_id), key=lambda e: (e.created_at, e.tool_use_id))
        return [e.model_dump() | {"arguments": json.dumps(e.arguments, ensure_ascii=False)} for e in entries]

    def buttons(self, chat_id: int) -> dict[str, Any]:
        """The newest message with an inline keyboard in the chat."""
        messages = self.telegram.messages(chat_id)
        with_keyboard = [m for m in messages if (m.get("reply_markup") or {}).get("inline_keyboard")]
        assert with_keyboard, f"no buttons in chat {chat_id}: {self.replies(chat_id)}"
        return with_keyboard[-1]

    def press(self, user_id: int, message: dict[str, Any], label: str) -> dict[str, Any]:
        """Press the button whose label starts with `label`, then run what it resumed; returns the webhook's
        answer."""
        rows = message["reply_markup"]["inline_keyboard"]
        (button,) = [b for row in rows for b in row if b["text"].startswith(label)]
        sent = {
            "message_id": message["message_id"],
            "date": 0,
            "text": message["text"],
            "chat": {"id": message["chat_id"], "type": "private"},
        }
        answer = self.post_update(updates.callback_query(user_id, button["callback_data"], sent))
        self.drain()
        return answer

    def now(self) -> datetime:
        """The stack's clock: this machine's, moved by `advance_clock`, and a millisecond on at least from one
        reading to the next (a turn's states are Lambda invocations apart on AWS: here the user's message and
        its reply would otherwise share a millisecond, and the history's sort keys then order them by id)."""
        self._last_reading = max(datetime.now(UTC) + self.clock_offset, self._last_reading + MILLISECOND)
        return self._last_reading

    def advance_clock(self, seconds: float) -> None:
        self.clock_offset += timedelta(seconds=seconds)

    # -- reminders and background jobs ---------------------------------------------------------------------

    def fire_due_schedules(self) -> list[Firing]:
        """Fire the reminders' schedules due on the stack's clock (FireReminder's core queues each one's
        message) and run the turns they queued; returns the deliveries (`name`, `scheduled_time`, `event`,
        `outcome`)."""
        fired = self.scheduler.fire_due()
        self.drain()
        return fired

    def redeliver(self, firing: Firing) -> Firing:
        """Deliver a schedule's occurrence again (Scheduler delivers at least once) and run what it queued."""
        again = self.scheduler.redeliver(firing)
        self.drain()
        return again

    def schedules_of(self, user_id: int) -> dict[str, dict[str, str]]:
        """The user's schedules by name, with the fields EventBridge Scheduler would hold (the expression, its
        time zone, ActionAfterCompletion)."""
        mine = f"u{user_id}-"
        return {n: schedule_of(r) for n, r in self.schedules.schedules.items() if n.startswith(mine)}

    # -- long-term memory ------------------------------------------------------------------------------------

    def run_summarizer(self, force: bool = False) -> dict[str, Any]:
        """Run the scheduled summarizer's core now (`visited`, `summarized`, `failed`: the chats' keys)."""
        s = self.settings
        services = SummarizeServices(
            chats=self.chats,
            messages=self.messages,
            memory=self.memory,
            summarizer=ModelSummarizer(self.services.models.chat, s.anthropic_model)
            if s.uses_anthropic
            else ExtractiveSummarizer(),
            history_limit=s.history_limit,
            threshold=s.summary_threshold,
            batch_limit=self.memory_settings.summary_batch_limit,
            clock=self.now,
        )
        return summarize_chats(SummarizeInput(force=force), services).model_dump()

    def chat_record(self, chat_id: int, topic: int | None = None) -> dict[str, Any]:
        """The conversation's record as the chats table's item holds it (`summary_due` only while it is due,
        `summary_failures` only after a failed run); {} when there is none."""
        record = self.chats.get(Conversation(chat_id, topic))
        if record is None:
            return {}
        item = record.model_dump(exclude={"due", "summary_failures"}, exclude_none=True)
        if record.due:
            item["summary_due"] = True
        if record.summary_failures:
            item["summary_failures"] = record.summary_failures
        return item

    def reminders_of(self, user_id: int) -> list[dict[str, Any]]:
        """The user's reminders and check-ins as stored (their fields, None left out), by number."""
        return [r.model_dump(exclude_none=True) for r in self.reminders.list(user_id)]

    def jobs_of(self, user_id: int) -> list[dict[str, Any]]:
        """The user's background jobs as stored (their fields, None left out), by number."""
        return [j.model_dump(exclude_none=True) for j in reversed(self.jobs.recent(user_id, limit=1000))]

    def job_executions(self) -> list[dict[str, Any]]:
        """The executions of background jobs (each test's stack is its own: all of them are its user's)."""
        return [self.execution(name) for name in self.turns.executions if name.startswith("job-")]

    # -- wiring: what stepwise.runtime builds from the settings, on in-memory adapters -------------------

    def _build_stores(self) -> None:
        self.inbox = InMemoryChatInbox()
        self.messages = InMemoryMessageRepository()
        self.turn_records = InMemoryTurnStore()
        self.audit = InMemoryAuditLog()
        self.approvals = InMemoryApprovalStore()
        self.chats = InMemoryChatStore()
        self.ledger = InMemoryToolCallLedger()
        self.task_store = InMemoryTaskRepository(self.ledger)
        self.reminders = InMemoryReminderStore()
        self.schedules = InMemorySchedules()
        self.usage = InMemoryUsageStore()
        self.jobs = InMemoryJobStore()
        self.connections = InMemoryConnectionStore()
        self.secretary = InMemoryBusinessConnectionStore()
        self.suggestions = InMemorySuggestionStore()
        keys = itertools.count(1)
        self.vector_index = InMemoryVectorIndex()
        self.memory = MemoryService(
            LocalHashEmbedder(self.memory_settings.embedding_dimensions),
            self.vector_index,
            new_key=lambda: f"mem{next(keys):06d}",
        )

    def _bot_api_client(self, *, draft: bool = False) -> BotApiClient:
        s = self.settings
        transport = BotApiPool(self.telegram).transport()
        if draft:
            return BotApiClient(
                BOT_TOKEN,
                s.telegram_api_base_url,
                transport=transport,
                timeout_seconds=s.draft_timeout_seconds,
                max_rate_limit_waits=0,
                sleep=self.slept.append,
            )
        return BotApiClient(
            BOT_TOKEN,
            s.telegram_api_base_url,
            transport=transport,
            timeout_seconds=s.telegram_timeout_seconds,
            send_timeout_seconds=s.telegram_send_timeout_seconds,
            max_retry_after_seconds=s.telegram_max_retry_after_seconds,
            sleep=self.slept.append,
        )

    def _model(self) -> ChatModel:
        s = self.settings
        if not s.uses_anthropic:
            return OfflineModel(self.now)
        return MessagesApiModel(
            self.anthropic.api_key,
            None,
            s.anthropic_timeout_seconds,
            s.anthropic_max_retries,
            transport=MessagesApiPool(self.anthropic).transport(),
            sleep=self.slept.append,
        )

    def _tools(self) -> ToolRegistry:
        s = self.settings
        limits = ReminderLimits(
            s.default_timezone, s.max_reminders, s.min_checkin_interval_minutes, s.min_repeat_interval_minutes
        )
        job_limits = self.turn_settings.limits.jobs
        return build_registry(
            tasks=self.task_store,
            ledger=self.ledger,
            memory=self.memory,
            reminders=ReminderSetup(self.reminders, self.schedules, limits),
            skills=self._skills(),
            jobs=JobSetup(self.jobs, lambda: self.turns, job_limits, s.approval_timeout_seconds)
            if s.jobs_table
            else None,
        )

    def _skills(self) -> SkillCatalog:
        """SKILLS_DIR's skills, or the shipped ones, as the runtime reads them."""
        return SkillCatalog(Path(self.settings.skills_dir) if self.settings.skills_dir else None)

    def _persona(self, *, group: bool = False) -> str:
        """PERSONA_DIR's persona files, or the shipped ones, as the runtime reads them."""
        directory = self.settings.persona_dir
        return load_persona(Path(directory) if directory else None, group=group)

    def _voice(self) -> VoiceSetup:
        s = self.settings
        return VoiceSetup(
            transcriber_name=s.voice_transcriber,
            transcriber=self._speech_to_text if s.voice_transcriber == "openai" else PocketSphinxTranscriber,
            speaker=EspeakSpeaker,
            speech_engine="local",
            max_reply_chars=s.voice_reply_max_chars,
            openai_usd_per_minute=Decimal(str(s.voice_transcription_usd_per_minute)),
            max_seconds=s.voice_max_seconds,
        )

    def _speech_to_text(self) -> Transcriber:
        """VOICE_TRANSCRIBER=openai: the core's client of an OpenAI-compatible API, answered by `self.speech`
        in this process (VOICE_TRANSCRIPTION_URL is only checked, as the settings check it)."""
        v = self.voice_settings
        key = v.voice_transcription_key.get_secret_value() if v.voice_transcription_key else ""
        return OpenAICompatibleTranscriber(
            v.voice_transcription_url,
            lambda: key,
            v.voice_transcription_model,
            language=v.voice_language or None,
            timeout_seconds=v.voice_transcription_timeout_seconds,
            transport=SpeechApiPool(self.speech).transport(),
            sleep=self.slept.append,
        )

    def _turn_services(self) -> TurnServices:
        s = self.settings
        model = self._model()
        drafts = self._bot_api_client(draft=True)
        tools = self._tools()
        send = send_reply_tool(self.suggestions, self.secretary, self.ledger, lambda: self.bot)
        secretary_tools = secretary_registry(tools, send)
        return TurnServices(
            stores=Stores(
                messages=self.messages,
                turns=self.turn_records,
                audit=self.audit,
                approvals=self.approvals,
                chats=self.chats,
                profiles=Profiles(self.reminders),
                memory=MemoryRecall(self.memory),
                usage=self.usage,
                jobs=self.jobs if s.jobs_table else None,
                connections=self.connections if s.connections_table else None,
                secretary=self.secretary if s.secretary_table else None,
                suggestions=self.suggestions if s.secretary_table else None,
                token_key=lambda: b"memory-stack-token-key",
            ),
            outbound=Outbound(
                telegram=lambda: self.bot,
                sequencer=lambda: self.sequencer,
                drafts=lambda: drafts,
                files=lambda: self.bot,
                stopper=lambda: self.turns,
                resumer=lambda: self.turns,
            ),
            models=Models(
                chat=lambda: model,
                rules_only=not s.uses_anthropic,
                voice=self._voice() if s.voice_transcriber != "off" else None,
            ),
            tools=Tools(
                built_in=lambda: tools,
                secretary=(lambda: secretary_tools) if s.secretary_table else None,
            ),
            prompt=Prompt(self._persona(), self._persona(group=True), self._skills()),
            settings=self.turn_settings,
            clock=self.now,
            new_id=lambda: f"id{next(self._ids):06d}",
        )

    def _fire_services(self) -> FireServices:
        return FireServices(
            reminders=self.reminders,
            schedules=self.schedules,
            chats=self.chats,
            sequencer=lambda: self.sequencer,
            checkin_idle_days=self.settings.checkin_idle_days,
            clock=self.now,
            new_id=lambda: f"id{next(self._ids):06d}",
        )

    def _webhook_services(self) -> WebhookServices:
        s = self.settings
        bot_info = BotInfo()
        presses = PressServices(
            approvals=self.approvals, telegram=lambda: self.bot, resumer=self.turns, clock=self.now
        )
        intake = Intake(
            connections=self.secretary,
            suggestions=self.suggestions,
            sequencer=lambda: self.sequencer,
            history=lambda: self.messages,
            presses=lambda: presses,
            telegram=lambda: self.bot,
            new_id=lambda: f"id{next(self._ids):06d}",
            clock=self.now,
            wait_seconds=s.secretary_suggestion_hours * 3600,
        )
        return WebhookServices(
            secret=WEBHOOK_SECRET,
            allowed_users=s.allowed_users,
            sequencer=lambda: self.sequencer,
            presses=lambda: presses,
            clock=self.now,
            media_limits=self.turn_settings.limits.media,
            chats=lambda: self.chats,
            allowed_chats=s.allowed_chats,
            group_replies=s.group_replies,
            bot=lambda: bot_info.identity(self.bot),
            business=lambda: self.secretary if s.secretary_table else None,
            telegram=lambda: self.bot,
            secretary=lambda: intake if s.secretary_table else None,
        )

    def _endpoint_tools(self) -> ToolRegistry:
        """The tools of `/mcp` and the Mini App: the turn's built-in tools but `spawn_job` (a job reports to a
        chat, not a client), as stepwise.runtime gives them."""
        return self._tools().without(JOB_STARTING_TOOLS)

    def _mcp_services(self) -> EndpointServices:
        s, limits = self.settings, self.mcp_limits
        return EndpointServices(
            connections=self.connections,
            tools=self._endpoint_tools,
            audit=self.audit,
            sequencer=lambda: self.sequencer,
            limits=GateLimits(limits.mcp_max_body_bytes, limits.mcp_requests_per_minute, s.allowed_users),
            clock=self.now,
            new_id=lambda: f"id{next(self._ids):06d}",
        )

    def _app_services(self) -> AppServices:
        s = self.settings
        presses = PressServices(
            approvals=self.approvals, telegram=lambda: self.bot, resumer=self.turns, clock=self.now
        )
        return AppServices(
            bot_token=lambda: BOT_TOKEN,
            count=self.connections.count_request,
            limits=AppLimits(
                requests_per_minute=self.app_limits.app_requests_per_minute, allowed_users=s.allowed_users
            ),
            tools=self._endpoint_tools,
            audit=self.audit,
            approvals=self.approvals,
            presses=lambda: presses,
            chats=self.chats,
            connections=self.connections,
            jobs=self.jobs,
            usage=self.usage,
            timezone=Profiles(self.reminders).timezone,
            default_timezone=s.default_timezone,
            voice_replies=s.voice_transcriber != "off" and s.voice_speaker != "off",
            daily_token_budget=s.daily_token_budget,
            approval_timeout_seconds=s.approval_timeout_seconds,
            clock=self.now,
            suggestions=self.suggestions if s.secretary_table else None,
            secretary_wait_seconds=s.secretary_suggestion_hours * 3600,
        )

    def _http_answer(self, outcome: WebhookOutcome) -> dict[str, Any]:
        """The webhook function's HTTP answer (functions/webhook/app.py), and Telegram's call of the Bot API
        method it names ("typing…")."""
        headers = {"content-type": "application/json", ACTION_HEADER: outcome.action}
        if outcome.typing and outcome.chat_id is not None:
            call: dict[str, Any] = {"chat_id": outcome.chat_id, "action": "typing"}
            if outcome.topic is not None:
                call["message_thread_id"] = outcome.topic
            self.telegram.handle(BOT_TOKEN, "sendChatAction", call)
            body = json.dumps({"method": "sendChatAction", **call})
        else:
            body = outcome.model_dump_json(include={"action", "detail"})
        return {"statusCode": outcome.status, "headers": headers, "body": body}


@cache
def _function_logger() -> Logger:
    """The service's Logger a function's handler makes at import (the endpoint's module logger appends keys
    to it, and cannot without it)."""
    return Logger(service=_template_env()["POWERTOOLS_SERVICE_NAME"])


@cache
def _app_page() -> Page:
    """The Mini App's page, as functions/app/app.py reads it once per container."""
    return build_page(REPO_ROOT / "functions" / "app" / "page")


def http_api_event(method: str, path: str, headers: dict[str, str], body: str) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event for one request (what McpFunction's Mangum reads)."""
    now = datetime.now(UTC)
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": headers,
        "isBase64Encoded": False,
        "body": body,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "memory",
            "domainName": "memory.execute-api.localhost",
            "domainPrefix": "memory",
            "requestId": f"req-{now.timestamp()}",
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
        },
    }
