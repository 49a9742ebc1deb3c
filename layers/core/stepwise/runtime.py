"""The composition root: real adapters built from the settings, once per Lambda container."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from stepwise.aws import secrets
from stepwise.aws.dynamo_tables import PlainValuesTables
from stepwise.aws.lazy_client import LazyClient, lazy
from stepwise.chats.dynamodb import DynamoChatStore
from stepwise.config import Settings, get_settings, split_list
from stepwise.inbox.dynamodb import DynamoChatInbox
from stepwise.inbox.sequencer import Sequencer
from stepwise.media.intake import MediaLimits
from stepwise.telegram.bot_info import BotInfo
from stepwise.telegram.client import BotApiClient
from stepwise.turn import ids
from stepwise.turn.workflow import StepFunctionsStarter
from stepwise.warmups.settings import WarmupSettings
from stepwise.warmups.warmer import LambdaWarmer, Warmups, WarmupTargets

# Above: what every function, the webhook included, uses. What only a turn's states, a rare kind of turn or
# one function uses is imported where it is built, each with its reason: the webhook, which every message
# waits for after a quiet spell, then loads none of it (docs/measurements.md, "The composition root's
# imports").
if TYPE_CHECKING:
    from stepwise.accounts.access import AccountsAccess
    from stepwise.accounts.callback import CallbackServices
    from stepwise.accounts.flow import AccountFlow
    from stepwise.accounts.settings import AccountSettings
    from stepwise.accounts.store import AccountStore
    from stepwise.approvals.dynamodb import DynamoApprovalStore
    from stepwise.approvals.lifecycle import PressServices
    from stepwise.audit.dynamodb import DynamoAuditLog
    from stepwise.connections.dynamodb import DynamoConnectionStore
    from stepwise.jobs.dynamodb import DynamoJobStore
    from stepwise.ledger.dynamodb import DynamoToolCallLedger
    from stepwise.mcp.endpoint import EndpointServices
    from stepwise.media.voice import VoiceSetup
    from stepwise.memory.service import MemoryService
    from stepwise.memory.settings import MemoryIndexSettings
    from stepwise.memory.summarizer import SummarizeServices
    from stepwise.miniapp.services import AppServices
    from stepwise.model.types import ChatModel
    from stepwise.reminders.dynamodb import DynamoReminderStore
    from stepwise.reminders.eventbridge import EventBridgeSchedules
    from stepwise.reminders.firing import FireServices
    from stepwise.remote_tools.catalog import RemoteTools
    from stepwise.remote_tools.client import RemoteServers
    from stepwise.remote_tools.config import ServerEntry
    from stepwise.secretary.dynamodb import DynamoBusinessConnectionStore, DynamoSuggestionStore
    from stepwise.secretary.intake import Intake
    from stepwise.services import TurnServices, TurnSettings
    from stepwise.skills.catalog import SkillCatalog
    from stepwise.tools.job_tools import JobSetup
    from stepwise.tools.registry import ToolRegistry
    from stepwise.tools.reminder_tools import ReminderSetup
    from stepwise.turn.workflow import StepFunctionsStopper
    from stepwise.usage.dynamodb import DynamoUsageStore
    from stepwise.voice.models import Speaker, Transcriber
    from stepwise.voice.settings import VoiceServiceSettings
    from stepwise.webhook import WebhookServices

APPROVAL_RECORD_GRACE_SECONDS = 86_400  # approval records outlive their timeout by a day, then expire

MemoryBackend = Callable[["MemoryIndexSettings"], "MemoryService"]
_memory_backends: dict[str, MemoryBackend] = {}


def install_memory_backend(name: str, backend: MemoryBackend) -> None:
    """Supply the memory backend `MEMORY_BACKEND=<name>` selects, other than `aws` (which is built in).

    The shipped layer has only the AWS backend; the local emulation installs `local` (its deterministic
    embedder and in-process index) before any handler runs. Installed backends survive `reset()`.
    """
    _memory_backends[name] = backend


_clock: Callable[[], datetime] | None = None


def install_clock(clock: Callable[[], datetime] | None) -> None:
    """Supply the clock `clock()` reads; None restores the real one.

    The shipped layer uses the real clock; the local emulation installs its own so /clock moves time for
    reminders. The installed clock survives `reset()`.
    """
    global _clock
    _clock = clock


def clock() -> datetime:
    """Now, timezone-aware UTC: the installed clock's, or the real one."""
    return _clock() if _clock is not None else ids.utc_now()


class Runtime:
    """Lazily built adapters; each is created on first use and reused across warm invocations."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # The sections of the settings only some code reads (stepwise.config.SECTIONS), each read from the
    # environment and validated when that code first runs in this container.
    @cached_property
    def memory_settings(self) -> MemoryIndexSettings:
        # a turn's, not the webhook's
        from stepwise.memory.settings import MemoryIndexSettings

        return MemoryIndexSettings()

    @cached_property
    def voice_settings(self) -> VoiceServiceSettings:
        # voice: loaded by a voice note's turn or a spoken reply only
        from stepwise.voice.settings import VoiceServiceSettings

        return VoiceServiceSettings()

    @cached_property
    def _dynamodb(self) -> PlainValuesTables:
        return PlainValuesTables(boto3.client("dynamodb"))

    @cached_property
    def telegram(self) -> BotApiClient:
        s = self.settings
        return BotApiClient(
            secrets.telegram_bot_token(s),
            s.telegram_api_base_url,
            timeout_seconds=s.telegram_timeout_seconds,
            connect_timeout_seconds=s.telegram_connect_timeout_seconds,
            send_timeout_seconds=s.telegram_send_timeout_seconds,
            max_retry_after_seconds=s.telegram_max_retry_after_seconds,
        )

    @cached_property
    def draft_telegram(self) -> BotApiClient:
        """The Bot API client for drafts: short waits and no 429 waiting (a draft is never worth a delay)."""
        s = self.settings
        return BotApiClient(
            secrets.telegram_bot_token(s),
            s.telegram_api_base_url,
            timeout_seconds=s.draft_timeout_seconds,
            connect_timeout_seconds=min(s.telegram_connect_timeout_seconds, s.draft_timeout_seconds),
            max_rate_limit_waits=0,
        )

    @cached_property
    def model(self) -> ChatModel:
        s = self.settings
        if not s.uses_anthropic:
            # the rules model: only without an API key (make chat, the tests)
            from stepwise.offline.api import OfflineModel

            return OfflineModel(clock)
        # a turn's, not the webhook's
        from stepwise.model.messages_api import MessagesApiModel

        return MessagesApiModel(
            secrets.anthropic_api_key(s),
            s.anthropic_base_url,
            s.anthropic_timeout_seconds,
            s.anthropic_max_retries,
        )

    @cached_property
    def approvals(self) -> DynamoApprovalStore:
        # a turn's, and the webhook's for a button press only
        from stepwise.approvals.dynamodb import DynamoApprovalStore

        s = self.settings
        longest = max(
            s.approval_timeout_seconds, s.secretary_suggestion_hours * 3600 if s.secretary_table else 0
        )
        return DynamoApprovalStore(
            self._dynamodb.table(s.approvals_table), longest + APPROVAL_RECORD_GRACE_SECONDS
        )

    @cached_property
    def sequencer(self) -> Sequencer:
        """The chats' inboxes and leases, and the starter of the turns they call for."""
        s = self.settings
        if not s.state_machine_arn:
            raise RuntimeError("STATE_MACHINE_ARN is not configured")
        return Sequencer(
            inbox=DynamoChatInbox(self._dynamodb.table(s.inbox_table)),
            starter=StepFunctionsStarter(self._stepfunctions, s.state_machine_arn),
            lease_seconds=s.chat_lease_seconds,
            approval_timeout_seconds=s.approval_timeout_seconds,
            secretary_wait_seconds=s.secretary_suggestion_hours * 3600,
            clock=clock,
        )

    @cached_property
    def _stepfunctions(self) -> Any:
        return LazyClient("stepfunctions")  # most holders of a sequencer never start a turn

    @cached_property
    def jobs(self) -> DynamoJobStore | None:
        """The background jobs' records; None where jobs are not deployed (no JOBS_TABLE)."""
        # background jobs: loaded by the functions that start, run or show them
        from stepwise.jobs.dynamodb import DynamoJobStore

        table = self.settings.jobs_table
        return DynamoJobStore(self._dynamodb.table(table)) if table else None

    @property
    def job_setup(self) -> JobSetup | None:
        """What spawn_job is bound to; None where jobs are not deployed."""
        # background jobs (as above)
        from stepwise.tools.job_tools import JobSetup

        s = self.settings
        jobs = self.jobs
        if jobs is None or not s.state_machine_arn:
            return None
        arn = s.state_machine_arn
        return JobSetup(
            jobs=jobs,
            starter=lambda: StepFunctionsStarter(self._stepfunctions, arn),
            limits=self.turn_settings.limits.jobs,
            approval_timeout_seconds=s.approval_timeout_seconds,
        )

    @cached_property
    def business_connections(self) -> DynamoBusinessConnectionStore | None:
        """Secretary mode's business connections; None where it is not deployed (no SECRETARY_TABLE)."""
        # secretary mode: loaded by a business account's messages and suggestions only
        from stepwise.secretary.dynamodb import DynamoBusinessConnectionStore

        table = self.settings.secretary_table
        return DynamoBusinessConnectionStore(self._dynamodb.table(table)) if table else None

    @cached_property
    def suggestions(self) -> DynamoSuggestionStore | None:
        """Secretary mode's suggested replies; None where it is not deployed (no SECRETARY_TABLE)."""
        # secretary mode (as above)
        from stepwise.secretary.dynamodb import DynamoSuggestionStore

        table = self.settings.secretary_table
        return DynamoSuggestionStore(self._dynamodb.table(table)) if table else None

    @cached_property
    def secretary_tools(self) -> ToolRegistry:
        """A secretary turn's tools: the built-in ones that only read, and send_reply."""
        # secretary mode (as above)
        from stepwise.tools.secretary_tools import secretary_registry, send_reply_tool

        connections, suggestions = self.business_connections, self.suggestions
        if connections is None or suggestions is None:
            raise RuntimeError("SECRETARY_TABLE is not configured")
        tool = send_reply_tool(suggestions, connections, self.ledger, lambda: self.telegram)
        return secretary_registry(self.tools, tool)

    @cached_property
    def connections(self) -> DynamoConnectionStore | None:
        """The /mcp endpoint's tokens; None where the endpoint is not deployed (no CONNECTIONS_TABLE)."""
        # a turn's (/connect), the endpoint's and the page's, not the webhook's
        from stepwise.connections.dynamodb import DynamoConnectionStore

        table = self.settings.connections_table
        return DynamoConnectionStore(self._dynamodb.table(table)) if table else None

    def _token_key(self) -> bytes:
        """The key FinishTurn makes new tokens with, derived from the bot token (`connections.minting`)."""
        # a turn's, not the webhook's
        from stepwise.connections.minting import token_key

        return token_key(secrets.telegram_bot_token(self.settings))

    @cached_property
    def chats(self) -> DynamoChatStore:
        return DynamoChatStore(self._dynamodb.table(self.settings.chats_table))

    @cached_property
    def reminders(self) -> DynamoReminderStore:
        # a turn's, not the webhook's
        from stepwise.reminders.dynamodb import DynamoReminderStore

        return DynamoReminderStore(self._dynamodb.table(self.settings.reminders_table))

    @cached_property
    def schedules(self) -> EventBridgeSchedules:
        # a turn's, not the webhook's
        from stepwise.reminders.eventbridge import EventBridgeSchedules

        s = self.settings
        return EventBridgeSchedules(
            LazyClient("scheduler"),  # CallModel offers the reminder tools; only RunTools calls them
            s.schedule_group_name,
            target_arn=s.reminder_target_arn or "",
            role_arn=s.scheduler_role_arn or "",
        )

    @cached_property
    def fire_services(self) -> FireServices:
        # reminders firing: the FireReminder function's own
        from stepwise.reminders.firing import FireServices

        return FireServices(
            reminders=self.reminders,
            schedules=self.schedules,
            chats=self.chats,
            sequencer=lambda: self.sequencer,
            checkin_idle_days=self.settings.checkin_idle_days,
            clock=clock,
        )

    @cached_property
    def ledger(self) -> DynamoToolCallLedger:
        # a turn's, not the webhook's
        from stepwise.ledger.dynamodb import DynamoToolCallLedger

        s = self.settings
        return DynamoToolCallLedger(self._dynamodb.table(s.tool_calls_table), s.turn_ttl_days)

    @cached_property
    def usage(self) -> DynamoUsageStore:
        """The per-user token and cost counters (UsageTable)."""
        # a turn's, not the webhook's
        from stepwise.usage.dynamodb import DynamoUsageStore

        s = self.settings
        return DynamoUsageStore(self._dynamodb.table(s.usage_table), s.turn_ttl_days)

    @cached_property
    def memory(self) -> MemoryService | None:
        """Bedrock Titan embeddings and S3 Vectors, or the local backend; None when no index is configured."""
        s = self.settings
        if s.memory_backend != "aws":
            backend = _memory_backends.get(s.memory_backend)
            if backend is None:
                raise RuntimeError(f"MEMORY_BACKEND={s.memory_backend}, but no such backend is installed")
            return backend(self.memory_settings)
        if not s.vector_bucket_name:
            return None
        index = self.memory_settings
        # a turn's, not the webhook's
        from stepwise.memory.embedder import BedrockTitanEmbedder
        from stepwise.memory.service import MemoryService
        from stepwise.memory.vector_index import S3VectorsIndex

        return MemoryService(
            # made on the first recall or memory tool call: CallModel offers memory's tools, never calls them
            BedrockTitanEmbedder(
                LazyClient("bedrock-runtime"), index.embedding_model_id, index.embedding_dimensions
            ),
            S3VectorsIndex(LazyClient("s3vectors"), s.vector_bucket_name, index.vector_index_name),
        )

    @property
    def memory_configured(self) -> bool:
        """Whether long-term memory is deployed (known from the settings, without building its clients)."""
        s = self.settings
        return s.memory_backend != "aws" or bool(s.vector_bucket_name)

    def _memory_service(self) -> MemoryService:
        memory = self.memory
        if memory is None:
            raise RuntimeError("VECTOR_BUCKET_NAME is not configured")
        return memory

    @cached_property
    def summarize_services(self) -> SummarizeServices:
        # the summarizer: the scheduled Summarize function's own
        from stepwise.history.dynamodb import DynamoMessageRepository
        from stepwise.memory.summarizer import (
            ExtractiveSummarizer,
            ModelSummarizer,
            Summarizer,
            SummarizeServices,
        )

        s = self.settings
        memory = self.memory
        if memory is None:
            raise RuntimeError("VECTOR_BUCKET_NAME is not configured")
        summarizer: Summarizer = (
            ModelSummarizer(lambda: self.model, s.anthropic_model)
            if s.uses_anthropic
            else ExtractiveSummarizer()
        )
        return SummarizeServices(
            chats=self.chats,
            messages=DynamoMessageRepository(self._dynamodb.table(s.messages_table)),
            memory=memory,
            summarizer=summarizer,
            history_limit=s.history_limit,
            threshold=s.summary_threshold,
            batch_limit=self.memory_settings.summary_batch_limit,
            clock=clock,
        )

    @cached_property
    def persona(self) -> str:
        """The persona files' text (PERSONA_DIR, or the shipped folder), read once; a file over the size
        limit raises PersonaError naming it."""
        # a turn's, not the webhook's
        from stepwise.prompt.persona import load_persona

        directory = self.settings.persona_dir
        return load_persona(Path(directory) if directory else None)

    @cached_property
    def group_persona(self) -> str:
        """The persona of a group's prompt, read once: the same files but `GROUP.md` instead of `USER.md`,
        the owner's notes, which a group never gets (docs/groups.md)."""
        # a turn's, not the webhook's
        from stepwise.prompt.persona import load_persona

        directory = self.settings.persona_dir
        return load_persona(Path(directory) if directory else None, group=True)

    @cached_property
    def skills(self) -> SkillCatalog:
        """The skills (SKILLS_DIR, or the shipped folder), read on first use; invalid ones logged and
        skipped."""
        # the tools' catalog (skills are tools): loaded by the functions that offer or run tools
        from stepwise.skills.catalog import SkillCatalog

        directory = self.settings.skills_dir
        return SkillCatalog(Path(directory) if directory else None)

    @cached_property
    def _audit(self) -> DynamoAuditLog:
        # a turn's, not the webhook's
        from stepwise.audit.dynamodb import DynamoAuditLog

        return DynamoAuditLog(self._dynamodb.table(self.settings.audit_table))

    @cached_property
    def turn_settings(self) -> TurnSettings:
        """The sections of the settings the states read (and the webhook's media limits, spawn_job's job
        limits)."""
        # a turn's, not the webhook's
        from stepwise.services import TurnSettings

        return TurnSettings.from_settings(self.settings)

    @cached_property
    def turn_services(self) -> TurnServices:
        # a turn's, not the webhook's
        from stepwise.history.dynamodb import DynamoMessageRepository
        from stepwise.services import Models, Outbound, Prompt, Stores, Tools, TurnServices
        from stepwise.tools.reads import MemoryRecall, Profiles
        from stepwise.turn_records.dynamodb import DynamoTurnStore

        s = self.settings
        remote = bool(s.mcp_servers_parameter)
        # Adapters most states never use are made on first use (`lazy`): their imports and tables too.
        stores = Stores(
            messages=DynamoMessageRepository(self._dynamodb.table(s.messages_table)),
            turns=DynamoTurnStore(self._dynamodb.table(s.turns_table), s.turn_ttl_days),
            audit=lazy(lambda: self._audit),
            approvals=lazy(lambda: self.approvals),
            chats=self.chats,
            profiles=Profiles(self.reminders),
            memory=MemoryRecall(self._memory_service) if self.memory_configured else None,
            usage=self.usage,
            jobs=lazy(lambda: self.jobs) if s.jobs_table else None,
            connections=lazy(lambda: self.connections) if s.connections_table else None,
            token_key=self._token_key,
            accounts=self.accounts,
            secretary=lazy(lambda: self.business_connections) if s.secretary_table else None,
            suggestions=lazy(lambda: self.suggestions) if s.secretary_table else None,
        )
        outbound = Outbound(
            telegram=lambda: self.telegram,
            sequencer=lambda: self.sequencer,
            drafts=lambda: self.draft_telegram,
            files=lambda: self.telegram,
            stopper=self._stopper,
            resumer=lambda: self._press_services.resumer,
        )
        return TurnServices(
            stores=stores,
            outbound=outbound,
            models=Models(chat=lambda: self.model, rules_only=not s.uses_anthropic, voice=self.voice),
            tools=Tools(
                built_in=lambda: self.tools,
                remote=(lambda: self.remote_tools.tools()) if remote else None,
                reread_remote=(lambda: self.remote_tools.reread()) if remote else None,
                personal=(lambda user: self.remote_tools.for_person(user))
                if remote and self.accounts
                else None,
                secretary=(lambda: self.secretary_tools) if s.secretary_table else None,
            ),
            prompt=Prompt(self.persona, self.group_persona, lazy(lambda: self.skills)),
            settings=self.turn_settings,
            clock=clock,
        )

    @cached_property
    def voice(self) -> VoiceSetup | None:
        """Voice notes' transcriber and spoken replies' speaker (each built when a turn first needs it); None
        with VOICE_TRANSCRIBER=off."""
        # voice: loaded by a voice note's turn or a spoken reply only
        from stepwise.media.voice import VoiceSetup

        s = self.settings
        if s.voice_transcriber == "off":
            return None
        return VoiceSetup(
            transcriber_name=s.voice_transcriber,
            transcriber=lambda: self.transcriber,
            speaker=(lambda: self.speaker) if s.voice_speaker != "off" else None,
            speech_engine="local" if s.voice_speaker == "local" else s.polly_engine,
            max_reply_chars=s.voice_reply_max_chars,
            openai_usd_per_minute=Decimal(str(s.voice_transcription_usd_per_minute)),
            max_seconds=s.voice_max_seconds,
        )

    @cached_property
    def transcriber(self) -> Transcriber:
        """VOICE_TRANSCRIBER's transcriber: Amazon Transcribe, an OpenAI-compatible API, or PocketSphinx."""
        s, v = self.settings, self.voice_settings
        if problem := v.problem_for(s.voice_transcriber):
            raise RuntimeError(problem)
        if s.voice_transcriber == "openai":
            # voice, each transcriber its own
            from stepwise.voice.openai_stt import OpenAICompatibleTranscriber

            return OpenAICompatibleTranscriber(
                v.voice_transcription_url,
                lambda: v.transcription_key(s.secrets_cache_seconds),
                v.voice_transcription_model,
                language=v.voice_language or None,
                timeout_seconds=v.voice_transcription_timeout_seconds,
            )
        if s.voice_transcriber == "local":
            from stepwise.voice.local_stt import PocketSphinxTranscriber

            return PocketSphinxTranscriber()
        if not v.voice_bucket_name:
            raise RuntimeError("VOICE_TRANSCRIBER=transcribe needs VOICE_BUCKET_NAME")
        from stepwise.voice.aws_transcribe import AwsTranscriber

        return AwsTranscriber(
            s3=lambda: boto3.client("s3"),
            transcribe=lambda: boto3.client("transcribe"),
            bucket=v.voice_bucket_name,
            language=v.voice_language or None,
            language_options=split_list(v.voice_language_options),
            timeout_seconds=v.voice_transcribe_timeout_seconds,
        )

    @cached_property
    def speaker(self) -> Speaker:
        """VOICE_SPEAKER's speaker: Amazon Polly, or eSpeak NG offline (make chat)."""
        # voice, each speaker its own
        s = self.settings
        if s.voice_speaker == "local":
            from stepwise.voice.local_tts import EspeakSpeaker

            return EspeakSpeaker()
        from stepwise.voice.polly import PollySpeaker

        voice_id = self.voice_settings.polly_voice_id
        return PollySpeaker(lambda: boto3.client("polly"), voice_id=voice_id, engine=s.polly_engine)

    def _stopper(self) -> StepFunctionsStopper:
        # a turn's, not the webhook's
        from stepwise.turn.workflow import StepFunctionsStopper

        return StepFunctionsStopper(self._stepfunctions, self.settings.state_machine_arn or "")

    @cached_property
    def tools(self) -> ToolRegistry:
        """The built-in tools of this deployment, bound to their stores: the turn's (the outside servers'
        tools come after them, see stepwise.services.Tools) and the /mcp endpoint's (never outside
        tools)."""
        # the tools' catalog and their schemas: the webhook and LoadContext never need them
        from stepwise.tasks.dynamodb import DynamoTaskRepository
        from stepwise.tools.catalog import build_registry

        s = self.settings
        return build_registry(
            tasks=DynamoTaskRepository(self._dynamodb.table(s.tasks_table), self.ledger),
            ledger=self.ledger,
            memory=self.memory,
            reminders=self.reminder_tools_setup,
            skills=self.skills,
            jobs=self.job_setup,
        )

    @cached_property
    def accounts(self) -> AccountsAccess | None:
        """People's own accounts at the servers list's OAuth servers (docs/accounts.md); None where they are
        not deployed (no table, callback or key parameter) or no servers list is named."""
        # people's accounts and the servers list: a turn's, the page's and the callback's, not the webhook's
        from stepwise.accounts.access import AccountsAccess
        from stepwise.accounts.settings import AccountSettings
        from stepwise.remote_tools.settings import RemoteToolSettings
        from stepwise.remote_tools.ssm import load_servers

        a, s = AccountSettings(), self.settings
        if not a.deployed or not s.mcp_servers_parameter:
            return None
        parameter, path = s.mcp_servers_parameter, RemoteToolSettings().mcp_parameters_path

        def servers() -> tuple[ServerEntry, ...]:
            entries = load_servers(parameter, path, s.secrets_cache_seconds)
            return tuple(entry for entry in entries if entry.auth == "oauth")

        store = cache(lambda: self._account_store(a))
        flow = cache(lambda: self._account_flow(a, store, servers))
        return AccountsAccess(store=store, flow=flow, servers=servers, callback_url=a.oauth_callback_url)

    @cached_property
    def callback_services(self) -> CallbackServices:
        """The sign-in callback's (OAuthCallbackFunction): the accounts' flow and the Bot API."""
        # the sign-in callback: the OAuthCallback function's own
        from stepwise.accounts.callback import CallbackServices

        access = self.accounts
        if access is None:
            raise RuntimeError("accounts are not deployed (ACCOUNTS_TABLE, OAUTH_CALLBACK_URL, ...)")
        return CallbackServices(flow=access.flow, telegram=lambda: self.telegram)

    def _account_store(self, a: AccountSettings) -> AccountStore:
        """The accounts' table, its secrets sealed with the deployment's key (one SSM read per container)."""
        # the accounts' cipher (cryptography): loaded by the first token read or written
        from stepwise.accounts.cipher import TokenCipher, ssm_key
        from stepwise.accounts.dynamodb import DynamoAccountStore

        cipher = TokenCipher(ssm_key(boto3.client("ssm"), a.oauth_key_parameter))
        return DynamoAccountStore(self._dynamodb.table(a.accounts_table), cipher)

    def _account_flow(
        self,
        a: AccountSettings,
        store: Callable[[], AccountStore],
        servers: Callable[[], tuple[ServerEntry, ...]],
    ) -> AccountFlow:
        """Sign-ins, refreshes and disconnections (the MCP SDK's OAuth helpers: loaded by accounts' work)."""
        # the MCP SDK's OAuth: loaded by a sign-in, a refresh or a disconnection only
        from aws_lambda_powertools.utilities import parameters

        from stepwise.accounts.flow import AccountFlow
        from stepwise.aws.http_transport import HttpTransport

        s = self.settings

        def parameter(name: str) -> str:
            return str(parameters.get_parameter(name, decrypt=True, max_age=s.secrets_cache_seconds))

        return AccountFlow(
            store(),
            HttpTransport(),
            servers,
            parameter,
            marks=self.reminders,
            state_minutes=a.oauth_state_minutes,
            now=lambda: clock().timestamp(),
        )

    @cached_property
    def remote_tools(self) -> RemoteTools:
        """The outside MCP servers' tools. CallModel refreshes stale lists (it has no tool-call ledger table,
        and never calls a tool); RunTools calls the tools and only reads the lists (again, past the caches,
        when the model called a tool missing from its read: `stepwise.states.run_tools.tools_for_calls`)."""
        # outside MCP servers: loaded where a servers list is named (the SDK itself by their first call)
        from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
        from stepwise.remote_tools.catalog import RemoteTools
        from stepwise.remote_tools.dynamodb import DynamoRemoteToolCache
        from stepwise.remote_tools.personal import AccountTokens
        from stepwise.remote_tools.settings import RemoteToolSettings
        from stepwise.remote_tools.ssm import headers_for, load_servers

        s, r = self.settings, RemoteToolSettings()
        parameter = s.mcp_servers_parameter or ""
        caller = RemoteToolCaller(
            cache=DynamoRemoteToolCache(self._dynamodb.table(r.remote_tools_table)),
            servers=_mcp_servers,
            ledger=self.ledger,
            headers=lambda entry: headers_for(entry, s.secrets_cache_seconds),
            now=lambda: int(clock().timestamp()),
            limits=RemoteLimits(
                refresh_seconds=r.remote_tools_refresh_seconds,
                timeout_seconds=r.remote_tool_timeout_seconds,
                max_result_chars=r.remote_result_max_chars,
                breaker_failures=r.remote_breaker_failures,
                breaker_seconds=r.remote_breaker_seconds,
            ),
            accounts=AccountTokens(self.accounts, lambda: clock().timestamp()) if self.accounts else None,
        )
        return RemoteTools(
            lambda: load_servers(parameter, r.mcp_parameters_path, s.secrets_cache_seconds),
            caller,
            refresh=r.remote_tools_refresh,
            fresh_servers=lambda: load_servers(
                parameter, r.mcp_parameters_path, s.secrets_cache_seconds, force=True
            ),
        )

    @property
    def reminder_tools_setup(self) -> ReminderSetup | None:
        """The reminder tools' store, schedules and limits; None where no schedule target is deployed."""
        # the tools' catalog (as above)
        from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup

        s = self.settings
        if not s.reminder_target_arn:
            return None
        limits = ReminderLimits(
            s.default_timezone, s.max_reminders, s.min_checkin_interval_minutes, s.min_repeat_interval_minutes
        )
        return ReminderSetup(self.reminders, self.schedules, limits)

    @cached_property
    def mcp_endpoint_services(self) -> EndpointServices:
        """The /mcp endpoint's: the tokens, the turn's built-in tools, the audit log, the sequencer."""
        # the /mcp endpoint (the MCP SDK): the Mcp function's own
        from stepwise.audit.dynamodb import DynamoAuditLog
        from stepwise.mcp.endpoint import EndpointServices
        from stepwise.mcp.gate import GateLimits
        from stepwise.mcp.settings import EndpointSettings
        from stepwise.services import JOB_STARTING_TOOLS

        s, limits = self.settings, EndpointSettings()
        connections = self.connections
        if connections is None:
            raise RuntimeError("CONNECTIONS_TABLE is not configured")
        return EndpointServices(
            connections=connections,
            tools=lambda: self.tools.without(JOB_STARTING_TOOLS),  # a job reports to a chat, not a client
            audit=DynamoAuditLog(self._dynamodb.table(s.audit_table)),
            sequencer=lambda: self.sequencer,
            limits=GateLimits(limits.mcp_max_body_bytes, limits.mcp_requests_per_minute, s.allowed_users),
            clock=clock,
            new_id=ids.new_id,
        )

    @cached_property
    def app_services(self) -> AppServices:
        """The Mini App's: the bot token (initData's key), the rate counter, the built-in tools, the stores
        it shows, and a button press's services (Approve and Deny from the page)."""
        # the Mini App: the App function's own
        from stepwise.miniapp.gate import AppLimits
        from stepwise.miniapp.services import AppServices
        from stepwise.miniapp.settings import AppSettings
        from stepwise.services import JOB_STARTING_TOOLS
        from stepwise.tools.reads import Profiles

        s, app = self.settings, AppSettings()
        connections = self.connections
        if connections is None:
            raise RuntimeError("CONNECTIONS_TABLE is not configured (it keeps the page's rate counters)")
        zones = Profiles(self.reminders)
        return AppServices(
            bot_token=lambda: secrets.telegram_bot_token(s),
            count=connections.count_request,
            limits=AppLimits(requests_per_minute=app.app_requests_per_minute, allowed_users=s.allowed_users),
            tools=lambda: self.tools.without(JOB_STARTING_TOOLS),
            audit=self._audit,
            approvals=self.approvals,
            presses=lambda: self._press_services,
            chats=self.chats,
            connections=connections,
            jobs=self.jobs,
            usage=self.usage,
            timezone=zones.timezone,
            default_timezone=s.default_timezone,
            voice_replies=s.voice_transcriber != "off" and s.voice_speaker != "off",
            daily_token_budget=s.daily_token_budget,
            approval_timeout_seconds=s.approval_timeout_seconds,
            clock=clock,
            accounts=self.accounts,
            suggestions=self.suggestions,
            secretary_wait_seconds=s.secretary_suggestion_hours * 3600,
        )

    @cached_property
    def webhook_services(self) -> WebhookServices:
        # the webhook's: its function's own
        from stepwise.webhook import WebhookServices

        s = self.settings
        return WebhookServices(
            secret=secrets.telegram_webhook_secret(s),
            allowed_users=s.allowed_users,
            sequencer=lambda: self.sequencer,
            presses=lambda: self._press_services,
            clock=clock,
            media_limits=MediaLimits.from_settings(s),
            warmups=self.warmups,
            chats=lambda: self.chats,
            allowed_chats=s.allowed_chats,
            group_replies=s.group_replies,
            bot=lambda: self.bot_info.identity(self.telegram),
            business=lambda: self.business_connections,
            telegram=lambda: self.telegram,
            secretary=lambda: self.secretary_intake,
        )

    @cached_property
    def secretary_intake(self) -> Intake | None:
        """What the webhook needs for a contact's message, the owner's answer in person and Edit; None where
        secretary mode is not deployed."""
        # secretary mode (as above)
        from stepwise.history.dynamodb import DynamoMessageRepository
        from stepwise.secretary.intake import Intake

        connections, suggestions, s = self.business_connections, self.suggestions, self.settings
        if connections is None or suggestions is None:
            return None
        return Intake(
            connections=connections,
            suggestions=suggestions,
            sequencer=lambda: self.sequencer,
            history=lambda: DynamoMessageRepository(self._dynamodb.table(s.messages_table)),
            presses=lambda: self._press_services,
            telegram=lambda: self.telegram,
            new_id=ids.new_id,
            clock=clock,
            wait_seconds=s.secretary_suggestion_hours * 3600,
        )

    @cached_property
    def bot_info(self) -> BotInfo:
        """What getMe says of the bot, asked once per container (the webhook's own; turns keep theirs)."""
        return BotInfo()

    @cached_property
    def _press_services(self) -> PressServices:
        """What a button press needs (built, and its code imported, only when one comes)."""
        from stepwise.approvals.lifecycle import PressServices
        from stepwise.turn.workflow import StepFunctionsResumer

        return PressServices(
            approvals=self.approvals,
            telegram=lambda: self.telegram,
            resumer=StepFunctionsResumer(self._stepfunctions),
            clock=clock,
        )

    @cached_property
    def warmups(self) -> Warmups | None:
        """The webhook's warm-ups of the turn's next functions; None when they are off or not deployed."""
        s = WarmupSettings()
        names = (s.call_model_function, s.finish_turn_function, s.run_tools_function)
        if s.warmup_after_quiet_seconds <= 0 or not all(names):
            return None

        timeout = s.warmup_timeout_seconds
        config = Config(
            connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1, "mode": "standard"}
        )
        return Warmups(
            targets=WarmupTargets(*names),
            invoke=LambdaWarmer(LazyClient("lambda", config=config)),
            quiet_seconds=s.warmup_after_quiet_seconds,
            timeout_seconds=timeout,
        )


def _mcp_servers() -> RemoteServers:
    """The MCP client of the official SDK: imported only when an outside server must be reached."""
    from stepwise.remote_tools.mcp_client import McpHttpServers

    return McpHttpServers()


_runtime: Runtime | None = None


def get_runtime() -> Runtime:
    """The runtime of this process (of this Lambda container), built on first use."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime(get_settings())
    return _runtime


def reset() -> None:
    """Forget settings and adapters (the local emulation calls this between functions)."""
    swap(None)


def swap(runtime: Runtime | None) -> Runtime | None:
    """Make `runtime` this process's runtime (None: build one on next use) and return the one it replaces.
    The local emulation keeps one per function, as Lambda keeps one per warm container."""
    global _runtime
    get_settings.cache_clear()
    previous, _runtime = _runtime, runtime
    return previous
