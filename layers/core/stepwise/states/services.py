"""What the turn logic needs from the outside world, gathered in one object (the ports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from stepwise.jobs.models import JobLimits
from stepwise.media.intake import MediaLimits
from stepwise.model.web import WebAccess
from stepwise.remote_tools.config import SEPARATOR
from stepwise.telegram.bot_info import BotInfo
from stepwise.tools.job_tools import CANNOT_DO_TOOL
from stepwise.turn.ids import new_id, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from stepwise.approvals.store import ApprovalStore
    from stepwise.audit.log import AuditLog
    from stepwise.chats.store import ChatStore
    from stepwise.connections.store import ConnectionStore
    from stepwise.history.repository import MessageRepository
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.jobs.store import JobStore
    from stepwise.media.fetch import FileSource
    from stepwise.media.voice import VoiceSetup
    from stepwise.model.types import ChatModel
    from stepwise.skills.catalog import SkillCatalog
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.drafts import DraftSender
    from stepwise.tools.reads import MemoryRecall, TimeZones
    from stepwise.tools.registry import Tool, ToolRegistry
    from stepwise.turn.workflow import TurnStopper
    from stepwise.turn_records.store import TurnStore
    from stepwise.usage.store import UsageStore


JOB_STARTING_TOOLS = frozenset({"spawn_job"})


def offline_model() -> ChatModel:
    """The offline rules model (imported when a turn falls back to it)."""
    # the offline rules model: only a turn Claude cannot answer
    from stepwise.offline.api import OfflineModel

    return OfflineModel()


# Services compare by identity, and a repr of every adapter would say nothing useful.
@dataclass(eq=False, repr=False)
class TurnServices:
    """Ports and per-deployment values used by the states.

    `telegram`, `model`, `rules_model`, `sequencer` and `tool_catalog` are factories: an adapter (and its
    secret) is built only by a state that uses it.

    The states never hold a store of the data the tools own: they reach it through the tools, and LoadContext
    reads the user's time zone (`reminders`) and memories (`memory`) through the tool layer's read-only views
    (`stepwise.tools.reads`).
    """

    messages: MessageRepository
    turns: TurnStore
    audit: AuditLog
    approvals: ApprovalStore
    chats: ChatStore
    reminders: TimeZones
    telegram: Callable[[], TelegramClient]
    model: Callable[[], ChatModel]
    sequencer: Callable[[], Sequencer]
    model_name: str
    tool_catalog: Callable[[], ToolRegistry]
    max_tokens: int = 2048
    history_limit: int = 20
    history_margin: int | None = None  # None: chosen per model (see stepwise.prompt.caching)
    max_tool_steps: int = 5
    approval_timeout_seconds: int = 3600
    fallback_model: Literal["rules", "off"] = "rules"
    memory: MemoryRecall | None = None
    default_timezone: str = "UTC"
    memory_top_k: int = 3
    summary_threshold: int = 20
    web: WebAccess = field(default_factory=WebAccess)  # Anthropic's web tools; off unless the owner says
    persona: str = ""  # the persona section of the system prompt, read once per container
    group_persona: str = ""  # a group's: without the owner's USER.md (stepwise.prompt.persona)
    skills: SkillCatalog | None = None  # the skills (their section of the system prompt); None: no skills
    rules_model: Callable[[], ChatModel] = offline_model
    rules_only: bool = False  # no Messages API is configured: `model` is the offline rules model
    files: Callable[[], FileSource] | None = None  # photos and documents; None: they show as text
    media_limits: MediaLimits = field(default_factory=MediaLimits)
    drafts: Callable[[], DraftSender] | None = None  # None: no drafts (see stepwise.telegram.drafts)
    bot_info: BotInfo = field(default_factory=BotInfo)  # getMe, asked once per container (/new)
    draft_interval_seconds: float = 0.0
    link_previews: bool = False  # LINK_PREVIEWS: replies with Telegram's link previews (docs/security.md)
    usage: UsageStore | None = None  # None: model calls are not counted (and no budget applies)
    daily_token_budget: int = 0
    connections: ConnectionStore | None = None  # the /mcp endpoint's tokens (/connect); None: not deployed
    mcp_url: str = ""
    app_url: str = ""  # the Mini App's page, for /app's button
    # The key FinishTurn makes a new token with (stepwise.connections.minting); None where none is made.
    token_key: Callable[[], bytes] | None = None
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id
    # The outside MCP servers' tools (stepwise.remote_tools), offered after the built-in ones; None: none.
    remote_tools: Callable[[], Sequence[Tool[Any]]] | None = None
    # Reads them again past every cache (RemoteTools.reread): RunTools, when the model called one they lack.
    reread_remote_tools: Callable[[], object] | None = None
    jobs: JobStore | None = None  # background jobs (stepwise.jobs); None: not deployed
    job_limits: JobLimits = field(default_factory=JobLimits)
    stopper: Callable[[], TurnStopper] | None = None  # stops a job's execution (/jobs stop)
    voice: VoiceSetup | None = None  # voice notes (stepwise.voice); None: VOICE_TRANSCRIBER=off
    _with_remote: tuple[Sequence[Tool[Any]], ToolRegistry] | None = field(
        default=None, init=False, repr=False
    )
    _job_tools: tuple[ToolRegistry, ToolRegistry] | None = field(default=None, init=False, repr=False)

    @property
    def summary_due_at(self) -> int:
        """Unsummarized messages that make a chat due: the recent window plus the threshold."""
        return self.history_limit + self.summary_threshold

    @cached_property
    def built_in_tools(self) -> ToolRegistry:
        """The built-in tools, built on first use (only CallModel, RunTools and commands need them)."""
        return self.tool_catalog()

    @property
    def tools(self) -> ToolRegistry:
        """The tools of a turn: the built-in ones, then the outside servers' (the registry is made again only
        when their list was read again)."""
        if self.remote_tools is None:
            return self.built_in_tools
        remote = self.remote_tools()
        if not remote:
            return self.built_in_tools
        if self._with_remote is None or self._with_remote[0] is not remote:
            self._with_remote = (remote, self.built_in_tools.with_tools(remote))
        return self._with_remote[1]

    @tools.setter
    def tools(self, registry: ToolRegistry) -> None:
        """Use `registry` as the turn's only tools (tests)."""
        self.__dict__["built_in_tools"] = registry
        self.remote_tools = None

    def turn_tools(self, in_job: bool) -> ToolRegistry:
        """The tools of a turn, or of a background job: the same but `spawn_job` (a job cannot start jobs),
        and with `cannot_do` (a job's model says with it that it cannot do its task)."""
        tools = self.tools
        if not in_job:
            return tools
        if self._job_tools is None or self._job_tools[0] is not tools:
            self._job_tools = (tools, tools.without(JOB_STARTING_TOOLS).with_tools([CANNOT_DO_TOOL]))
        return self._job_tools[1]

    def tools_for_calls(self, names: Sequence[str], in_job: bool) -> ToolRegistry:
        """The tools of a turn (or job) that runs calls of these tools. The outside servers' lists this
        container read may be older than the ones the model was offered (read up to 20 s ago, by a warm-up
        say, before CallModel fetched a new list): when a call names an outside tool (`<server>__<tool>`)
        they lack, they are read again first, once, so that "Unknown tool" is the answer only when the
        current lists lack it too."""
        tools = self.turn_tools(in_job)
        missing = [name for name in names if tools.get(name) is None]
        if not missing or self.reread_remote_tools is None:
            return tools

        if any(SEPARATOR in name for name in missing):
            self.reread_remote_tools()
            tools = self.turn_tools(in_job)
        return tools

    def max_steps(self, in_job: bool) -> int:
        """The tool rounds a turn (MAX_TOOL_STEPS) or a background job (JOB_MAX_TOOL_STEPS) may make."""
        return self.job_limits.max_tool_steps if in_job else self.max_tool_steps
