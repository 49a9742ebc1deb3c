"""The webhook in groups: addressed or nothing, members only, served groups only, bad input; nothing stored
and no getMe for what cannot be addressed to the bot."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.approvals.lifecycle import PressServices
from stepwise.inbox.sequencer import Sequencer
from stepwise.telegram.addressing import BotIdentity
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramError
from stepwise.webhook import WebhookOutcome, WebhookServices, handle_update
from stepwise_local import updates
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.telegram import InMemoryTelegram

SECRET = "s3cret"
GROUP = updates.GROUP_CHAT_ID
BOT = BotIdentity(777, "stepwise_bot")


class GetMe:
    """Who the bot is, counting how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.fails = False

    def __call__(self) -> BotIdentity:
        self.asked += 1
        if self.fails:
            raise TelegramError("getMe", 502, "Bad Gateway")
        return BOT


@pytest.fixture
def inbox() -> InMemoryChatInbox:
    return InMemoryChatInbox()


@pytest.fixture
def get_me() -> GetMe:
    return GetMe()


def services_for(inbox: InMemoryChatInbox, get_me: GetMe, **settings: Any) -> WebhookServices:
    telegram = InMemoryTelegram()
    presses = PressServices(approvals=InMemoryApprovalStore(), telegram=lambda: telegram, resumer=None)  # type: ignore[arg-type]
    sequencer = Sequencer(inbox=inbox, starter=RecordingStarter(), approval_timeout_seconds=120)
    return WebhookServices(
        secret=SECRET,
        allowed_users=frozenset({42, 43}),
        sequencer=lambda: sequencer,
        presses=lambda: presses,
        bot=get_me,
        **settings,
    )


@pytest.fixture
def services(inbox: InMemoryChatInbox, get_me: GetMe) -> WebhookServices:
    return services_for(inbox, get_me)


def post(services: WebhookServices, update: dict[str, Any]) -> WebhookOutcome:
    return handle_update(SECRET, json.dumps(update), services)


def test_an_unaddressed_group_message_is_ignored_without_asking_getme_or_storing_anything(
    services: WebhookServices, inbox: InMemoryChatInbox, get_me: GetMe
) -> None:
    outcome = post(services, updates.group_message(42, "anyone for dinner?"))
    assert (outcome.status, outcome.action, outcome.detail) == (200, "ignored", "not addressed to the bot")
    assert inbox.pending(Conversation(GROUP)) == [] and get_me.asked == 0


def test_a_mention_starts_a_turn_with_what_was_asked_and_who_asked(
    services: WebhookServices, inbox: InMemoryChatInbox, get_me: GetMe
) -> None:
    outcome = post(
        services, updates.group_message(42, "@stepwise_bot add bread to our list", first_name="Ana")
    )
    assert (outcome.status, outcome.action) == (200, "started")
    (waiting,) = inbox.pending(Conversation(GROUP))
    assert (waiting.text, waiting.sender, waiting.user_id) == ("add bread to our list", "Ana", 42)
    post(services, updates.group_message(43, "@stepwise_bot and milk", first_name="Rui"))
    assert get_me.asked == 2  # the webhook's services ask getMe; the runtime's cache it (BotInfo)


def test_a_mention_of_another_bot_and_a_command_for_another_bot_are_ignored(
    services: WebhookServices, inbox: InMemoryChatInbox
) -> None:
    assert post(services, updates.group_message(42, "@otherbot play music")).action == "ignored"
    assert post(services, updates.group_message(42, "/tasks@otherbot")).action == "ignored"
    assert post(services, updates.group_message(42, "/tasks@stepwise_bot")).action == "started"
    assert [m.text for m in inbox.pending(Conversation(GROUP))] == ["/tasks@stepwise_bot"]


def test_a_reply_to_a_message_the_bot_never_sent_is_ignored(services: WebhookServices) -> None:
    someone = {"message_id": 9, "date": 1, "chat": {"id": GROUP, "type": "supergroup"}, "text": "hi"}
    someone["from"] = {"id": 43, "first_name": "Rui"}
    assert post(services, updates.group_message(42, "me too", reply_to=someone)).action == "ignored"
    bots = {**someone, "from": {"id": 777, "is_bot": True, "first_name": "Stepwise"}}
    assert post(services, updates.group_message(42, "and milk", reply_to=bots)).action == "started"


def test_members_off_the_allowlist_other_bots_channels_and_anonymous_admins_get_nothing(
    services: WebhookServices, inbox: InMemoryChatInbox, get_me: GetMe
) -> None:
    stranger = updates.group_message(99, "@stepwise_bot what is on the list?")
    assert post(services, stranger).action == "not_allowed"
    bot = updates.group_message(42, "@stepwise_bot hello")
    bot["message"]["from"]["is_bot"] = True
    assert post(services, bot).action == "not_allowed"
    for sender_chat in (
        {"id": -1009, "type": "channel", "title": "News"},
        {"id": GROUP, "type": "supergroup"},
    ):
        on_behalf = updates.group_message(
            42, "@stepwise_bot hello"
        )  # an anonymous admin's `from` is a placeholder
        on_behalf["message"]["sender_chat"] = sender_chat
        assert post(services, on_behalf).action == "not_allowed"
    assert inbox.pending(Conversation(GROUP)) == [] and get_me.asked == 0


def test_allowed_chat_ids_limits_the_groups_served(inbox: InMemoryChatInbox, get_me: GetMe) -> None:
    services = services_for(inbox, get_me, allowed_chats=frozenset({-100555}))
    outcome = post(services, updates.group_message(42, "@stepwise_bot hello"))
    assert (outcome.action, outcome.detail) == ("ignored", "group not served")
    served = updates.group_message(42, "@stepwise_bot hello", chat_id=-100555)
    assert post(services, served).action == "started"
    assert post(services, updates.text_message(42, "hello")).action == "started"  # private chats still are


def test_group_replies_all_answers_every_members_message(inbox: InMemoryChatInbox, get_me: GetMe) -> None:
    services = services_for(inbox, get_me, group_replies="all")
    assert post(services, updates.group_message(42, "anyone for dinner?")).action == "started"
    assert post(services, updates.group_message(99, "me!")).action == "not_allowed"


@pytest.mark.parametrize(
    "entities",
    [
        [{"type": "mention", "offset": 400, "length": 13}],
        [{"type": "mention", "offset": 0, "length": 4000}],
        [{"type": "future_type", "offset": 0, "length": 13}, {"type": "mention", "offset": 0, "length": 5}],
    ],
)
def test_bad_entities_are_answered_200_and_start_nothing(
    services: WebhookServices, inbox: InMemoryChatInbox, entities: list[dict[str, Any]]
) -> None:
    update = updates.group_message(42, "@stepwise_bot hi")
    update["message"]["entities"] = entities
    outcome = post(services, update)
    assert (outcome.status, outcome.action) == (200, "ignored")
    assert inbox.pending(Conversation(GROUP)) == []


def test_malformed_entities_are_invalid(services: WebhookServices) -> None:
    update = updates.group_message(42, "@stepwise_bot hi")
    update["message"]["entities"] = [{"type": "mention", "offset": -1, "length": 13}]
    assert (post(services, update).status, post(services, update).action) == (200, "invalid")


def test_a_failed_getme_asks_telegram_to_deliver_the_update_again(
    services: WebhookServices, inbox: InMemoryChatInbox, get_me: GetMe
) -> None:
    get_me.fails = True
    outcome = post(services, updates.group_message(42, "@stepwise_bot hi"))
    assert (outcome.status, outcome.action, outcome.chat_id) == (503, "unavailable", GROUP)
    assert inbox.pending(Conversation(GROUP)) == []
    get_me.fails = False
    assert post(services, updates.group_message(42, "@stepwise_bot hi")).action == "started"
