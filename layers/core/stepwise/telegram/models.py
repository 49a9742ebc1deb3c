"""Pydantic models for the parts of Telegram Bot API objects that Stepwise uses.

Incoming values are checked against Telegram's documented ranges, strictly (no string or bool passes as a
number), so that nothing out of range reaches DynamoDB (38 significant digits) or an execution name.
"""

from typing import Annotated

from pydantic import AfterValidator, Field

from stepwise.telegram.model_base import _TelegramModel

MAX_UPDATE_ID = 2**53 - 1  # Telegram: a signed 32-bit int; lenient up to the largest exact double
MAX_CHAT_ID = 2**53 - 1  # Telegram: user and chat ids have at most 52 significant bits
MAX_MESSAGE_ID = 2**31 - 1
MAX_INCOMING_TEXT = 8192  # Telegram's texts are at most 4096 characters; twice that is surely forged
MAX_CALLBACK_DATA_BYTES = 64
MAX_FILE_ID = 256  # Telegram's file ids are under 100 characters
MAX_FILE_NAME = 1024  # file names and MIME types; Telegram's are far shorter
MAX_PHOTO_SIZES = 32  # Telegram sends a handful of sizes of one photo
MAX_DIMENSION = 100_000
MAX_ENTITIES = 1024  # Telegram marks up a 4096-character text; more entities than this are surely forged
MAX_ENTITY_OFFSET = 2**31 - 1  # past the text is kept (and ignored by stepwise.telegram.addressing)
MAX_CONNECTION_ID = 256  # a business connection's id (Telegram's are a few dozen characters)
MAX_DELETED_IDS = 1000  # the messages one deletion names


def _utf8_bytes_at_most(limit: int) -> AfterValidator:
    def check(value: str) -> str:
        if len(value.encode("utf-8", "surrogatepass")) > limit:
            raise ValueError(f"at most {limit} bytes in UTF-8")
        return value

    return AfterValidator(check)


UpdateId = Annotated[int, Field(ge=0, le=MAX_UPDATE_ID)]
TelegramId = Annotated[int, Field(ge=-MAX_CHAT_ID, le=MAX_CHAT_ID)]
MessageId = Annotated[int, Field(ge=1, le=MAX_MESSAGE_ID)]
UnixTime = Annotated[int, Field(ge=0, le=MAX_UPDATE_ID)]
IncomingText = Annotated[str, Field(max_length=MAX_INCOMING_TEXT)]
CallbackData = Annotated[str, _utf8_bytes_at_most(MAX_CALLBACK_DATA_BYTES)]
FileId = Annotated[str, Field(min_length=1, max_length=MAX_FILE_ID)]
FileSize = Annotated[int, Field(ge=0, le=MAX_UPDATE_ID)]
FileText = Annotated[str, Field(max_length=MAX_FILE_NAME)]
Dimension = Annotated[int, Field(ge=0, le=MAX_DIMENSION)]
ConnectionId = Annotated[str, Field(min_length=1, max_length=MAX_CONNECTION_ID)]


class User(_TelegramModel):
    """A Telegram user or bot."""

    id: TelegramId
    is_bot: bool = False
    first_name: str = ""
    last_name: str | None = None
    username: str | None = None
    language_code: str | None = None


class Chat(_TelegramModel):
    """A chat (private, group, supergroup or channel)."""

    id: TelegramId
    type: str
    title: str | None = None
    username: str | None = None
    first_name: str | None = None


class TelegramFile(_TelegramModel):
    """A file of a message (Document, Voice, Audio, Video, Sticker...): the fields Stepwise reads."""

    file_id: FileId
    file_unique_id: FileText | None = None
    file_size: FileSize | None = None
    mime_type: FileText | None = None
    file_name: FileText | None = None
    duration: Annotated[int, Field(ge=0, le=MAX_UPDATE_ID)] | None = None  # voice, audio, video, video_note


class PhotoSize(TelegramFile):
    """One size of a photo; Telegram sends several, smallest first."""

    width: Dimension
    height: Dimension


class MessageOrigin(_TelegramModel):
    """Where a forwarded message came from (MessageOriginUser, ...HiddenUser, ...Chat, ...Channel, told apart
    by `type`); a type Telegram adds later still parses."""

    type: FileText
    date: UnixTime
    sender_user: User | None = None  # user
    sender_user_name: FileText | None = None  # hidden_user
    sender_chat: Chat | None = None  # chat
    chat: Chat | None = None  # channel
    message_id: MessageId | None = None  # channel
    author_signature: FileText | None = None  # chat, channel


class MessageEntity(_TelegramModel):
    """A marked-up span of a text or caption (`mention`, `text_mention`, `bot_command`...): offset and length
    in UTF-16 code units. Any type parses (Telegram adds types); a span past the text parses too and marks
    nothing (`stepwise.telegram.addressing`)."""

    type: Annotated[str, Field(max_length=64)]
    offset: Annotated[int, Field(ge=0, le=MAX_ENTITY_OFFSET)]
    length: Annotated[int, Field(ge=0, le=MAX_ENTITY_OFFSET)]
    user: User | None = None  # text_mention: the user mentioned


Entities = Annotated[list[MessageEntity], Field(max_length=MAX_ENTITIES)]


class ForumTopicCreated(_TelegramModel):
    """The service message that opens a topic; `is_name_implicit`: Telegram made the name up."""

    name: Annotated[str, Field(max_length=MAX_FILE_NAME)] = ""
    icon_color: int | None = None
    is_name_implicit: bool = False


class ForumTopicEdited(_TelegramModel):
    """The service message of a topic renamed (or its icon changed)."""

    name: Annotated[str, Field(max_length=MAX_FILE_NAME)] | None = None


class Message(_TelegramModel):
    """A message; only the fields the assistant reads."""

    message_id: MessageId
    date: UnixTime
    chat: Chat
    # A topic's id (its first message's id); in a topic only with is_topic_message (stepwise.telegram.topics)
    message_thread_id: MessageId | None = None
    is_topic_message: bool | None = None
    # A topic's two service messages
    forum_topic_created: ForumTopicCreated | None = None
    forum_topic_edited: ForumTopicEdited | None = None
    from_user: User | None = Field(default=None, alias="from")
    # In groups: the chat a message is sent on behalf of (a channel posting, an anonymous admin's group)
    sender_chat: Chat | None = None
    text: IncomingText | None = None
    entities: Entities | None = None
    caption: IncomingText | None = None
    caption_entities: Entities | None = None
    reply_to_message: "Message | None" = None  # the message this one replies to (its own reply is not kept)
    photo: Annotated[list[PhotoSize], Field(max_length=MAX_PHOTO_SIZES)] | None = None
    document: TelegramFile | None = None
    voice: TelegramFile | None = None
    audio: TelegramFile | None = None
    video: TelegramFile | None = None
    video_note: TelegramFile | None = None
    animation: TelegramFile | None = None
    sticker: TelegramFile | None = None
    forward_origin: MessageOrigin | None = None  # set on a forwarded message: someone else's words
    # A message in a chat of a Telegram Business account the bot is connected to (docs/secretary.md), and
    # the bot itself, when it sent this one through that connection
    business_connection_id: ConnectionId | None = None
    sender_business_bot: User | None = None


class BusinessBotRights(_TelegramModel):
    """What the owner of a business account lets the bot do there (Telegram sends more rights: ignored)."""

    can_reply: bool = False


class BusinessConnection(_TelegramModel):
    """The bot connected to (or disconnected from) a person's Telegram Business account: `user` is the
    account's owner, `user_chat_id` the owner's private chat with the bot."""

    id: ConnectionId
    user: User
    user_chat_id: TelegramId
    date: UnixTime
    rights: BusinessBotRights | None = None
    can_reply: bool | None = None  # before Bot API 9.0, instead of `rights`
    is_enabled: bool

    @property
    def may_reply(self) -> bool:
        """Whether the bot may answer in the owner's chats."""
        if self.rights is not None:
            return self.rights.can_reply
        return bool(self.can_reply)


class BusinessMessagesDeleted(_TelegramModel):
    """Messages deleted from a chat of a connected business account."""

    business_connection_id: ConnectionId
    chat: Chat
    message_ids: Annotated[list[MessageId], Field(max_length=MAX_DELETED_IDS)]


class CallbackQuery(_TelegramModel):
    """A press on an inline keyboard button."""

    id: str
    from_user: User = Field(alias="from")
    message: Message | None = None
    data: CallbackData | None = None
    chat_instance: str | None = None


class Update(_TelegramModel):
    """An incoming update as delivered to the webhook."""

    update_id: UpdateId
    message: Message | None = None
    edited_message: Message | None = None
    channel_post: Message | None = None
    edited_channel_post: Message | None = None
    callback_query: CallbackQuery | None = None
    business_connection: BusinessConnection | None = None
    business_message: Message | None = None
    edited_business_message: Message | None = None
    deleted_business_messages: BusinessMessagesDeleted | None = None
