"""Against a deployed stack: the webhook's authentication and filtering, with updates that start nothing.

Skipped unless STEPWISE_E2E_URL (the stack's WebhookUrl output) and STEPWISE_E2E_SECRET (the webhook
secret) are set. Run: STEPWISE_E2E_URL=... STEPWISE_E2E_SECRET=... .venv/bin/pytest tests/e2e
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import requests

from stepwise_local import updates

URL = os.environ.get("STEPWISE_E2E_URL", "")
SECRET = os.environ.get("STEPWISE_E2E_SECRET", "")
STRANGER = 1  # Telegram user id 1 is never on an allowlist
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not (URL and SECRET), reason="no deployed stack configured"),
]


def post(update: dict[str, Any], secret: str | None) -> requests.Response:
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    return requests.post(URL, json=update, headers=headers, timeout=30)


@pytest.mark.parametrize(("secret", "status"), [(None, 401), ("wrong-secret", 403)])
def test_a_missing_or_wrong_secret_is_rejected(secret: str | None, status: int) -> None:
    assert post(updates.text_message(STRANGER, "hello"), secret).status_code == status


def test_a_stranger_gets_200_and_nothing_starts() -> None:
    response = post(updates.text_message(STRANGER, "hello"), SECRET)
    assert response.status_code == 200 and response.json()["action"] == "not_allowed"


def test_an_unsupported_update_gets_200() -> None:
    response = post(updates.edited_message(STRANGER, "edited"), SECRET)
    assert response.status_code == 200 and response.json()["action"] == "ignored"
