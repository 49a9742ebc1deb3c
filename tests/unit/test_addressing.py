"""Whether a group message addresses the bot: mentions (UTF-16 offsets, captions), text mentions, replies,
commands; entities past the text, overlapping or of unknown types mark nothing."""

from __future__ import annotations

from typing import Any

import pytest

from stepwise.telegram.addressing import (
    BotIdentity,
    addressed,
    entity_text,
    might_be_addressed,
    without_leading_mention,
)
from stepwise.telegram.models import Message, MessageEntity

BOT = BotIdentity(id=777, username="stepwise_bot")
GROUP = {"id": -100123, "type": "supergroup", "title": "Family"}


def message(text: str | None = None, entities: list[dict[str, Any]] | None = None, **extra: Any) -> Message:
    data: dict[str, Any] = {"message_id": 5, "date": 1, "chat": GROUP, "from": {"id": 1, "first_name": "Ana"}}
    if text is not None:
        data["text"] = text
    if entities is not None:
        data["entities"] = entities
    return Message.model_validate({**data, **extra})


def mention(text: str, name: str = "@stepwise_bot") -> dict[str, Any]:
    """A mention entity of `name` in `text`, with Telegram's UTF-16 offset and length."""
    before = text[: text.index(name)]
    return {"type": "mention", "offset": len(before.encode("utf-16-le")) // 2, "length": len(name)}


def test_a_mention_of_its_username_addresses_it_in_any_case() -> None:
    text = "hey @Stepwise_Bot add bread"
    assert addressed(message(text, [mention(text, "@Stepwise_Bot")]), BOT)


def test_offsets_count_utf16_code_units_after_emoji() -> None:
    text = "👨‍👩‍👧 🍞🍞 @stepwise_bot add bread"  # emoji take two UTF-16 units each (ZWJ one)
    entity = mention(text)
    assert entity["offset"] > len(text[: text.index("@")])  # a code-point offset would be wrong
    assert addressed(message(text, [entity]), BOT)
    wrong = {**entity, "offset": len(text[: text.index("@")])}  # counted in code points: marks something else
    assert not addressed(message(text, [wrong]), BOT)


def test_a_mention_in_a_caption_counts() -> None:
    caption = "🧾 @stepwise_bot what is this?"
    photo = [{"file_id": "p", "width": 10, "height": 10}]
    found = message(None, None, caption=caption, caption_entities=[mention(caption)], photo=photo)
    assert addressed(found, BOT)
    # a caption's entities are not the text's: entities given as text entities of a caption mark nothing
    assert not addressed(message(None, [mention(caption)], caption=caption, photo=photo), BOT)


def test_another_bots_mention_or_a_longer_username_does_not() -> None:
    text = "@otherbot and @stepwise_bot2 hi"
    assert not addressed(message(text, [mention(text, "@otherbot"), mention(text, "@stepwise_bot2")]), BOT)


def test_a_text_mention_of_its_id_addresses_it_and_of_someone_else_does_not() -> None:
    me = {"type": "text_mention", "offset": 0, "length": 8, "user": {"id": 777, "is_bot": True}}
    other = {**me, "user": {"id": 778, "is_bot": False}}
    assert addressed(message("Stepwise add bread", [me]), BOT)
    assert not addressed(message("Stepwise add bread", [other]), BOT)


@pytest.mark.parametrize(
    "entity",
    [
        {"type": "mention", "offset": 30, "length": 13},  # starts past the text
        {"type": "mention", "offset": 4, "length": 400},  # ends past the text
        {"type": "mention", "offset": 4, "length": 0},
        {"type": "hashtag_of_the_future", "offset": 4, "length": 13},  # a type Stepwise does not know
        {"type": "text_mention", "offset": 0, "length": 3},  # no user
    ],
)
def test_entities_past_the_text_or_unknown_mark_nothing(entity: dict[str, Any]) -> None:
    assert not addressed(message("hey @stepwise_bot", [entity]), BOT)


def test_overlapping_entities_are_each_read_alone() -> None:
    text = "hey @stepwise_bot"
    overlapping = [
        {"type": "bold", "offset": 0, "length": 10},
        mention(text),
        {"type": "mention", "offset": 2, "length": 6},
    ]
    assert addressed(message(text, overlapping), BOT)
    assert not addressed(message(text, [{"type": "mention", "offset": 2, "length": 6}]), BOT)


def test_commands_for_it_or_for_no_bot_address_it_and_for_another_bot_do_not() -> None:
    assert addressed(message("/tasks"), BOT)
    assert addressed(message("/tasks@stepwise_bot"), BOT)
    assert addressed(message("/tasks@StepWise_Bot all"), BOT)
    assert not addressed(message("/tasks@otherbot"), BOT)
    assert not addressed(message("see /path/to/file"), BOT)


def test_a_reply_to_its_message_addresses_it_and_a_topics_root_message_does_not() -> None:
    mine = {"message_id": 3, "date": 1, "chat": GROUP, "from": {"id": 777, "is_bot": True}, "text": "Done."}
    someone = {**mine, "from": {"id": 2, "first_name": "Rui"}}
    root = {**mine, "from": {"id": 777, "is_bot": True}, "forum_topic_created": {"name": "Trip"}}
    assert addressed(message("thanks, and milk too", reply_to_message=mine), BOT)
    assert not addressed(message("thanks", reply_to_message=someone), BOT)
    assert not addressed(message("hello", reply_to_message=root), BOT)
    other_bot = {**mine, "from": {"id": 900, "is_bot": True}}
    assert not addressed(message("thanks", reply_to_message=other_bot), BOT)


def test_might_be_addressed_without_asking_getme() -> None:
    assert not might_be_addressed(message("just chatting"))
    assert not might_be_addressed(message("just chatting", [{"type": "bold", "offset": 0, "length": 4}]))
    assert might_be_addressed(message("hi @x", [{"type": "mention", "offset": 3, "length": 2}]))
    assert might_be_addressed(message("/tasks@otherbot"))
    bot_said = {"message_id": 3, "date": 1, "chat": GROUP, "from": {"id": 900, "is_bot": True}, "text": "x"}
    assert might_be_addressed(message("ok", reply_to_message=bot_said))


def test_entity_text_reads_utf16_and_refuses_what_lies_past_the_text() -> None:
    text = "🍞 @stepwise_bot"
    assert entity_text(text, MessageEntity(type="mention", offset=3, length=13)) == "@stepwise_bot"
    assert entity_text(text, MessageEntity(type="mention", offset=3, length=14)) is None


def test_the_leading_mention_is_taken_off_what_the_member_asks() -> None:
    assert without_leading_mention("@stepwise_bot, add bread to our list", BOT) == "add bread to our list"
    assert without_leading_mention("@STEPWISE_BOT add bread", BOT) == "add bread"
    assert without_leading_mention("@stepwise_bot2 add bread", BOT) == "@stepwise_bot2 add bread"
    assert without_leading_mention("thanks @stepwise_bot", BOT) == "thanks @stepwise_bot"
    assert without_leading_mention("@stepwise_bot", BOT) == "@stepwise_bot"
