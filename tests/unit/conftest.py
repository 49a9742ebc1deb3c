"""Unit-test fixtures: the turn's ports as in-memory fakes, a fixed clock and predictable ids."""

from __future__ import annotations

import itertools

import pytest
from support.turn_fakes import Clock, RecordingStarter, ScriptedModel, turn_settings

from stepwise.inbox.sequencer import Sequencer
from stepwise.memory.service import MemoryService
from stepwise.services import Models, Outbound, Prompt, Stores, Tools, TurnServices
from stepwise.tools.catalog import build_registry
from stepwise.tools.reads import MemoryRecall, Profiles
from stepwise.tools.registry import ToolRegistry
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram
from stepwise_local.in_memory.turn_records import InMemoryTurnStore
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex


@pytest.fixture
def telegram() -> InMemoryTelegram:
    return InMemoryTelegram()


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def ledger() -> InMemoryToolCallLedger:
    return InMemoryToolCallLedger()


@pytest.fixture
def tasks(ledger: InMemoryToolCallLedger) -> InMemoryTaskRepository:
    return InMemoryTaskRepository(ledger)


@pytest.fixture
def reminders() -> InMemoryReminderStore:
    return InMemoryReminderStore()


@pytest.fixture
def schedules() -> InMemorySchedules:
    return InMemorySchedules()


@pytest.fixture
def memory() -> MemoryService:
    """The memory service the tools are bound to (the states see it only through `MemoryRecall`)."""
    keys = itertools.count(1)
    return MemoryService(LocalHashEmbedder(), InMemoryVectorIndex(), new_key=lambda: f"k{next(keys):04d}")


@pytest.fixture
def registry(
    tasks: InMemoryTaskRepository,
    ledger: InMemoryToolCallLedger,
    memory: MemoryService,
    reminders: InMemoryReminderStore,
    schedules: InMemorySchedules,
) -> ToolRegistry:
    """The whole catalog, as a deployment with memory and reminders builds it, on this test's stores."""
    setup = ReminderSetup(reminders, schedules, ReminderLimits())
    return build_registry(tasks=tasks, ledger=ledger, memory=memory, reminders=setup)


@pytest.fixture
def services(
    telegram: InMemoryTelegram,
    model: ScriptedModel,
    reminders: InMemoryReminderStore,
    memory: MemoryService,
    registry: ToolRegistry,
) -> TurnServices:
    counter = itertools.count(1)
    clock = Clock()
    sequencer = Sequencer(inbox=InMemoryChatInbox(), starter=RecordingStarter(), clock=clock)
    return TurnServices(
        stores=Stores(
            messages=InMemoryMessageRepository(),
            turns=InMemoryTurnStore(),
            audit=InMemoryAuditLog(),
            approvals=InMemoryApprovalStore(),
            chats=InMemoryChatStore(),
            profiles=Profiles(reminders),
            memory=MemoryRecall(memory),
        ),
        outbound=Outbound(telegram=lambda: telegram, sequencer=lambda: sequencer),
        models=Models(chat=lambda: model),
        tools=Tools(built_in=lambda: registry),
        prompt=Prompt(),
        settings=turn_settings(),
        clock=clock,
        new_id=lambda: f"id{next(counter):04d}",
    )
