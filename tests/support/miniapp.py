"""Reaching the emulated stack's Mini App from a test: initData signed as Telegram signs it (for the bot token
of the tests' stack), and the page's API over real HTTP."""

from __future__ import annotations

from typing import Any

import requests

from stepwise_local import web_app

BOT_TOKEN = "123456:integration-token"  # the integration stack's (tests/integration/conftest.py)


def init_data(
    user_id: int,
    *,
    first_name: str = "Ada",
    auth_date: int | None = None,
    bot_token: str = BOT_TOKEN,
    extra: dict[str, str] | None = None,
) -> str:
    """Telegram.WebApp.initData for `user_id`, signed with `bot_token` (a wrong one forges it), as the local
    chat's Mini App link carries it (`stepwise_local.web_app`)."""
    return web_app.init_data(user_id, bot_token, first_name=first_name, auth_date=auth_date, extra=extra)


def state(app_url: str, data: str | None) -> requests.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    return requests.get(app_url + "/api/state", headers=headers, timeout=30)


def act(app_url: str, data: str | None, action: str, target: Any, request_id: str) -> requests.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    body = {"action": action, "target": target, "request_id": request_id}
    return requests.post(app_url + "/api/action", json=body, headers=headers, timeout=30)
