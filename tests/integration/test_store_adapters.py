"""The in-memory fakes used by the unit tests behave like the DynamoDB adapters (moto, template tables)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from stepwise.approvals.dynamodb import DynamoApprovalStore
from stepwise.approvals.models import ApprovalCall, ApprovalRequest, Requester
from stepwise.audit.dynamodb import DynamoAuditLog
from stepwise.audit.log import AuditEntry
from stepwise.aws.dynamo_tables import PlainValuesTables
from stepwise.chats.dynamodb import DynamoChatStore
from stepwise.connections.dynamodb import DynamoConnectionStore
from stepwise.connections.models import Connection, token_hash
from stepwise.connections.store import NameTaken
from stepwise.history.dynamodb import DynamoMessageRepository
from stepwise.history.models import StoredMessage
from stepwise.jobs.dynamodb import DynamoJobStore
from stepwise.jobs.models import Job
from stepwise.ledger.dynamodb import DynamoToolCallLedger
from stepwise.ledger.models import CallAlreadyRecorded, Once
from stepwise.reminders.dynamodb import DynamoReminderStore
from stepwise.reminders.firing import reminder_conversation
from stepwise.reminders.models import Reminder
from stepwise.reminders.store import Profile
from stepwise.secretary.connections import SecretaryConnection
from stepwise.secretary.dynamodb import DynamoBusinessConnectionStore
from stepwise.secretary.owners import OwnerSettings
from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise.tasks.models import Task
from stepwise.telegram.conversation import Conversation
from stepwise.turn_records.dynamodb import DynamoTurnStore
from stepwise.turn_records.models import AppButton, ModelStep, NewToken, NewTopic, Reply, TurnMeta
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.connections import InMemoryConnectionStore
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.jobs import InMemoryJobStore
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.secretary import InMemoryBusinessConnectionStore
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.turn_records import InMemoryTurnStore
from stepwise_local.template import Template


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        resource = boto3.resource("dynamodb", region_name="us-east-1", **credentials)
        for prefix in ("Adapters", "Plain"):  # own names: a running local stack may share moto's backend
            for table in Template().tables():
                resource.meta.client.create_table(
                    **{**table.create_args, "TableName": f"{prefix}{table.logical_id}"}
                )
        plain = PlainValuesTables(boto3.client("dynamodb", region_name="us-east-1", **credentials))
        yield _Prefixed(resource.Table, "Adapters", _Prefixed(plain.table, "Plain"))


class _Prefixed:
    """Hands out this suite's own tables under the template's names: boto3's resource tables, and (`plain`,
    tables of their own) the runtime's tables over the low-level client (`stepwise.aws.dynamo_tables`)."""

    def __init__(self, table: Any, prefix: str, plain: _Prefixed | None = None) -> None:
        self._table = table
        self._prefix = prefix
        self.plain = plain

    def Table(self, name: str) -> Any:  # boto3 spells it this way
        return self._table(f"{self._prefix}{name}")


# "plain": the same adapters over the tables the runtime builds (the same values in and out as the resource's)
ADAPTERS = ["memory", "dynamodb", "plain"]


def tables_of(kind: str, dynamodb: Any) -> Any:
    """The tables an adapter of `kind` ("dynamodb" or "plain") is built on."""
    return dynamodb if kind == "dynamodb" else dynamodb.plain


def make(kind: str, dynamodb: Any, memory: Any, dynamo: Any) -> Any:
    if kind == "memory":
        return memory()
    return dynamo(tables_of(kind, dynamodb))


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
    assert [m.id for m in repo.recent(Conversation(chat), 3)] == ["m2", "m3", "m4"]
    assert [m.id for m in repo.after(Conversation(chat), "")] == [f"m{n}" for n in range(5)]
    assert [m.id for m in repo.after(Conversation(chat), messages[2].sort_key)] == ["m3", "m4"]
    assert [m.id for m in repo.between(Conversation(chat), messages[1].sort_key, messages[3].sort_key)] == [
        "m1",
        "m2",
        "m3",
    ]
    assert repo.recent(Conversation(chat), 5)[1].tool_calls == [{"name": "add_task"}]
    assert repo.recent(Conversation(next(_chat_ids)), 5) == []


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
    chat = Conversation(next(_chat_ids))
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
    assert store.get(chat).due and store.get(Conversation(next(_chat_ids))) is None
    assert store.get(chat).window_key == "", "the window starts at the chat's beginning"
    store.set_window(chat, "2026-11-22T09:00:00.000Z#m1")
    moved = store.get(chat)
    assert moved.window_key == "2026-11-22T09:00:00.000Z#m1" and moved.summary == "s2" and moved.due
    assert moved.last_user_at == "", "only messages the user wrote set last_user_at"
    store.record_message(chat, 5, due_at=3, written_at="2026-11-23T09:00:00.000Z")
    store.record_message(chat, 5, due_at=3)  # the reply
    assert store.get(chat).last_user_at == "2026-11-23T09:00:00.000Z"
    assert store.get(chat).stable_prefix_tokens == 0, "not measured yet"
    store.set_stable_prefix_tokens(chat, 2738)
    measured = store.get(chat)
    assert measured.stable_prefix_tokens == 2738 and measured.window_key == "2026-11-22T09:00:00.000Z#m1"
    assert measured.title == "", "no group title given yet"
    store.record_message(chat, 5, due_at=3, written_at="2026-11-23T09:01:00.000Z", title="Family")
    store.record_message(chat, 5, due_at=3)  # the reply: the title stays
    titled = store.get(chat)
    assert titled.title == "Family" and titled.last_user_at == "2026-11-23T09:01:00.000Z"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_chat_failing_to_summarize_is_counted_and_set_aside_until_its_next_message(
    kind: str, dynamodb: Any
) -> None:
    store = make(kind, dynamodb, InMemoryChatStore, lambda d: DynamoChatStore(d.Table("ChatsTable")))
    chat = Conversation(next(_chat_ids))
    for _ in range(3):
        store.record_message(chat, 5, due_at=3)
    assert store.record_summary_failure(chat, give_up_after=2) == 1
    assert store.get(chat).due and store.get(chat).summary_failures == 1
    assert store.record_summary_failure(chat, give_up_after=2) == 2
    assert not store.get(chat).due and chat not in set(store.due_chats()), "set aside"
    store.record_message(chat, 5, due_at=3)
    assert store.get(chat).due, "its next message marks it due again"
    current = store.get(chat)
    assert store.advance(current, summarized_key="k1", summarized=2, summary="", now="n", still_due=True)
    assert store.get(chat).summary_failures == 0 and store.get(chat).due, "the count starts again"
    assert store.record_summary_failure(Conversation(next(_chat_ids)), give_up_after=2) == 0, (
        "no such chat: no record"
    )


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
        requester=Requester(kind="job", number=3, name="Tidy up"),
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
    assert stored.requester == Requester(kind="job", number=3, name="Tidy up")


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
    # a reply with a new token: its seed, until it is settled
    shown, new = f"turn-{next(_chat_ids)}", NewToken(user_id=1, connection="laptop", kept_text="k", seed="5e")
    reply = Reply(text="t", source="command", message_id="r", created_at="c", extra=new)
    store.put_reply(shown, reply)
    pending = store.get_reply(shown)
    assert pending is not None and pending.extra == new
    store.settle_token(shown, revoked=True)
    settled = store.get_reply(shown)
    assert settled is not None and settled.extra == new.model_copy(update={"seed": None, "revoked": True})
    with pytest.raises(KeyError):
        store.get_meta("missing")
    with pytest.raises(KeyError):
        store.get_step(turn, 9)


def test_a_reply_recorded_before_issue_40_reads_with_its_extra(dynamodb: Any) -> None:
    """A turn in flight across the deploy: its reply's extra was kept in flat fields of `data`."""
    table = dynamodb.Table("TurnsTable")
    store = DynamoTurnStore(table, ttl_days=1)
    base = {"text": "t", "source": "command", "message_id": "r", "created_at": "c"}
    flat = {"kept_text": "k", "new_token": {"user_id": 1, "connection": "laptop"}, "new_topic_named": False}
    token_turn, topic_turn, app_turn = (f"turn-{next(_chat_ids)}" for _ in range(3))
    table.put_item(
        Item={
            "turn_id": token_turn,
            "sk": "reply",
            "data": json.dumps({**base, **flat, "new_topic": None, "app_button": None}),
            "sent_chunks": 0,
            "token_seed": "5e",
        }
    )
    topic = {**base, "kept_text": "k", "new_token": None, "new_topic": "Trip", "new_topic_named": True}
    table.put_item(Item={"turn_id": topic_turn, "sk": "reply", "data": json.dumps(topic), "topic_thread": 9})
    button = {
        **base,
        "kept_text": None,
        "new_token": None,
        "app_button": {"text": "Open", "url": "https://a"},
    }
    table.put_item(Item={"turn_id": app_turn, "sk": "reply", "data": json.dumps(button)})
    token = store.get_reply(token_turn)
    assert token is not None and token.extra == NewToken(
        user_id=1, connection="laptop", kept_text="k", seed="5e"
    )
    store.settle_token(token_turn, revoked=True)
    settled = store.get_reply(token_turn)
    assert settled is not None and isinstance(settled.extra, NewToken) and settled.extra.revoked
    opened = store.get_reply(topic_turn)
    assert opened is not None and opened.extra == NewTopic(name="Trip", named=True, kept_text="k", thread=9)
    app = store.get_reply(app_turn)
    assert app is not None and app.extra == AppButton(text="Open", url="https://a") and app.kept_text == "t"


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


def tool_calls(kind: str, dynamodb: Any) -> Any:
    return make(
        kind,
        dynamodb,
        InMemoryToolCallLedger,
        lambda d: DynamoToolCallLedger(d.Table("ToolCallsTable"), ttl_days=1),
    )


def task_store(kind: str, dynamodb: Any) -> tuple[Any, Any]:
    """A task repository and the ledger its once-per-call records go to."""
    ledger = tool_calls(kind, dynamodb)
    if kind == "memory":
        return InMemoryTaskRepository(ledger), ledger
    tables = tables_of(kind, dynamodb)
    return DynamoTaskRepository(tables.Table("TasksTable"), ledger), ledger


def _render(task: Task) -> str:
    return f"#{task.task_id} {task.title} {task.status}"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_tool_call_ledger(kind: str, dynamodb: Any) -> None:
    ledger = tool_calls(kind, dynamodb)
    call = f"turn-{next(_chat_ids)}:toolu_1"
    assert ledger.get(call) is None
    first = ledger.record_intent(call, "Remembered (fact-a): tea")
    assert (first.call_id, first.kind, first.result) == (call, "intent", "Remembered (fact-a): tea")
    assert ledger.record_intent(call, "something else") == first, "the first intent stays"
    assert ledger.get(call) == first
    if kind != "memory":
        tables = tables_of(kind, dynamodb)
        item = tables.Table("ToolCallsTable").get_item(Key={"call_id": call})["Item"]
        assert time.time() < item["expires_at"] <= time.time() + 86_400


@pytest.mark.parametrize("kind", ADAPTERS)
def test_task_changes_happen_once_per_tool_call(kind: str, dynamodb: Any) -> None:
    repo, ledger = task_store(kind, dynamodb)
    user = next(_chat_ids)

    def once(n: int) -> Once[Task]:
        return Once(f"turn-{user}:toolu_{n}", _render)

    assert repo.add(user, "a", "", "t0", once=once(1)).task_id == 1
    with pytest.raises(CallAlreadyRecorded) as again:
        repo.add(user, "a", "", "t1", once=once(1))
    assert again.value.record.result == "#1 a pending"
    assert repo.add(user, "a", "", "t0", once=once(2)).task_id == 2, "another call, another task"
    assert repo.add(user, "b", "", "t0").task_id == 3, "no id was skipped"
    changes = [
        (lambda o: repo.update(user, 1, title="A", description=None, now="t2", once=o), "#1 A pending"),
        (lambda o: repo.complete(user, 1, "t3", once=o), "#1 A completed"),
        (lambda o: repo.delete(user, 1, once=o), "#1 A completed"),
    ]
    for n, (change, result) in enumerate(changes, start=10):
        assert _render(change(once(n))) == result
        before = [t.model_dump() for t in repo.list(user, "all")]
        with pytest.raises(CallAlreadyRecorded) as again:
            change(once(n))
        assert again.value.record.result == result
        assert [t.model_dump() for t in repo.list(user, "all")] == before, "the second run changed nothing"
        assert ledger.get(once(n).call_id).kind == "done"
    assert repo.delete(user, 9, once=once(20)) is None
    assert ledger.get(once(20).call_id) is None, "a call that changed nothing records nothing"
    assert [t.title for t in repo.list(user, "all")] == ["a", "b"]


@pytest.mark.parametrize("theirs_kept", [True, False])
def test_a_lost_counter_race_takes_the_next_id(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch, theirs_kept: bool
) -> None:
    (repo, ledger), (other, _) = task_store("dynamodb", dynamodb), task_store("dynamodb", dynamodb)
    user = next(_chat_ids)
    read = DynamoTaskRepository._last_id
    raced: list[int] = []

    def racing(self: DynamoTaskRepository, user_id: int) -> int:
        last = read(self, user_id)
        if self is repo and not raced:  # another writer adds a task (and deletes it) between read and write
            raced.append(last)
            other.add(user_id, "theirs", "", "t0")
            if not theirs_kept:
                other.delete(user_id, 1)
        return last

    monkeypatch.setattr(DynamoTaskRepository, "_last_id", racing)
    mine = repo.add(user, "mine", "", "t1", once=Once(f"turn-{user}:toolu_1", _render))
    assert raced == [0] and mine.task_id == 2, "the id the other writer took is never reused"
    expected = [(1, "theirs"), (2, "mine")] if theirs_kept else [(2, "mine")]
    assert [(t.task_id, t.title) for t in repo.list(user, "all")] == expected
    counter = dynamodb.Table("TasksTable").get_item(Key={"user_id": user, "task_id": 0})["Item"]
    assert counter["next_id"] == 2, "no id was skipped"
    assert ledger.get(f"turn-{user}:toolu_1").result == "#2 mine pending"


def test_a_task_changed_under_a_call_is_read_again(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo, ledger), (other, _) = task_store("dynamodb", dynamodb), task_store("dynamodb", dynamodb)
    user = next(_chat_ids)
    repo.add(user, "milk", "", "t0")
    get = DynamoTaskRepository.get
    renamed: list[bool] = []

    def racing(self: DynamoTaskRepository, user_id: int, task_id: int) -> Task | None:
        seen = get(self, user_id, task_id)
        if self is repo and not renamed:
            renamed.append(True)
            other.update(user_id, task_id, title="oat milk", description=None, now="t1")
        return seen

    monkeypatch.setattr(DynamoTaskRepository, "get", racing)
    deleted = repo.delete(user, 1, once=Once(f"turn-{user}:toolu_1", _render))
    assert renamed and deleted is not None and deleted.title == "oat milk"
    assert ledger.get(f"turn-{user}:toolu_1").result == "#1 oat milk pending"
    assert repo.list(user, "all") == []


_users = iter(range(30_000, 40_000))


@pytest.mark.parametrize("kind", ADAPTERS)
def test_reminders(kind: str, dynamodb: Any) -> None:
    store = make(
        kind, dynamodb, InMemoryReminderStore, lambda d: DynamoReminderStore(d.Table("RemindersTable"))
    )
    user, other = next(_users), next(_users)
    assert [store.allocate_id(user) for _ in range(3)] == [1, 2, 3]
    assert store.allocate_id(other) == 1, "numbers are per user"

    def reminder(user_id: int, number: int, **changes: Any) -> Reminder:
        fields: dict[str, Any] = {
            "user_id": user_id,
            "chat_id": user_id,
            "reminder_id": number,
            "text": f"r{number}",
            "expression": "cron(0 8 ? * MON-FRI *)",
            "timezone": "Europe/Lisbon",
            "when": "every weekday at 08:00 (Europe/Lisbon)",
            "one_time": False,
            "created_at": "2026-11-23T10:00:00.000Z",
        }
        return Reminder(**{**fields, **changes})

    job = Requester(kind="job", number=3, name="Tidy up")
    store.put(reminder(user, 2, checkin=True, task_id=4, created_by=job))
    store.put(reminder(user, 1))
    store.put(reminder(user, 1))  # again, unchanged
    store.put(reminder(other, 1, text="theirs"))
    assert [(r.reminder_id, r.checkin, r.task_id) for r in store.list(user)] == [
        (1, False, None),
        (2, True, 4),
    ]
    assert store.get(user, 2) == reminder(user, 2, checkin=True, task_id=4, created_by=job)
    assert store.get(user, 1) == reminder(user, 1), "who set it: not recorded"
    assert store.get(user, 9) is None
    store.delete(user, 1)
    store.delete(user, 1)  # gone already: no error
    assert [r.reminder_id for r in store.list(user)] == [2]
    assert [r.text for r in store.list(other)] == ["theirs"]
    assert store.timezone(user) is None
    store.set_timezone(user, "Asia/Tokyo")
    store.set_timezone(user, "Europe/Lisbon")
    assert (store.timezone(user), store.timezone(other)) == ("Europe/Lisbon", None)
    assert store.allocate_id(user) == 4, "the profile and records leave the counter alone"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_profile_keeps_the_time_zone_and_the_account_marks_read_in_one(kind: str, dynamodb: Any) -> None:
    store = make(
        kind, dynamodb, InMemoryReminderStore, lambda d: DynamoReminderStore(d.Table("RemindersTable"))
    )
    user, other = next(_users), next(_users)
    assert store.profile(user) == Profile(None, frozenset())
    store.mark_account(user, "notes")
    store.mark_account(user, "notes")  # again: no change
    store.mark_account(user, "calendar")
    store.set_timezone(user, "Asia/Tokyo")
    assert store.profile(user) == Profile("Asia/Tokyo", frozenset({"notes", "calendar"}))
    assert store.profile(other) == Profile(None, frozenset())
    store.unmark_account(user, "notes")
    store.unmark_account(user, "notes")  # gone already: no error
    store.unmark_account(other, "notes")  # never marked: no error
    assert store.profile(user) == Profile("Asia/Tokyo", frozenset({"calendar"}))
    store.unmark_account(user, "calendar")
    assert store.profile(user) == Profile("Asia/Tokyo", frozenset())
    assert store.timezone(user) == "Asia/Tokyo"


def _connection(user: int, name: str, token: str | None, turn: str) -> Connection:
    return Connection(
        user_id=user,
        chat_id=user,
        name=name,
        token_hash=token_hash(token) if token is not None else None,
        created_at="2026-11-25T10:00:00.000Z",
        created_by_turn=turn,
    )


@pytest.mark.parametrize("kind", ADAPTERS)
def test_connections(kind: str, dynamodb: Any) -> None:
    store = make(
        kind, dynamodb, InMemoryConnectionStore, lambda d: DynamoConnectionStore(d.Table("ConnectionsTable"))
    )
    user, other = next(_chat_ids), next(_chat_ids)
    store.create(_connection(user, "laptop", "swp_one", "turn-1"))
    store.create(_connection(other, "laptop", "swp_other", "turn-9"))  # names are per user
    found = store.find(token_hash("swp_one"))
    assert found is not None and (found.user_id, found.name) == (user, "laptop")
    # the same turn again (its token never shown) replaces the token; another turn may not take the name
    store.create(_connection(user, "laptop", "swp_two", "turn-1"))
    assert store.find(token_hash("swp_one")) is None
    assert store.find(token_hash("swp_two")) is not None
    with pytest.raises(NameTaken):
        store.create(_connection(user, "laptop", "swp_three", "turn-2"))
    assert store.find(token_hash("swp_three")) is None
    store.create(_connection(user, "phone", "swp_four", "turn-3"))
    assert [c.name for c in store.list(user)] == ["laptop", "phone"]
    assert store.revoke(user, "laptop") and not store.revoke(user, "laptop")
    assert store.find(token_hash("swp_two")) is None
    assert [c.name for c in store.list(user)] == ["phone"]
    assert store.find(token_hash("swp_other")) is not None  # another user's token untouched
    # the rate counter: `limit` requests per window, then refused (not counted) until the next window
    digest = token_hash("swp_four")
    assert [store.count_request(digest, 100, 2) for _ in range(3)] == [True, True, False]
    assert store.count_request(digest, 101, 2)


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_pending_connection_gets_its_token_when_it_is_sent(kind: str, dynamodb: Any) -> None:
    store = make(
        kind, dynamodb, InMemoryConnectionStore, lambda d: DynamoConnectionStore(d.Table("ConnectionsTable"))
    )
    user = next(_chat_ids)
    store.create(_connection(user, "laptop", None, "turn-1"))  # /connect laptop: no token yet
    (pending,) = store.list(user)
    assert pending.pending and store.find(token_hash("swp_one")) is None
    assert not store.activate(user, "laptop", "turn-2", token_hash("swp_one")), "only its own turn's"
    assert store.activate(user, "laptop", "turn-1", token_hash("swp_one"))
    assert store.activate(user, "laptop", "turn-1", token_hash("swp_one")), "a retried send: no change"
    found = store.find(token_hash("swp_one"))
    assert found is not None and not found.pending and found.name == "laptop"
    assert store.activate(user, "laptop", "turn-1", token_hash("swp_two"))  # made again: replaces it
    assert store.find(token_hash("swp_one")) is None and store.find(token_hash("swp_two")) is not None
    with pytest.raises(NameTaken):  # active now: another turn may not take the name
        store.create(_connection(user, "laptop", None, "turn-2"))
    # a pending one whose turn ended without sending it is made again by another turn
    store.create(_connection(user, "phone", None, "turn-3"))
    store.create(_connection(user, "phone", None, "turn-4"))
    assert {c.name: c.created_by_turn for c in store.list(user)} == {"laptop": "turn-1", "phone": "turn-4"}
    assert not store.revoke(user, "phone", made_by="turn-3") and store.revoke(user, "phone", made_by="turn-4")
    assert not store.revoke(user, "laptop", made_by="turn-9"), "only the connection its own turn made"
    assert store.find(token_hash("swp_two")) is not None
    assert store.revoke(user, "laptop", made_by="turn-1") and store.find(token_hash("swp_two")) is None
    assert store.list(user) == []
    assert not store.activate(user, "laptop", "turn-1", token_hash("swp_three")), "revoked: never again"


def job_store(kind: str, dynamodb: Any) -> Any:
    return make(kind, dynamodb, InMemoryJobStore, lambda d: DynamoJobStore(d.Table("JobsTable"), ttl_days=1))


def _job(user: int, number: int, **changes: Any) -> Job:
    fields: dict[str, Any] = {
        "user_id": user,
        "number": number,
        "chat_id": user,
        "execution": f"job-{user}-{number}",
        "title": f"job {number}",
        "task": f"do thing {number}",
        "parent_turn_id": "turn-1",
        "created_at": "2026-11-26T10:00:00.000Z",
        "deadline": "2026-11-26T11:00:00.000Z",
    }
    return Job(**{**fields, **changes})


@pytest.mark.parametrize("kind", ADAPTERS)
def test_job_numbers_count_up_per_user(kind: str, dynamodb: Any) -> None:
    # Given a job store and two users who have no jobs yet
    store = job_store(kind, dynamodb)
    user, other = next(_users), next(_users)
    # When one of them takes three numbers and the other one
    numbers = [store.next_number(user) for _ in range(3)]
    theirs = store.next_number(other)
    # Then each user counts from 1
    assert (numbers, theirs) == ([1, 2, 3], 1)


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_job_created_twice_keeps_the_first(kind: str, dynamodb: Any) -> None:
    # Given a stored job
    store = job_store(kind, dynamodb)
    user = next(_users)
    first = store.create(_job(user, 1))
    # When a retried start creates that number again with other fields
    again = store.create(_job(user, 1, title="another", execution="job-other"))
    # Then the first one is kept and returned, and a number nobody created is absent
    assert first == again == store.get(user, 1) == _job(user, 1)
    assert store.get(user, 2) is None and store.get(next(_users), 1) is None
    if kind != "memory":
        tables = tables_of(kind, dynamodb)
        item = tables.Table("JobsTable").get_item(Key={"user_id": user, "sk": "job#0000000001"})["Item"]
        created = 1_795_687_200  # 2026-11-26T10:00:00Z
        assert item["expires_at"] == created + 86_400, "a job item expires ttl_days after its creation"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_recent_jobs_are_newest_first(kind: str, dynamodb: Any) -> None:
    # Given a user with jobs 1 to 12 (created out of order) and another user's job
    store = job_store(kind, dynamodb)
    user, other = next(_users), next(_users)
    for number in [*range(12, 0, -2), *range(1, 12, 2)]:
        store.create(_job(user, number))
    store.create(_job(other, 1))
    store.next_number(user)  # the counter item is no job
    # When the newest are read, with and without a limit
    three, default = store.recent(user, 3), store.recent(user)
    # Then they come newest first, at most `limit` of them
    assert [j.number for j in three] == [12, 11, 10]
    assert [j.number for j in default] == list(range(12, 2, -1))
    assert [j.user_id for j in store.recent(other)] == [other]
    assert store.recent(next(_users)) == []


@pytest.mark.parametrize("kind", ADAPTERS)
def test_progress_counts_while_running_only(kind: str, dynamodb: Any) -> None:
    # Given a running job
    store = job_store(kind, dynamodb)
    user = next(_users)
    store.create(_job(user, 1))
    # When its counters are set, twice
    store.progress(user, 1, tool_rounds=2, tokens=1_500, cost_nano_usd=40_000)
    store.progress(user, 1, tool_rounds=3, tokens=2_500, cost_nano_usd=70_000)
    # Then the job holds the last values
    running = store.get(user, 1)
    assert (running.tool_rounds, running.tokens, running.cost_nano_usd) == (3, 2_500, 70_000)
    assert running.running
    # And once it has ended, progress changes nothing (nor does it for a job that does not exist)
    store.finish(user, 1, "done", "All done.", "2026-11-26T10:05:00.000Z")
    store.progress(user, 1, tool_rounds=9, tokens=9_999, cost_nano_usd=99_999)
    store.progress(user, 7, tool_rounds=1, tokens=1, cost_nano_usd=1)
    ended = store.get(user, 1)
    assert (ended.tool_rounds, ended.tokens, ended.cost_nano_usd, ended.status) == (3, 2_500, 70_000, "done")
    assert store.get(user, 7) is None


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_job_ends_once(kind: str, dynamodb: Any) -> None:
    # Given a running job with some progress
    store = job_store(kind, dynamodb)
    user = next(_users)
    store.create(_job(user, 1))
    store.progress(user, 1, tool_rounds=1, tokens=10, cost_nano_usd=20)
    # When it is finished, and then finished again with another ending
    first = store.finish(user, 1, "done", "Found 3 flights.", "2026-11-26T10:05:00.000Z")
    second = store.finish(user, 1, "timed_out", "Out of time.", "2026-11-26T11:00:00.000Z")
    # Then the first ending stays, and both calls return it with the job's other fields
    assert (first.status, first.report, first.finished_at) == (
        "done",
        "Found 3 flights.",
        "2026-11-26T10:05:00.000Z",
    )
    assert first == second == store.get(user, 1)
    assert (first.title, first.tool_rounds, first.tokens, first.cost_nano_usd) == ("job 1", 1, 10, 20)
    assert not first.running


@pytest.mark.parametrize("kind", ADAPTERS)
def test_finishing_a_missing_job_raises(kind: str, dynamodb: Any) -> None:
    # Given a user whose only job is #1
    store = job_store(kind, dynamodb)
    user = next(_users)
    store.create(_job(user, 1))
    # When job #2 is finished, Then there is no such job
    with pytest.raises(KeyError):
        store.finish(user, 2, "failed", "Broke.", "2026-11-26T10:05:00.000Z")
    assert store.get(user, 2) is None, "finishing does not create the job"


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_topic_has_its_own_history_and_chat_record(kind: str, dynamodb: Any) -> None:
    """The chat itself and each of its topics are conversations kept apart: their messages, counts, windows
    and summaries; a topic's `topic_unnamed` is claimed once."""
    repo = make(
        kind, dynamodb, InMemoryMessageRepository, lambda d: DynamoMessageRepository(d.Table("MessagesTable"))
    )
    store = make(kind, dynamodb, InMemoryChatStore, lambda d: DynamoChatStore(d.Table("ChatsTable")))
    chat = next(_chat_ids)
    main, topic, other = Conversation(chat), Conversation(chat, 7), Conversation(chat, 9)
    for where, text in ((main, "in the chat"), (topic, "in topic 7"), (other, "in topic 9")):
        repo.add(
            StoredMessage(
                id=f"m{where.topic}",
                chat_id=chat,
                topic=where.topic,
                role="user",
                content=text,
                created_at="2026-11-22T10:00:00.000Z",
            )
        )
        store.record_message(where, 5, due_at=1)
    assert [m.content for m in repo.recent(main, 5)] == ["in the chat"]
    (kept,) = repo.recent(topic, 5)
    assert (kept.content, kept.chat_id, kept.topic, kept.conversation) == ("in topic 7", chat, 7, topic)
    assert [m.content for m in repo.after(other, "")] == ["in topic 9"]
    store.set_window(topic, "k7")
    assert store.get(main).window_key == "" and store.get(topic).window_key == "k7"
    assert {main, topic, other} <= set(store.due_chats())
    assert store.get(topic).conversation == topic and store.get(topic).conversation.topic == 7
    assert not store.claim_topic_rename(topic), "not waiting for a name"
    store.set_topic_unnamed(topic, True)
    assert store.get(topic).topic_unnamed and not store.get(main).topic_unnamed
    assert store.claim_topic_rename(topic) and not store.claim_topic_rename(topic), "renamed once"


def test_items_stored_before_topics_read_as_the_chats_main_conversation(dynamodb: Any) -> None:
    """An item written by the code before topics (its `chat_id` the chat's id, no `topic` anywhere) is the
    chat's main conversation for the new code: no migration."""
    chat = next(_chat_ids)
    tables = tables_of("dynamodb", dynamodb)
    tables.Table("MessagesTable").put_item(  # the shape the old DynamoMessageRepository wrote
        Item={
            "chat_id": chat,
            "sk": "2026-11-01T10:00:00.000Z#old1",
            "id": "old1",
            "role": "user",
            "content": "written before topics",
            "created_at": "2026-11-01T10:00:00.000Z",
        }
    )
    tables.Table("ChatsTable").put_item(
        Item={"chat_id": chat, "user_id": 5, "message_count": 1, "summary": "older summary", "window_key": ""}
    )
    repo = DynamoMessageRepository(tables.Table("MessagesTable"))
    (old,) = repo.recent(Conversation(chat), 5)
    assert (old.content, old.chat_id, old.topic) == ("written before topics", chat, None)
    assert repo.recent(Conversation(chat, 7), 5) == [], "a topic starts empty"
    record = DynamoChatStore(tables.Table("ChatsTable")).get(Conversation(chat))
    assert record is not None and record.summary == "older summary" and record.conversation.topic is None


def test_a_topics_items_are_read_under_the_key_they_were_written_with(dynamodb: Any) -> None:
    """A topic's items, as they are stored (`chat_id` the topic's key: the chat's id ± topic·10¹⁶), are that
    topic's conversation."""
    chat = next(_chat_ids)
    key = chat + 7 * 10**16
    tables = tables_of("dynamodb", dynamodb)
    tables.Table("MessagesTable").put_item(
        Item={
            "chat_id": key,
            "sk": "2026-11-01T10:00:00.000Z#t1",
            "id": "t1",
            "role": "user",
            "content": "in topic 7",
            "created_at": "2026-11-01T10:00:00.000Z",
        }
    )
    tables.Table("ChatsTable").put_item(
        Item={"chat_id": key, "user_id": 5, "message_count": 1, "summary": "s7"}
    )
    (kept,) = DynamoMessageRepository(tables.Table("MessagesTable")).recent(Conversation(chat, 7), 5)
    assert (kept.content, kept.chat_id, kept.topic) == ("in topic 7", chat, 7)
    store = DynamoChatStore(tables.Table("ChatsTable"))
    record = store.get(Conversation(chat, 7))
    assert record is not None and (record.conversation, record.summary) == (Conversation(chat, 7), "s7")
    assert Conversation(chat, 7) in set(store.all_chats())


def _business(contact: int) -> tuple[Conversation, Conversation, Conversation]:
    """A contact's chat in an owner's business account, the same contact's chat in another owner's account,
    and the contact's own private chat with the bot: one chat id, three conversations."""
    owner, other_owner = next(_users), next(_users)
    return (
        Conversation(contact, account=owner),
        Conversation(contact, account=other_owner),
        Conversation(contact),
    )


@pytest.mark.parametrize("kind", ADAPTERS)
def test_a_contacts_chat_in_a_business_account_has_its_own_history_and_chat_record(
    kind: str, dynamodb: Any
) -> None:
    """Issue 42: a contact's chat in an owner's account is kept apart from their chat in another owner's
    account and from their own chat with the bot (the same chat id), message ids and all."""
    repo = make(
        kind, dynamodb, InMemoryMessageRepository, lambda d: DynamoMessageRepository(d.Table("MessagesTable"))
    )
    store = make(kind, dynamodb, InMemoryChatStore, lambda d: DynamoChatStore(d.Table("ChatsTable")))
    contact = next(_chat_ids)
    conversations = _business(contact)
    for where in conversations:
        repo.add(
            StoredMessage(
                id="m1",  # the same id and time in each: only the conversation tells them apart
                chat_id=contact,
                account=where.account,
                role="user",
                content=f"in {where.label()}",
                created_at="2026-11-22T10:00:00.000Z",
                sender="Bea",
            )
        )
        store.record_message(where, contact, due_at=1)
    for where in conversations:
        (kept,) = repo.recent(where, 5)
        assert (kept.content, kept.chat_id, kept.account, kept.conversation) == (
            f"in {where.label()}",
            contact,
            where.account,
            where,
        )
        assert [m.content for m in repo.after(where, "")] == [f"in {where.label()}"]
    at_owner, _, own = conversations
    store.set_window(at_owner, "kb")
    assert [store.get(where).window_key for where in conversations] == ["kb", "", ""]
    assert set(conversations) <= set(store.due_chats()) and set(conversations) <= set(store.all_chats())
    assert store.get(at_owner).conversation == at_owner and store.get(own).conversation == own


@pytest.mark.parametrize("kind", ADAPTERS)
def test_records_of_a_contacts_chat_keep_its_owner(kind: str, dynamodb: Any) -> None:
    """An approval, a turn's record, a reminder and a job set in a contact's chat read back in that chat of
    that owner's account (never the contact's own chat with the bot)."""
    contact = next(_chat_ids)
    at_owner, _, _ = _business(contact)
    owner = at_owner.account
    assert owner is not None
    approvals = make(
        kind, dynamodb, InMemoryApprovalStore, lambda d: DynamoApprovalStore(d.Table("ApprovalsTable"), 60)
    )
    request = ApprovalRequest(
        approval_id=f"a{contact}",
        turn_id="t",
        chat_id=contact,
        account=owner,
        user_id=contact,
        step=0,
        calls=[ApprovalCall(tool_use_id="u", description="Read task #1.")],
        created_at="c",
    )
    approvals.create(request)
    assert approvals.get(request.approval_id).conversation == at_owner
    turns = make(
        kind, dynamodb, InMemoryTurnStore, lambda d: DynamoTurnStore(d.Table("TurnsTable"), ttl_days=1)
    )
    turn = f"turn-{contact}"
    turns.put_meta(
        TurnMeta(
            turn_id=turn,
            chat_id=contact,
            account=owner,
            user_id=contact,
            update_id=1,
            user_message_id="m",
            first_key="a",
            last_key="b",
            created_at="c",
        )
    )
    assert turns.get_meta(turn).scope.conversation == at_owner and turns.get_meta(turn).scope.owner == owner
    reminders = make(
        kind, dynamodb, InMemoryReminderStore, lambda d: DynamoReminderStore(d.Table("RemindersTable"))
    )
    reminders.put(
        Reminder(
            user_id=owner,
            chat_id=contact,
            account=owner,
            reminder_id=1,
            text="call back",
            expression="at(2026-11-24T10:00:00)",
            timezone="UTC",
            when="tomorrow at 10:00",
            one_time=True,
            created_at="c",
        )
    )
    assert reminder_conversation(reminders.get(owner, 1)) == at_owner
    jobs = job_store(kind, dynamodb)
    jobs.create(_job(owner, 1, chat_id=contact, account=owner))
    assert jobs.get(owner, 1).scope.conversation == at_owner


@pytest.mark.parametrize("kind", ADAPTERS)
def test_business_connections(kind: str, dynamodb: Any) -> None:
    store = make(
        kind,
        dynamodb,
        InMemoryBusinessConnectionStore,
        lambda d: DynamoBusinessConnectionStore(d.Table("SecretaryTable")),
    )
    first = SecretaryConnection("bc-" + kind, 1001, 1001, "Ada", may_reply=True, enabled=True, date=100)
    assert store.get(first.connection_id) is None
    assert not store.claim(first.connection_id, "welcomed", True), "nothing to claim on no connection"
    store.save(first)
    assert store.get(first.connection_id) == first
    assert store.claim(first.connection_id, "welcomed", True)
    assert not store.claim(first.connection_id, "welcomed", True), "claimed once"
    store.save(first._replace(enabled=False, date=200))  # a newer update keeps the flags
    assert store.get(first.connection_id) == first._replace(enabled=False, date=200, welcomed=True)
    store.save(first._replace(owner_name="Old", date=150))  # an older one changes nothing
    assert store.get(first.connection_id).owner_name == "Ada"
    assert store.claim(first.connection_id, "stop_told", True)
    assert store.claim(first.connection_id, "stop_told", False)
    assert store.get(first.connection_id).stop_told is False


@pytest.mark.parametrize("kind", ADAPTERS)
def test_secretary_owners(kind: str, dynamodb: Any) -> None:
    store = make(
        kind,
        dynamodb,
        InMemoryBusinessConnectionStore,
        lambda d: DynamoBusinessConnectionStore(d.Table("SecretaryTable")),
    )
    owner, other = 2002, 2003
    assert store.of_owner(owner) == []
    assert store.owner_settings(owner) == OwnerSettings(off=False, muted=())
    first = SecretaryConnection("bo-1-" + kind, owner, owner, "Ada", may_reply=True, enabled=True, date=100)
    second = first._replace(connection_id="bo-2-" + kind, enabled=False, date=300)
    store.save(first)
    store.save(second)
    store.save(first._replace(date=200, may_reply=False))
    store.save(SecretaryConnection("bo-3-" + kind, other, other, "Bo", may_reply=True, enabled=True, date=1))
    assert sorted(store.of_owner(owner)) == sorted([first._replace(date=200, may_reply=False), second])

    assert not store.set_off(owner, False), "on already"
    assert store.set_off(owner, True)
    assert not store.set_off(owner, True), "off already"
    assert store.owner_settings(owner).off and not store.owner_settings(other).off
    assert store.set_off(owner, False)
    assert store.owner_settings(owner).off is False

    assert not store.unmute(owner, "Ada"), "nobody is muted"
    assert store.mute(owner, "Ada")
    assert store.mute(owner, "@Bo_B")
    assert not store.mute(owner, "ADA"), "muted already, in any case"
    assert store.owner_settings(owner) == OwnerSettings(off=False, muted=("@Bo_B", "Ada"))
    assert store.owner_settings(other).muted == ()
    assert store.unmute(owner, "@bo_b")
    assert not store.unmute(owner, "@bo_b"), "unmuted already"
    assert store.owner_settings(owner).muted == ("Ada",)
    assert store.set_off(owner, True)
    assert store.owner_settings(owner) == OwnerSettings(off=True, muted=("Ada",)), "each keeps the other"
