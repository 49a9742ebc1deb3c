"""The composition root: real adapters built from the settings, once per Lambda container."""

from __future__ import annotations

from functools import cache, cached_property
from typing import Any

import boto3

from stepwise import secrets
from stepwise.approvals.dynamodb import DynamoApprovalStore
from stepwise.approvals.press import PressServices
from stepwise.audit.dynamodb import DynamoAuditLog
from stepwise.chats.dynamodb import DynamoChatStore
from stepwise.config import Settings, get_settings
from stepwise.history.dynamodb import DynamoMessageRepository
from stepwise.memory.service import MemoryService
from stepwise.memory.summarizer import ExtractiveSummarizer, ModelSummarizer, Summarizer, SummarizeServices
from stepwise.model.types import ChatModel
from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise.telegram.client import BotApiClient
from stepwise.tools.catalog import build_registry
from stepwise.turn.services import TurnServices
from stepwise.turns.dynamodb import DynamoTurnStore
from stepwise.webhook import WebhookServices
from stepwise.workflow import StepFunctionsResumer, StepFunctionsStarter

APPROVAL_RECORD_GRACE_SECONDS = 86_400  # approval records outlive their timeout by a day, then expire


class Runtime:
    """Lazily built adapters; each is created on first use and reused across warm invocations."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def _dynamodb(self) -> Any:
        return boto3.resource("dynamodb")

    @cached_property
    def telegram(self) -> BotApiClient:
        s = self.settings
        return BotApiClient(
            secrets.telegram_bot_token(s),
            s.telegram_api_base_url,
            timeout_seconds=s.telegram_timeout_seconds,
            max_retry_after_seconds=s.telegram_max_retry_after_seconds,
        )

    @cached_property
    def model(self) -> ChatModel:
        s = self.settings
        if not s.uses_anthropic:
            from stepwise.model.offline import OfflineModel

            return OfflineModel()
        from stepwise.model.anthropic_model import AnthropicModel

        return AnthropicModel(
            secrets.anthropic_api_key(s),
            s.anthropic_base_url,
            s.anthropic_timeout_seconds,
            s.anthropic_max_retries,
        )

    @cached_property
    def approvals(self) -> DynamoApprovalStore:
        s = self.settings
        return DynamoApprovalStore(
            self._dynamodb.Table(s.approvals_table),
            s.approval_timeout_seconds + APPROVAL_RECORD_GRACE_SECONDS,
        )

    @cached_property
    def chats(self) -> DynamoChatStore:
        return DynamoChatStore(self._dynamodb.Table(self.settings.chats_table))

    @cached_property
    def memory(self) -> MemoryService | None:
        """Bedrock Titan embeddings and S3 Vectors, or the local backend; None when no index is configured."""
        s = self.settings
        if s.memory_backend == "local":
            from stepwise.memory.local import local_embedder, local_index

            return MemoryService(local_embedder(s.embedding_dimensions), local_index())
        if not s.vector_bucket_name:
            return None
        from stepwise.memory.embedder import BedrockTitanEmbedder
        from stepwise.memory.vector_index import S3VectorsIndex

        return MemoryService(
            BedrockTitanEmbedder(
                boto3.client("bedrock-runtime"), s.embedding_model_id, s.embedding_dimensions
            ),
            S3VectorsIndex(boto3.client("s3vectors"), s.vector_bucket_name, s.vector_index_name),
        )

    @cached_property
    def summarize_services(self) -> SummarizeServices:
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
            messages=DynamoMessageRepository(self._dynamodb.Table(s.messages_table)),
            memory=memory,
            summarizer=summarizer,
            history_limit=s.history_limit,
            threshold=s.summary_threshold,
            batch_limit=s.summary_batch_limit,
        )

    @cached_property
    def turn_services(self) -> TurnServices:
        s = self.settings
        return TurnServices(
            messages=DynamoMessageRepository(self._dynamodb.Table(s.messages_table)),
            turns=DynamoTurnStore(self._dynamodb.Table(s.turns_table), s.turn_ttl_days),
            tasks=DynamoTaskRepository(self._dynamodb.Table(s.tasks_table)),
            audit=DynamoAuditLog(self._dynamodb.Table(s.audit_table)),
            approvals=self.approvals,
            chats=self.chats,
            telegram=lambda: self.telegram,
            model=lambda: self.model,
            model_name=s.anthropic_model,
            tools=build_registry(),
            max_tokens=s.anthropic_max_tokens,
            history_limit=s.history_limit,
            max_tool_steps=s.max_tool_steps,
            approval_timeout_seconds=s.approval_timeout_seconds,
            fallback_model=s.fallback_model,
            memory=self.memory,
            memory_top_k=s.memory_top_k,
            summary_threshold=s.summary_threshold,
        )

    @cached_property
    def webhook_services(self) -> WebhookServices:
        s = self.settings
        if not s.state_machine_arn:
            raise RuntimeError("STATE_MACHINE_ARN is not configured")
        stepfunctions = boto3.client("stepfunctions")
        return WebhookServices(
            secret=secrets.telegram_webhook_secret(s),
            allowed_users=s.allowed_users,
            starter=StepFunctionsStarter(stepfunctions, s.state_machine_arn),
            presses=PressServices(
                approvals=self.approvals,
                telegram=lambda: self.telegram,
                resumer=StepFunctionsResumer(stepfunctions),
            ),
            approval_timeout_seconds=s.approval_timeout_seconds,
        )


@cache
def get_runtime() -> Runtime:
    """The runtime of this process."""
    return Runtime(get_settings())


def reset() -> None:
    """Forget settings and adapters (the local emulation calls this between functions)."""
    get_runtime.cache_clear()
    get_settings.cache_clear()
