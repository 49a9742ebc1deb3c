"""The Mini App's actions and reads on in-memory stores: what a tap changes (once), what it answers when a
store or Step Functions fails, and that nothing of another user's is touched or shown."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from stepwise.approvals.lifecycle import PressServices, open_request
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.miniapp.actions import act
from stepwise.miniapp.endpoint import serve
from stepwise.miniapp.gate import AppLimits
from stepwise.miniapp.init_data import WebAppUser, sign
from stepwise.miniapp.page import Page
from stepwise.miniapp.services import AppServices
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise.usage.models import UsageTotals
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.connections import InMemoryConnectionStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram
from stepwise_local.in_memory.usage import InMemoryUsageStore

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
OWNER, OTHER = 7, 8
TOKEN = "123:test"


@dataclass
class Resumer:
    fail: bool = False
    resumed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        if self.fail:
            raise RuntimeError("Step Functions is down")
        self.resumed.append((task_token, output))
        return True


def services(resumer: Resumer | None = None) -> tuple[AppServices, InMemoryTaskRepository]:
    tasks = InMemoryTaskRepository()
    reminders = InMemoryReminderStore()
    setup = ReminderSetup(reminders, InMemorySchedules(), ReminderLimits())
    approvals = InMemoryApprovalStore()
    telegram = InMemoryTelegram()
    presses = PressServices(approvals, lambda: telegram, resumer or Resumer(), lambda: NOW)
    built = AppServices(
        bot_token=lambda: TOKEN,
        count=lambda key, window, limit: True,
        limits=AppLimits(allowed_users=frozenset({OWNER, OTHER})),
        tools=lambda: build_registry(tasks=tasks, ledger=tasks.ledger, reminders=setup),
        audit=InMemoryAuditLog(),
        approvals=approvals,
        presses=lambda: presses,
        chats=InMemoryChatStore(),
        connections=InMemoryConnectionStore(),
        jobs=None,
        usage=InMemoryUsageStore(),
        timezone=reminders.timezone,
        default_timezone="UTC",
        voice_replies=True,
        daily_token_budget=0,
        approval_timeout_seconds=3600,
        clock=lambda: NOW,
    )
    return built, tasks


def tap(app: AppServices, user: int, action: str, target: Any, request_id: str) -> tuple[int, Any]:
    body = json.dumps({"action": action, "target": target, "request_id": request_id})
    answer = act(WebAppUser(user, "Ada", int(NOW.timestamp())), body, app)
    return answer.status, answer.body


def waiting_approval(
    app: AppServices,
    tasks: InMemoryTaskRepository,
    chat_id: int = OWNER,
    approval_id: str = "ap1",
    requester: Requester | None = None,
    topic: int | None = None,
) -> str:
    tasks.add(chat_id if chat_id < 0 else OWNER, "old plan", "", "2026-11-27T11:00:00Z")
    open_request(
        app.approvals,
        approval_id=approval_id,
        turn_id="t1",
        scope=Scope(Conversation(chat_id, topic), OWNER),
        step=0,
        calls=[ApprovalCall(tool_use_id="c1", description="Delete task #1 “old plan”.")],
        requester=requester or Requester(),
        now="2026-11-27T11:59:00.000Z",
    )
    app.approvals.attach_token(approval_id, f"token-{approval_id}")
    app.approvals.attach_message(approval_id, 42, "🔐 <b>Approval needed</b>")
    return approval_id


def shown_state(app: AppServices, user: int = OWNER) -> dict[str, Any]:
    page = Page("<html></html>", {})
    answer = serve("GET", "/app/api/state", {"authorization": "tma " + _signed(user)}, "", page, lambda: app)
    assert answer["statusCode"] == 200, answer
    state: dict[str, Any] = json.loads(str(answer["body"]))
    return state


def test_an_approval_whose_resume_fails_stays_pending_and_a_second_tap_decides_it_once() -> None:
    resumer = Resumer(fail=True)
    app, tasks = services(resumer)
    approval = waiting_approval(app, tasks)
    page = Page("<html></html>", {})
    headers = {"authorization": "tma " + _signed(OWNER)}
    body = json.dumps({"action": "approve", "target": approval, "request_id": "tap-00000001"})
    failed = serve("POST", "/app/api/action", headers, body, page, lambda: app)
    assert failed["statusCode"] == 503
    request = app.approvals.get(approval)
    assert request is not None and request.status == "pending", "the press is undone: a retry can decide it"

    resumer.fail = False
    assert tap(app, OWNER, "approve", approval, "tap-00000002") == (200, {"done": "Approved ✅"})
    assert tap(app, OWNER, "deny", approval, "tap-00000003")[0] == 409
    assert resumer.resumed == [("token-ap1", {"decision": "approved"})]


def test_another_users_approval_and_tasks_are_not_found_and_not_changed() -> None:
    app, tasks = services()
    approval = waiting_approval(app, tasks)
    assert tap(app, OTHER, "approve", approval, "tap-00000004")[0] == 404
    assert tap(app, OTHER, "task_delete", 1, "tap-00000005")[0] == 404
    request = app.approvals.get(approval)
    assert request is not None and request.status == "pending"
    assert [t.title for t in tasks.list(OWNER, "all")] == ["old plan"]


def test_the_state_is_the_users_own_and_usage_sums_its_days() -> None:
    app, tasks = services()
    waiting_approval(app, tasks)
    tasks.add(OTHER, "not yours", "", "2026-11-27T11:00:00Z")
    assert app.usage is not None
    used = UsageTotals(input_tokens=100, output_tokens=20, cost_nano_usd=5_000_000, calls=1)
    for day, key in (("2026-11-27", "a"), ("2026-11-01", "b"), ("2026-10-29", "c"), ("2026-10-28", "d")):
        app.usage.add(OWNER, key, [f"day#{day}"], used)
    page = Page("<html></html>", {})
    answer = serve("GET", "/app/api/state", {"authorization": "tma " + _signed(OWNER)}, "", page, lambda: app)
    shown = json.loads(answer["body"])
    assert [t["title"] for t in shown["tasks"]] == ["old plan"]
    assert [a["approval_id"] for a in shown["approvals"]] == ["ap1"]
    usage = shown["usage"]
    assert [d["day"] for d in usage["days"]][::29] == ["2026-10-29", "2026-11-27"]
    assert usage["last_30_days"] == {"tokens": 360, "cost_usd": 0.015}, "2026-10-28 is outside the 30 days"
    assert usage["today"] == {"tokens": 120, "cost_usd": 0.005}
    assert usage["this_month"] == {"tokens": 240, "cost_usd": 0.01}


def test_voice_replies_are_set_for_the_users_chat_and_audited() -> None:
    app, _ = services()
    assert tap(app, OWNER, "set_voice_replies", True, "tap-00000006") == (
        200,
        {"done": "Spoken answers are on."},
    )
    chat = app.chats.get(Conversation(OWNER))
    assert chat is not None and chat.voice_replies is True
    (entry,) = app.audit.entries(OWNER)
    assert (entry.tool, entry.turn_id, entry.tool_use_id) == (
        "set_voice_replies",
        "app",
        "app:7:tap-00000006",
    )


def test_routes_and_methods() -> None:
    app, _ = services()
    page = Page("<html>page</html>", {"content-type": "text/html"})
    assert serve("GET", "/app", {}, "", page, lambda: app)["body"] == "<html>page</html>"
    assert serve("POST", "/app", {}, "", page, lambda: app)["statusCode"] == 405
    assert serve("GET", "/app/api/action", {}, "", page, lambda: app)["statusCode"] == 405
    assert serve("GET", "/app/other", {}, "", page, lambda: app)["statusCode"] == 404
    assert serve("GET", "/app/api/state", {}, "", page, lambda: app)["statusCode"] == 401


def _signed(user_id: int) -> str:
    from urllib.parse import urlencode

    fields = {
        "user": json.dumps({"id": user_id, "first_name": "Ada"}),
        "auth_date": str(int(NOW.timestamp())),
    }
    return urlencode({**fields, "hash": sign(fields, TOKEN)})


GROUP = -100123


def test_a_groups_pending_approval_on_a_members_page_names_the_group() -> None:
    app, tasks = services()
    waiting_approval(app, tasks)  # in the private chat
    app.chats.record_message(Conversation(GROUP), OWNER, 100, title="Family")
    waiting_approval(app, tasks, chat_id=GROUP, approval_id="ap2")
    checkin = Requester(kind="checkin", number=2, name="review the week")
    waiting_approval(app, tasks, chat_id=GROUP, approval_id="ap3", requester=checkin, topic=5)
    app.chats.record_message(Conversation(-100999), OWNER, 100)  # a group whose title was never seen
    waiting_approval(app, tasks, chat_id=-100999, approval_id="ap4")
    approvals = {a["approval_id"]: a for a in shown_state(app)["approvals"]}
    assert approvals["ap1"]["asks"] == "The assistant in your private chat asks to delete task #1 “old plan”."
    assert approvals["ap1"]["group"] is None and approvals["ap1"]["where"] is None
    assert approvals["ap2"]["asks"] == (
        "The assistant in the group “Family” asks to delete task #1 “old plan”."
    )
    assert approvals["ap2"]["group"] == "Family"
    # a check-in's request in a topic of the group: the topic's record has no title, the group's has
    assert approvals["ap3"]["asks"].startswith("Your check-in #2 “review the week” asks to delete")
    assert approvals["ap3"]["where"] == "in the group “Family”"
    assert approvals["ap4"]["asks"].startswith("The assistant in a group asks to")


def test_a_group_keeps_the_title_its_newest_message_gave() -> None:
    app, _ = services()
    app.chats.record_message(Conversation(GROUP), OWNER, 100, title="Family")
    app.chats.record_message(Conversation(GROUP), OWNER, 100, title="Family 🏡")
    app.chats.record_message(Conversation(GROUP), OWNER, 100)  # the reply: no title, the title stays
    chat = app.chats.get(Conversation(GROUP))
    assert chat is not None and chat.title == "Family 🏡"


def test_the_pages_moments_are_in_the_users_zone_in_one_style_and_no_internal_id_is_text() -> None:
    app, tasks = services()
    waiting_approval(app, tasks)
    tasks.add(OWNER, "pay rent", "", "2026-11-27T11:00:00Z", due="2026-12-01T09:00")
    tasks.add(OWNER, "call mom", "", "2026-11-27T11:00:00Z", due="2026-12-02")
    assert tap(app, OWNER, "set_timezone", "America/New_York", "tap-zone-0001")[0] == 200
    shown = shown_state(app)
    assert shown["settings"]["timezone"] == "America/New_York"
    (approval,) = shown["approvals"]
    assert approval["asked"] == "Fri 27 Nov 2026 at 06:59", "11:59 UTC is 06:59 in New York"
    assert [t["due_text"] for t in shown["tasks"]] == [None, "Tue 01 Dec 2026 at 09:00", "Wed 02 Dec 2026"]
    assert "created_at" not in approval


@pytest.mark.parametrize(
    ("zone", "reason"),
    [
        ("Mars/Olympus", "'Mars/Olympus' is not a time zone I know; use an IANA name such as Europe/Lisbon."),
        ("../etc/passwd", "'../etc/passwd' is not a time zone; use an IANA name such as Europe/Lisbon."),
        ("Europe/Lisbon\u200b", "is not a time zone I know"),
    ],
)
def test_a_bad_time_zone_is_a_400_with_the_reason_and_changes_nothing(zone: str, reason: str) -> None:
    app, _ = services()
    status, body = tap(app, OWNER, "set_timezone", zone, "tap-zone-0002")
    assert status == 400 and reason in body["error"]
    assert app.timezone(OWNER) is None
