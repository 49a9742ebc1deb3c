"""The Mini App's actions and reads on in-memory stores: what a tap changes (once), what it answers when a
store or Step Functions fails, and that nothing of another user's is touched or shown."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from stepwise.approvals.lifecycle import PressServices, open_request
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.miniapp.actions import act
from stepwise.miniapp.endpoint import serve
from stepwise.miniapp.gate import AppLimits
from stepwise.miniapp.init_data import WebAppUser, sign
from stepwise.miniapp.page import Page
from stepwise.miniapp.services import AppServices
from stepwise.tools.catalog import build_registry
from stepwise.usage.models import UsageTotals
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.connections import InMemoryConnectionStore
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
    approvals = InMemoryApprovalStore()
    telegram = InMemoryTelegram()
    presses = PressServices(approvals, lambda: telegram, resumer or Resumer(), lambda: NOW)
    built = AppServices(
        bot_token=lambda: TOKEN,
        count=lambda key, window, limit: True,
        limits=AppLimits(allowed_users=frozenset({OWNER, OTHER})),
        tools=lambda: build_registry(tasks=tasks, ledger=tasks.ledger),
        audit=InMemoryAuditLog(),
        approvals=approvals,
        presses=lambda: presses,
        chats=InMemoryChatStore(),
        connections=InMemoryConnectionStore(),
        jobs=None,
        usage=InMemoryUsageStore(),
        timezone=lambda user_id: None,
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


def waiting_approval(app: AppServices, tasks: InMemoryTaskRepository) -> str:
    tasks.add(OWNER, "old plan", "", "2026-11-27T11:00:00Z")
    open_request(
        app.approvals,
        approval_id="ap1",
        turn_id="t1",
        chat_id=OWNER,
        user_id=OWNER,
        step=0,
        calls=[ApprovalCall(tool_use_id="c1", description="Delete task #1 “old plan”.")],
        requester=Requester(),
        now="2026-11-27T11:59:00.000Z",
    )
    app.approvals.attach_token("ap1", "token-1")
    app.approvals.attach_message("ap1", 42, "🔐 <b>Approval needed</b>")
    return "ap1"


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
    assert resumer.resumed == [("token-1", {"decision": "approved"})]


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
    chat = app.chats.get(OWNER)
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
