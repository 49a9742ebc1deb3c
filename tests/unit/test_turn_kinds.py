"""What a turn is, as one tagged value: the kinds queued messages and turn records carry, read from what is
stored today and from what was stored before issue 40 (queued messages wait for days; a turn may be in flight
across a deploy); canned answers are the turn's reply, not model steps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.turn_fakes import turn_meta, turn_start

from stepwise.inbox.models import Fired, JobEnded, QueuedMessage, Typed
from stepwise.inbox.outside_call import OutsideCall
from stepwise.services import TurnServices
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.job_turn import JOB_TURN
from stepwise.states.load_context import load_context
from stepwise.states.policy import CHAT_TURN, OUTSIDE_CALL_TURN, policy_of
from stepwise.turn_records.models import (
    Chat,
    Checkin,
    Command,
    JobReport,
    JobRun,
    Reminder,
    RulesCommand,
    TurnMeta,
)

QUEUED = {"chat_id": 7, "update_id": 5, "user_id": 7, "id": "m1", "text": "stretch", "received_at": "t"}
CALL = {
    "tool": "delete_task",
    "arguments": {"task_id": 3},
    "connection": "laptop",
    "description": "Delete #3",
}


@pytest.mark.parametrize(
    ("stored", "kind"),
    [
        ({}, Typed()),
        ({"kind": "message"}, Typed()),
        ({"kind": "reminder", "reminder_id": 3}, Fired(kind="reminder", reminder_id=3)),
        ({"kind": "checkin", "reminder_id": 4}, Fired(kind="checkin", reminder_id=4)),
        ({"kind": "outside_call", "outside_call": CALL}, OutsideCall(**CALL)),
        (
            {"kind": "job", "job": {"number": 2, "title": "Tidy", "status": "done"}},
            JobEnded(number=2, title="Tidy", status="done"),
        ),
    ],
)
def test_a_message_queued_before_issue_40_reads_as_its_kind(stored: dict[str, Any], kind: object) -> None:
    message = QueuedMessage.model_validate_json(json.dumps({**QUEUED, **stored}))
    assert message.kind == kind
    again = QueuedMessage.model_validate_json(message.model_dump_json(exclude_none=True))
    assert again == message, "today's shape reads back the same"


def test_a_queued_message_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        QueuedMessage.model_validate({**QUEUED, "kind": "telegram"})


JOB = {"number": 4, "title": "Tidy up", "task": "t", "deadline": "2026-11-22T09:15:00.000Z"}


@pytest.mark.parametrize(
    ("stored", "kind"),
    [
        ({}, Chat()),
        ({"reminder": "stretch"}, Reminder(text="stretch")),
        ({"checkin": {"number": 2, "text": "review"}}, Checkin(number=2, text="review")),
        ({"command": "/help", "model_override": None}, Command(text="/help")),
        ({"model_override": "command"}, RulesCommand()),
        ({"outside_call": CALL}, OutsideCall(**CALL)),
        ({"job": JOB}, JobRun(**JOB)),
        ({"job_report": "✅ done"}, JobReport(report="✅ done")),
    ],
)
def test_a_turn_recorded_before_issue_40_reads_as_its_kind(stored: dict[str, Any], kind: object) -> None:
    base = turn_meta().model_dump(exclude={"kind", "fallback"})
    meta = TurnMeta.model_validate_json(json.dumps({**base, "notices_only": False, **stored}))
    assert meta.kind == kind and not meta.fallback
    assert TurnMeta.model_validate_json(meta.model_dump_json()) == meta


def test_a_turn_that_fell_back_before_issue_40_still_has() -> None:
    base = turn_meta().model_dump(exclude={"kind", "fallback"})
    meta = TurnMeta.model_validate({**base, "model_override": "rules", "fallback_decisions": 1})
    assert meta.fallback and meta.kind == Chat()


def test_each_kind_has_its_policy() -> None:
    assert policy_of(JobRun(**JOB)) is JOB_TURN and not JOB_TURN.holds_chat
    assert policy_of(OutsideCall(**CALL)) is OUTSIDE_CALL_TURN and OUTSIDE_CALL_TURN.holds_chat
    for kind in (Chat(), Command(text="/help"), RulesCommand(), Reminder(text="r"), JobReport(report="r")):
        assert policy_of(kind) is CHAT_TURN


@pytest.mark.parametrize("text", ["/help", "/connect laptop"])
def test_a_canned_answer_is_the_turns_reply_and_no_model_step(services: TurnServices, text: str) -> None:
    start = turn_start(services, text)
    load_context(LoadContextInput(turn=start.turn), services)
    reply = services.stores.turns.get_reply(start.turn.turn_id)
    assert reply is not None and reply.source == "command"
    assert services.stores.turns.steps(start.turn.turn_id) == []
    load_context(LoadContextInput(turn=start.turn), services)  # retried: the same reply, nothing new
    assert services.stores.turns.get_reply(start.turn.turn_id) == reply
