"""What the turn logic needs from the outside world, in a few narrow groups (the ports and the settings).

A state receives one `TurnServices` holding the groups and reaches each dependency through the group it
belongs to: `services.stores.turns`, `services.outbound.telegram()`, `services.settings.history.limit`. Code
below the states takes only the group (or the one store) it needs. `stepwise.runtime` builds the groups once
per container; tests build them from in-memory fakes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from stepwise.config import Settings, split_list
from stepwise.jobs.models import JobLimits
from stepwise.media.intake import MediaLimits
from stepwise.model.web import WebAccess
from stepwise.telegram.bot_info import BotInfo
from stepwise.turn.ids import new_id, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from stepwise.accounts.access import AccountsAccess
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
    from stepwise.secretary.connections import BusinessConnectionStore
    from stepwise.secretary.suggestions import SuggestionStore
    from stepwise.skills.catalog import SkillCatalog
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.conversation import Scope
    from stepwise.telegram.drafts import DraftSender
    from stepwise.tools.reads import MemoryRecall, Profiles
    from stepwise.tools.registry import Tool, ToolRegistry
    from stepwise.turn.workflow import TurnResumer, TurnStopper
    from stepwise.turn_records.store import TurnStore
    from stepwise.usage.store import UsageStore


JOB_STARTING_TOOLS = frozenset({"spawn_job"})


def offline_model() -> ChatModel:
    """The offline rules model (imported when a turn falls back to it)."""
    from stepwise.offline.api import OfflineModel

    return OfflineModel()


# The groups hold ports: they compare by identity, and a repr of every adapter would say nothing useful.
@dataclass(eq=False, repr=False)
class Stores:
    """The records a turn reads and writes, one store each.

    The states never hold a store of the data the tools own: they read the user's profile (`profiles`: time
    zone, account marks) and memories (`memory`) through the tool layer's read-only views
    (`stepwise.tools.reads`). A store that is None is not deployed.
    """

    messages: MessageRepository
    turns: TurnStore
    audit: AuditLog
    approvals: ApprovalStore
    chats: ChatStore
    profiles: Profiles
    memory: MemoryRecall | None = None  # long-term memory's recall (LoadContext)
    usage: UsageStore | None = None  # None: model calls are not counted (and no budget applies)
    jobs: JobStore | None = None  # background jobs (stepwise.jobs)
    connections: ConnectionStore | None = None  # the /mcp endpoint's tokens (/connect)
    # The key FinishTurn makes a connection's new token with (stepwise.connections.minting).
    token_key: Callable[[], bytes] | None = None
    accounts: AccountsAccess | None = None  # people's own accounts at OAuth servers (docs/accounts.md)
    secretary: BusinessConnectionStore | None = None  # secretary mode's connections and settings (/secretary)
    suggestions: SuggestionStore | None = None  # secretary mode's suggested replies (docs/secretary.md)


@dataclass(eq=False, repr=False)
class Outbound:
    """What a turn reaches beyond its records: the Bot API (messages, drafts, file downloads, getMe) and the
    workflow (the chats' sequencer, which starts the next turn, and the stopper of a job's execution).

    Each is a factory: an adapter (and its secret, and its imports) is built only by a state that uses it.
    """

    telegram: Callable[[], TelegramClient]
    sequencer: Callable[[], Sequencer]
    drafts: Callable[[], DraftSender] | None = None  # None: no drafts (see stepwise.telegram.drafts)
    files: Callable[[], FileSource] | None = None  # photos and documents; None: they show as text
    stopper: Callable[[], TurnStopper] | None = None  # stops a job's execution (/jobs stop)
    resumer: Callable[[], TurnResumer] | None = None  # resumes a waiting turn (a superseded suggestion's)
    bot_info: BotInfo = field(default_factory=BotInfo)  # getMe, asked once per container (/new)


@dataclass(eq=False, repr=False)
class Models:
    """The models a turn calls: the chat model, the offline rules model it may fall back to, and the voice
    notes' transcriber and speaker. `chat` and `rules` are factories (built on first use)."""

    chat: Callable[[], ChatModel]
    rules: Callable[[], ChatModel] = offline_model
    rules_only: bool = False  # no Messages API is configured: `chat` is the offline rules model
    voice: VoiceSetup | None = None  # voice notes (stepwise.voice); None: VOICE_TRANSCRIBER=off


@dataclass(eq=False, repr=False)
class Tools:
    """The tools a turn offers its model: the built-in catalog (built on first use: only CallModel, RunTools
    and commands need it), then the outside MCP servers' tools (stepwise.remote_tools), if any, and in a
    person's own turns the tools of the OAuth servers they connected (`registry_for`)."""

    built_in: Callable[[], ToolRegistry]
    remote: Callable[[], Sequence[Tool[Any]]] | None = None
    # Reads the outside tools again past every cache (RemoteTools.reread): RunTools, when the model called
    # one its list lacks.
    reread_remote: Callable[[], object] | None = None
    # A person's own tools, by user id (RemoteTools.for_person); None: no accounts are deployed.
    personal: Callable[[int], Sequence[Tool[Any]]] | None = None
    # A secretary turn's tools: the read-only built-in ones and send_reply (None: secretary mode not deployed)
    secretary: Callable[[], ToolRegistry] | None = None
    _with_remote: tuple[Sequence[Tool[Any]], ToolRegistry] | None = field(default=None, init=False)
    _with_personal: tuple[ToolRegistry, Sequence[Tool[Any]], ToolRegistry] | None = field(
        default=None, init=False
    )

    @cached_property
    def built_in_registry(self) -> ToolRegistry:
        """The built-in catalog, built on its first use in this container."""
        return self.built_in()

    @property
    def registry(self) -> ToolRegistry:
        """The tools of a turn: the built-in ones, then the outside servers' (the registry is made again only
        when their list was read again)."""
        if self.remote is None:
            return self.built_in_registry
        remote = self.remote()
        if not remote:
            return self.built_in_registry
        if self._with_remote is None or self._with_remote[0] is not remote:
            self._with_remote = (remote, self.built_in_registry.with_tools(remote))
        return self._with_remote[1]

    def registry_for(self, scope: Scope, has_accounts: bool) -> ToolRegistry:
        """The tools of a turn of this scope: `registry`, and in a person's private chat (its topics, their
        jobs) the tools of the OAuth servers they connected; a group's turn gets no member's (see
        docs/accounts.md). A person whose profile marks no account (`has_accounts`, read with their time
        zone) gets `registry` itself, with no request."""
        shared = self.registry
        if self.personal is None or scope.in_group or not has_accounts:
            return shared
        own = self.personal(scope.user_id)
        if not own:
            return shared
        memo = self._with_personal
        if memo is None or memo[0] is not shared or memo[1] is not own:
            memo = self._with_personal = (shared, own, shared.with_tools(own))
        return memo[2]


@dataclass(eq=False, repr=False)
class Prompt:
    """The owner's parts of the system prompt, read from files once per container: the persona (a group's
    is without the owner's USER.md, see stepwise.prompt.persona) and the skills' catalog (None: no skills)."""

    persona: str = ""
    group_persona: str = ""
    skills: SkillCatalog | None = None


class HistorySettings(NamedTuple):
    """What the model sees of the conversation: the recent window (HISTORY_LIMIT, HISTORY_MARGIN; a margin
    of None is chosen per model, see stepwise.prompt.caching), when a chat is summarized
    (SUMMARY_THRESHOLD), and how many memories are recalled (MEMORY_TOP_K)."""

    limit: int
    margin: int | None
    summary_threshold: int
    memory_top_k: int

    @property
    def summary_due_at(self) -> int:
        """Unsummarized messages that make a chat due: the recent window plus the threshold."""
        return self.limit + self.summary_threshold


class ModelSettings(NamedTuple):
    """How the model is called: which (ANTHROPIC_MODEL), how long an answer (ANTHROPIC_MAX_TOKENS), how many
    tool rounds (MAX_TOOL_STEPS), what happens when it fails (FALLBACK_MODEL), and Anthropic's web tools."""

    name: str
    max_tokens: int
    max_tool_steps: int
    fallback: Literal["rules", "off"]
    web: WebAccess


class Limits(NamedTuple):
    """The waits and caps of a turn: an approval's wait, a user's daily tokens (0: no cap), the background
    jobs' limits, and the largest files the model gets."""

    approval_timeout_seconds: int
    daily_token_budget: int
    jobs: JobLimits
    media: MediaLimits
    secretary_wait_seconds: int = 24 * 3600  # how long a suggested reply waits for the owner's tap


class DeliverySettings(NamedTuple):
    """How replies are sent: how often a draft grows, and whether links get Telegram's previews."""

    draft_interval_seconds: float
    link_previews: bool


class DeploymentSettings(NamedTuple):
    """What this deployment is: its default time zone, and the addresses /connect and /app show (empty: not
    deployed)."""

    default_timezone: str
    mcp_url: str
    app_url: str


class TurnSettings(NamedTuple):
    """The sections of `stepwise.config.Settings` the states read, built by `from_settings` (the defaults
    live in `stepwise.config` only)."""

    history: HistorySettings
    model: ModelSettings
    limits: Limits
    delivery: DeliverySettings
    deployment: DeploymentSettings

    @classmethod
    def from_settings(cls, s: Settings) -> TurnSettings:
        return cls(
            history=HistorySettings(
                limit=s.history_limit,
                margin=s.history_margin,
                summary_threshold=s.summary_threshold,
                memory_top_k=s.memory_top_k,
            ),
            model=ModelSettings(
                name=s.anthropic_model,
                max_tokens=s.anthropic_max_tokens,
                max_tool_steps=s.max_tool_steps,
                fallback=s.fallback_model,
                web=WebAccess(
                    search=s.web_search,
                    fetch=s.web_fetch,
                    max_uses=s.web_max_uses,
                    allowed_domains=tuple(split_list(s.web_allowed_domains)),
                    blocked_domains=tuple(split_list(s.web_blocked_domains)),
                ),
            ),
            limits=Limits(
                approval_timeout_seconds=s.approval_timeout_seconds,
                daily_token_budget=s.daily_token_budget,
                jobs=JobLimits(s.max_jobs, s.job_max_tool_steps, s.job_timeout_minutes),
                media=MediaLimits.from_settings(s),
                secretary_wait_seconds=s.secretary_suggestion_hours * 3600,
            ),
            delivery=DeliverySettings(
                draft_interval_seconds=s.draft_interval_seconds, link_previews=s.link_previews
            ),
            deployment=DeploymentSettings(
                default_timezone=s.default_timezone, mcp_url=s.mcp_url, app_url=s.app_url
            ),
        )


@dataclass(eq=False, repr=False)
class TurnServices:
    """Everything a state of the turn uses, by group; `clock` and `new_id` are the turn's time and ids."""

    stores: Stores
    outbound: Outbound
    models: Models
    tools: Tools
    prompt: Prompt
    settings: TurnSettings
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id
