"""The in-memory fakes used by the unit tests behave like the DynamoDB adapters (moto, template tables)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from stepwise.approvals.dynamodb import DynamoApprovalStore
from stepwise.approvals.memory import InMemoryApprovalStore
from stepwise.approvals.models import ApprovalCall, ApprovalRequest
from stepwise.audit.dynamodb import DynamoAuditLog
from stepwise.audit.log import AuditEntry
from stepwise.audit.memory import InMemoryAuditLog
from stepwise.chats.dynamodb import DynamoChatStore
from stepwise.chats.memory import InMemoryChatStore
from stepwise.history.dynamodb import DynamoMessageRepository
from stepwise.history.memory import InMemoryMessageRepository
from stepwise.history.models import StoredMessage
from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise.tasks.memory import InMemoryTaskRepository
from stepwise.turns.dynamodb import DynamoTurnStore
from stepwise.turns.memory import InMemoryTurnStore
from stepwise.turns.models import ModelStep, Reply, TurnMeta
from stepwise_local.template import Template


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        resource = boto3.resource(
            "dynamodb", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        for table in Template().tables():  # own names: a running local stack may share moto's backend
            resource.meta.client.create_table(
                **{**table.create_args, "TableName": f"Adapters{table.logical_id}"}
            )
        yield _Prefixed(resource)


class _Prefixed:
    """Hands out this suite's own tables under the template's names."""

    def __init__(self, resource: Any) -> None:
        self._resource = resource

    def Table(self, name: str) -> Any:  # boto3 spells it this way
        return self._resource.Table(f"Adapters{name}")


ADAPTERS = ["memory", "dynamodb"]


def make(kind: str, dynamodb: Any, memory: Any, dynamo: Any) -> Any:
    return memory() if kind == "memory" else dynamo(dynamodb)


_chat_ids = iter(range(10_000, 20_000))


@pytest.mark.parametrize("kind", ADAPTERS)
def test_messages(kind: str, dynamodb: Any) -> None:
    repo = make(
        kind, dynamodb, InMemoryMessageRepository, lambda d: DynamoMessageRepository(d.Table("MessagesTable"))
    )
    chat = next(_chat_ids)
    messages = [
        StoredMessage(
            id=f"m{n}",
            chat_id=chat,
            role="user" if n % 2 == 0 else "assistant",
            content=f"text {n}",
            created_at=f"2026-11-22T10:00:0{n}.000Z",
            tool_calls=[{"name": "add_task"}] if n == 1 else [],
        )
        for n in range(5)
    ]
    assert all(repo.add(m) for m in messages)
    assert not repo.add(messages[0]), "adding the same message again is a no-op"
    assert [m.id for m in repo.recent(chat, 3)] == ["m2", "m3", "m4"]
    assert [m.id for m in repo.after(chat, "")] == [f"m{n}" for n in range(5)]
    assert [m.id for m in repo.after(chat, messages[2].sort_key)] == ["m3", "m4"]
    assert [m.id for m in repo.between(chat, messages[1].sort_key, messages[3].sort_key)] == [
        "m1",
        "m2",
        "m3",
    ]
    assert repo.recent(chat, 5)[1].tool_calls == [{"name": "add_task"}]
    assert repo.recent(next(_chat_ids), 5) == []


@pytest.mark.parametrize("kind", ADAPTERS)
def test_tasks(kind: str, dynamodb: Any) -> None:
    repo = make(kind, dynamodb, InMemoryTaskRepository, lambda d: DynamoTaskRepository(d.Table("TasksTable")))
    user, other = next(_chat_ids), next(_chat_ids)
    assert [repo.add(user, t, "", "t0").task_id for t in ("a", "b")] == [1, 2]
    assert repo.add(other, "x", "", "t0").task_id == 1
    assert repo.complete(user, 1, "t1").status == "completed"
    assert [t.task_id for t in repo.list(user, "pending")] == [2]
    assert [t.task_id for t in repo.list(user, "all")] == [1, 2]
    assert repo.update(user, 2, title="B", description=None, now="t2").title == "B"
    for missing in (0, 3, -1):
        assert repo.get(user, missing) is None
        assert repo.update(user, missing, title="z", description=None, now="t") is None
        assert repo.complete(user, missing, "t") is None
        assert repo.delete(user, missing) is None
    assert repo.delete(user, 1).title == "a"
    assert repo.get(user, 1) is None and repo.get(other, 1).title == "x"
    assert repo.add(user, "c", "", "t3").task_id == 3, "ids are never reused"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_chats(kind: str, dynamodb: Any) -> None:
    store = make(kind, dynamodb, InMemoryChatStore, lambda d: DynamoChatStore(d.Table("ChatsTable")))
    chat = next(_chat_ids)
    for _ in range(3):
        record = store.record_message(chat, 5, due_at=3)
    assert record.message_count == 3 and record.due
    assert chat in set(store.due_chats()) and chat in set(store.all_chats())
    current = store.get(chat)
    assert store.advance(current, summarized_key="k1", summarized=3, summary="s1", now="n", still_due=False)
    assert not store.advance(
        current, summarized_key="k2", summarized=3, summary="s2", now="n", still_due=False
    ), "a run that saw an older watermark cannot move it"
    after = store.get(chat)
    assert (after.summarized_key, after.summarized_count, after.summary, after.due) == ("k1", 3, "s1", False)
    assert chat not in set(store.due_chats())
    assert store.advance(after, summarized_key="k2", summarized=1, summary="s2", now="n", still_due=True)
    assert store.get(chat).due and store.get(next(_chat_ids)) is None


@pytest.mark.parametrize("kind", ADAPTERS)
def test_approvals(kind: str, dynamodb: Any) -> None:
    store = make(
        kind,
        dynamodb,
        InMemoryApprovalStore,
        lambda d: DynamoApprovalStore(d.Table("ApprovalsTable"), ttl_seconds=60),
    )
    request = ApprovalRequest(
        approval_id=f"a{next(_chat_ids)}",
        turn_id="t",
        chat_id=1,
        user_id=2,
        step=0,
        calls=[ApprovalCall(tool_use_id="u", description="Delete task #1.")],
        created_at="c",
    )
    store.create(request)
    store.attach_token(request.approval_id, "token")
    store.attach_message(request.approval_id, 77, "<b>html</b>")
    assert store.decide(request.approval_id, "approved", "d", 2)
    assert not store.decide(request.approval_id, "denied", "d", 2), "decided once"
    stored = store.get(request.approval_id)
    assert (stored.status, stored.task_token, stored.message_id, stored.decided_by) == (
        "approved",
        "token",
        77,
        2,
    )
    assert stored.calls == request.calls and store.get("missing") is None


@pytest.mark.parametrize("kind", ADAPTERS)
def test_turn_records(kind: str, dynamodb: Any) -> None:
    store = make(
        kind, dynamodb, InMemoryTurnStore, lambda d: DynamoTurnStore(d.Table("TurnsTable"), ttl_days=1)
    )
    turn = f"turn-{next(_chat_ids)}"
    store.put_meta(
        TurnMeta(
            turn_id=turn,
            chat_id=1,
            user_id=1,
            update_id=1,
            user_message_id="m",
            first_key="a",
            last_key="b",
            created_at="c",
        )
    )
    assert store.get_meta(turn).last_key == "b"
    for n in (1, 0):
        store.put_step(
            turn,
            ModelStep(
                step=n,
                content=[{"type": "text", "text": str(n)}],
                stop_reason="end_turn",
                model="m",
                message_id=f"r{n}",
                created_at="c",
            ),
        )
    assert [s.step for s in store.steps(turn)] == [0, 1] and store.get_step(turn, 1).text == "1"
    assert (
        store.put_reply(turn, Reply(text="one", source="model", message_id="r", created_at="c")).text == "one"
    )
    store.mark_sent(turn, 1)
    kept = store.put_reply(turn, Reply(text="two", source="model", message_id="r2", created_at="c"))
    assert (kept.text, kept.sent_chunks) == ("one", 1), "a reply being delivered is never replaced"
    with pytest.raises(KeyError):
        store.get_meta("missing")
    with pytest.raises(KeyError):
        store.get_step(turn, 9)


@pytest.mark.parametrize("kind", ADAPTERS)
def test_audit(kind: str, dynamodb: Any) -> None:
    log = make(kind, dynamodb, InMemoryAuditLog, lambda d: DynamoAuditLog(d.Table("AuditTable")))
    user = next(_chat_ids)
    for n in range(2):
        log.record(
            AuditEntry(
                user_id=user,
                chat_id=user,
                turn_id="t",
                tool_use_id=f"u{n}",
                tool="add_task",
                arguments={"title": f"t{n}"},
                outcome="ok",
                result="Added",
                approval="not_needed",
                created_at=f"2026-11-22T10:00:0{n}.000Z",
            )
        )
    assert [e.arguments["title"] for e in log.entries(user)] == ["t0", "t1"]
