"""Unit-test fixtures: the turn's ports as in-memory fakes, a fixed clock and predictable ids."""

from __future__ import annotations

import itertools

import pytest
from support.turn_fakes import Clock, ScriptedModel

from stepwise.approvals.memory import InMemoryApprovalStore
from stepwise.audit.memory import InMemoryAuditLog
from stepwise.chats.memory import InMemoryChatStore
from stepwise.history.memory import InMemoryMessageRepository
from stepwise.memory.embedder import LocalHashEmbedder
from stepwise.memory.service import MemoryService
from stepwise.memory.vector_index import InMemoryVectorIndex
from stepwise.tasks.memory import InMemoryTaskRepository
from stepwise.telegram.fake import InMemoryTelegram
from stepwise.tools.catalog import build_registry
from stepwise.turn.services import TurnServices
from stepwise.turns.memory import InMemoryTurnStore


@pytest.fixture
def telegram() -> InMemoryTelegram:
    return InMemoryTelegram()


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def services(telegram: InMemoryTelegram, model: ScriptedModel) -> TurnServices:
    counter = itertools.count(1)
    return TurnServices(
        messages=InMemoryMessageRepository(),
        turns=InMemoryTurnStore(),
        tasks=InMemoryTaskRepository(),
        audit=InMemoryAuditLog(),
        approvals=InMemoryApprovalStore(),
        chats=InMemoryChatStore(),
        memory=MemoryService(
            LocalHashEmbedder(), InMemoryVectorIndex(), new_key=lambda: f"k{next(counter):04d}"
        ),
        tools=build_registry(),
        telegram=lambda: telegram,
        model=lambda: model,
        model_name="claude-test",
        history_limit=20,
        clock=Clock(),
        new_id=lambda: f"id{next(counter):04d}",
    )
