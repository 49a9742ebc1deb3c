"""events/*.json are real Telegram update shapes; the webhook handler accepts each one as expected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model
from support.tools import ROOT

from stepwise.telegram.models import Update
from stepwise_local.emulation import Emulation, LocalConfig

EXPECTED = {
    "webhook-text-message": "started",
    "webhook-topic-message": "started",  # in topic 61 of the private chat: a conversation of its own
    "webhook-command": "started",
    "webhook-not-allowlisted": "not_allowed",
    "webhook-photo": "started",
    "webhook-voice": "started",  # answered "I can't listen to voice notes yet", without a model call
    "webhook-sticker": "started",  # answered "I can't see stickers yet", without a model call
    "webhook-edited-message": "ignored",
    "webhook-group-join": "ignored",
    "webhook-group-message": "ignored",  # a member's message in a group that does not address the bot
    "webhook-callback-query": "ignored",  # a press on a request this (empty) stack does not know
    "webhook-business-connection": "ignored",  # an account's owner who is not on the allowlist: not kept
    "webhook-business-message": "ignored",  # a contact writes through a connection never kept: nothing
}
EVENTS = sorted((ROOT / "events").glob("webhook-*.json"))


def test_every_event_file_is_covered() -> None:
    assert {path.stem for path in EVENTS} == set(EXPECTED)


@pytest.mark.parametrize("path", EVENTS, ids=lambda p: p.stem)
def test_events_are_http_api_events_carrying_telegram_updates(path: Path) -> None:
    event = APIGatewayProxyEventV2Model.model_validate_json(path.read_text())
    assert event.body is not None
    Update.model_validate_json(event.body)


@pytest.fixture(scope="module")
def emulation() -> Iterator[Emulation]:
    env = json.loads((ROOT / "events" / "env.json").read_text())["WebhookFunction"]
    config = LocalConfig(
        telegram_base_url="http://127.0.0.1:9",
        webhook_secret=env["TELEGRAM_WEBHOOK_SECRET"],
        parameters={"AllowedUserIds": env["ALLOWED_USER_IDS"]},
    )
    with Emulation(config) as running:
        yield running


@pytest.mark.parametrize("path", EVENTS, ids=lambda p: p.stem)
def test_the_webhook_handler_answers_each_event_as_expected(emulation: Emulation, path: Path) -> None:
    event = json.loads(path.read_text())
    response = emulation.invoke(emulation.webhook_function, event)
    assert response["statusCode"] == 200
    assert response["headers"]["x-stepwise-action"] == EXPECTED[path.stem]
    update = Update.model_validate_json(event["body"])
    if update.message is not None:  # the next event may be for the same chat: let this turn end first
        emulation.wait_idle(update.message.chat.id)
