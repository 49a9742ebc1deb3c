"""Reaching the emulated stack's Mini App from a test: initData signed as Telegram signs it (for the bot token
of the tests' stack), and the page's API over real HTTP."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

import requests

from stepwise.miniapp.init_data import sign

BOT_TOKEN = "123456:integration-token"  # the integration stack's (tests/integration/conftest.py)


def init_data(
    user_id: int,
    *,
    first_name: str = "Ada",
    auth_date: int | None = None,
    bot_token: str = BOT_TOKEN,
    extra: dict[str, str] | None = None,
) -> str:
    """Telegram.WebApp.initData for `user_id`, signed with `bot_token` (a wrong one forges it)."""
    fields = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": user_id, "first_name": first_name, "language_code": "en"}),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        **(extra or {}),
    }
    fields["hash"] = sign(fields, bot_token)
    return urlencode(fields)


def state(app_url: str, data: str | None) -> requests.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    return requests.get(app_url + "/api/state", headers=headers, timeout=30)


def act(app_url: str, data: str | None, action: str, target: Any, request_id: str) -> requests.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    body = {"action": action, "target": target, "request_id": request_id}
    return requests.post(app_url + "/api/action", json=body, headers=headers, timeout=30)
