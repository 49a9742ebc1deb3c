"""LoadContext: store the user's messages first, fix the history window the model will see, and decide the
kind of turn (`states.turn_kind`): a turn that needs no model gets its reply here."""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from stepwise.history.models import StoredMessage
from stepwise.inbox.arrival_typing import typing_still_shown
from stepwise.inbox.models import Fired, JobEnded, Typed
from stepwise.inbox.outside_call import OutsideCall
from stepwise.media.notices import media_notices
from stepwise.memory.keys import summary_key
from stepwise.prompt.caching import (
    CACHING_MARGIN,
    CACHING_ROOM,
    caching_can_pay,
    history_tokens,
    window_floor,
)
from stepwise.secretary.kinds import ContactWrote
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.policy import policy_for, policy_of
from stepwise.states.topics import topic_name
from stepwise.states.turn_kind import decide_turn
from stepwise.states.typing_indicator import show_typing
from stepwise.telegram.commands import is_command
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import (
    Chat,
    Checkin,
    Command,
    JobReport,
    Memory,
    Reminder,
    RulesCommand,
    TurnKind,
    TurnMeta,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from stepwise.chats.store import ChatRecord
    from stepwise.commands.table import Handling
    from stepwise.inbox.models import QueuedMessage
    from stepwise.media.models import Heard
    from stepwise.services import TurnServices
    from stepwise.telegram.conversation import Conversation
    from stepwise.tools.reads import MemoryRecall
    from stepwise.turn.ref import TurnRef

logger = logging.getLogger(__name__)


def load_context(start: LoadContextInput, services: TurnServices) -> Next:
    """Take the chat's waiting messages, store them (idempotent per message) and fix the history window (see
    `choose_window`) up to the last one taken, and decide what next. A retry finds the messages it took and
    the same window. Nothing left to answer (an earlier turn took every message): route `reply` without a
    reply, and FinishTurn only frees the chat."""
    turn = start.turn
    if (started := policy_for(turn).start(turn, services)) is not None:  # a job: from its record
        return started
    conversation = turn.conversation
    batch = services.outbound.sequencer().take_batch(conversation, turn.turn_id)
    if not batch:
        logger.info("nothing waiting: the turn ends without answering")
        return Next(route="reply")
    chat = None
    stored: list[StoredMessage] = []
    heard = hear_voice_notes(turn, batch, services)
    for waiting in batch:
        typed = waiting.typed
        note = heard.get(waiting.id)
        message = StoredMessage(
            id=waiting.id,
            chat_id=turn.chat_id,
            topic=turn.topic,
            account=turn.account,
            role="user",
            content=note.text if note is not None else stored_content(waiting),
            created_at=waiting.claimed_at or waiting.received_at,
            turn_id=turn.turn_id,
            update_id=waiting.update_id,
            attachment=waiting.attachment,
            heard=note,
            forwarded=waiting.forwarded,
            sender=waiting.sender,
        )
        if services.stores.messages.add(message):  # a retried LoadContext: counted already
            written_at = waiting.received_at if typed else None
            chat = services.stores.chats.record_message(
                conversation,
                waiting.user_id,
                services.settings.history.summary_due_at,
                written_at,
                waiting.chat_title,
            )
        stored.append(message)
    chat = chat or services.stores.chats.get(conversation)
    last = stored[-1]
    head = chat.stable_prefix_tokens if chat else 0
    window, cached = choose_window(services, conversation, last, chat.window_key if chat else "", head)
    first_key = min(window[0].sort_key, stored[0].sort_key)  # a burst longer than the window stays whole
    if chat is None or first_key != chat.window_key:
        services.stores.chats.set_window(conversation, first_key)
    scope = batch[0].scope  # the member `user_id` is: a folded burst counts against its first
    kind = kind_of_batch(batch, scope.in_group, bool(heard))
    # the person whose time zone the turn keeps: the member in a group, the owner in a contact's chat
    profile = services.stores.profiles.profile(scope.owner if conversation.in_business else scope.user_id)
    chosen_zone = profile.timezone
    person = chat  # /voice is the person's, kept on the chat itself: a topic's turn reads it there
    if heard and conversation.topic is not None:
        person = services.stores.chats.get(conversation.main)
    voice = voice_lines(heard, person, services)
    notices = media_notices(batch, voice.unheard)
    meta = TurnMeta(
        turn_id=turn.turn_id,
        chat_id=scope.conversation.chat_id,
        topic=scope.conversation.topic,
        account=scope.conversation.account,
        user_id=scope.user_id,
        update_id=batch[-1].update_id,
        user_message_id=last.id,
        first_key=first_key,
        last_key=last.sort_key,
        history_cached=cached,
        stable_prefix_tokens=head,
        created_at=iso_utc(services.clock()),
        summary=chat.summary if chat else "",
        memories=recall_memories(
            services.stores.memory,
            services.settings.history.memory_top_k,
            scope.owner,
            conversation,
            "\n".join(m.content for m in stored),
        )
        if isinstance(kind, Chat | Checkin | ContactWrote)  # the model answers someone's words
        else [],
        timezone=chosen_zone or services.settings.deployment.default_timezone,
        timezone_set=chosen_zone is not None,
        has_accounts=bool(profile.accounts),
        kind=kind,
        notices=[*voice.before, *notices["notices"]],
        footnotes=voice.footnotes,
        voice_reply=voice.spoken,
        topic_name=name_for_topic(chat, batch) if conversation.topic is not None else None,
        sender=scope.sender,
    )
    services.stores.turns.put_meta(meta)
    outcome, next_ = decide_turn(meta, services, notices["notices_only"])
    if (
        next_.route == "model"
        and policy_of(kind).shows_progress
        and not typing_still_shown(batch, services.clock())
    ):
        # the webhook's answer showed it on arrival, if it is recent
        show_typing(services.outbound, conversation)
    logger.info(
        "context loaded",
        extra={
            "answers": len(batch),
            "context_messages": len(window),
            "history_cached": cached,
            "kind": outcome,
        },
    )
    return next_


def kind_of_batch(batch: list[QueuedMessage], in_group: bool, heard: bool) -> TurnKind:
    """What the turn is, from its first waiting message (a message that is not the user's, and a slash
    command, is a turn of its own: `inbox.sequencer.alone`)."""
    first = batch[0]
    match first.kind:
        case Fired(kind="reminder"):
            return Reminder(text=first.text)
        case Fired(kind="checkin", reminder_id=number):
            return Checkin(number=number, text=first.text)
        case OutsideCall() as call:
            return call
        case ContactWrote() as wrote:  # a contact's burst: their "/reset" is text
            return wrote
        case JobEnded():
            return JobReport(report=first.text)
        case Typed() if len(batch) == 1 and not heard and first.forwarded is None:
            match command_route(first.text, in_group):
                case "answer":
                    return Command(text=first.text.strip())
                case "rules":
                    return RulesCommand()
    return Chat()


def name_for_topic(chat: ChatRecord | None, batch: list[QueuedMessage]) -> str | None:
    """The name a topic waiting for one (`topic_unnamed`) gets after this turn's answer: from the first words
    of what the user wrote, with no model call (`states.topics`)."""
    if chat is None or not chat.topic_unnamed:
        return None

    typed = [m.text for m in batch if m.typed and not is_command(m.text)]
    return next((name for text in typed if (name := topic_name(text))), None)


def command_route(text: str, in_group: bool) -> Handling | None:
    """How a slash command is answered (`stepwise.commands.table`), or None."""
    if not is_command(text):
        return None
    # the commands' table: only a command's turn (LoadContext is on every first draft's way)
    from stepwise.commands.table import route

    return route(text, in_group)


def hear_voice_notes(turn: TurnRef, batch: list[QueuedMessage], services: TurnServices) -> dict[str, Heard]:
    """The transcripts of the batch's voice notes (`states.voice_turn`, imported only when there is one)."""
    if not any(w.attachment is not None and w.attachment.is_audio and w.attachment.taken for w in batch):
        return {}
    # voice: only a turn with a voice note or a spoken reply
    from stepwise.states.voice_turn import hear_notes

    show_typing(services.outbound, turn.conversation)  # transcribing takes a few seconds
    return hear_notes(turn, batch, services)


class VoiceLines(NamedTuple):
    """What a turn's voice notes add to it: the notices of notes not heard (by message id), the offline
    recognizer's "I heard" lines and footnote, and whether the answer is also spoken."""

    unheard: Mapping[str, str] = MappingProxyType({})
    before: Sequence[str] = ()
    footnotes: Sequence[str] = ()
    spoken: bool = False


def voice_lines(heard: dict[str, Heard], chat: ChatRecord | None, services: TurnServices) -> VoiceLines:
    """The turn's `VoiceLines` (nothing without a note)."""
    if not heard:
        return VoiceLines()
    # voice: only a turn with a voice note or a spoken reply
    from stepwise.states.voice_turn import notice_for, rough_lines

    limit = services.models.voice.max_seconds if services.models.voice is not None else 300
    unheard = {id_: notice for id_, note in heard.items() if (notice := notice_for(note, limit))}
    before, footnotes = rough_lines(heard)
    spoken = any(note.status == "heard" for note in heard.values())
    speaker = services.models.voice is not None and services.models.voice.speaker is not None
    return VoiceLines(unheard, before, footnotes, spoken and speaker and bool(chat and chat.voice_replies))


def stored_content(waiting: QueuedMessage) -> str:
    """What the history keeps as the user's side of a waiting message: the text typed (or an MCP client's
    call), a note for a reminder or check-in that fired, and for a job's report a note that it ended (the
    report itself is stored as the turn's reply)."""
    match waiting.kind:
        case Typed() | OutsideCall() | ContactWrote():
            return waiting.text
        case JobEnded(number=number, title=title, status=status):
            return f"(Background job #{number} “{title}” has ended: {status}. Its report follows.)"
        case Fired(kind=kind, reminder_id=number):
            return _scheduled_note(kind, number, waiting.text)


def _scheduled_note(kind: str, reminder_id: int | None, text: str) -> str:
    """How a fired reminder or check-in is kept in the history, as the user-side message of its turn."""
    if kind == "checkin":
        return f"(Scheduled check-in #{reminder_id}, set by the user earlier. Carry it out now: {text})"
    return f"(Reminder #{reminder_id}, set by the user earlier, is due: {text})"


def choose_window(
    services: TurnServices, conversation: Conversation, last: StoredMessage, window_key: str, head: int
) -> tuple[list[StoredMessage], bool]:
    """The history window the model sees, oldest first, ending with `last`, and whether the prompt lays it
    out for prompt caching (breakpoints on the messages).

    With `HISTORY_MARGIN` set (`services.settings.history.margin` not None): the window of `history_window`
    with that margin, laid out for caching, on every model. By default (None) the layout follows the model
    (`stepwise.prompt.caching`): while caching can pay, the window that moves in blocks of `CACHING_MARGIN`,
    and when it moves it keeps the newest `history_limit` messages or, if they fall short, the fewest newest
    messages whose prompt reaches the model's minimum (`window_floor`), so that it is cached from the move
    on; when no window up to `history_limit + CACHING_MARGIN - CACHING_ROOM` messages reaches the minimum
    (and the current block does not either), the window that slides by one message, without breakpoints: a
    prompt that cannot be cached bills no history it would not otherwise send and writes nothing.
    `head` is the prompt's stable head (tools and system) in tokens as CallModel last measured it for this
    chat (0: not yet).
    """
    limit, override = services.settings.history.limit, services.settings.history.margin
    margin = CACHING_MARGIN if override is None else override
    fetched = services.stores.messages.recent(conversation, limit + margin + 1)
    whole_chat = len(fetched) <= limit + margin
    recent = [m for m in fetched if m.sort_key <= last.sort_key]
    if override is not None:
        return history_window(recent, window_key, limit, limit + margin, whole_chat), True
    model = services.settings.model.name
    floor = window_floor(model, head, recent, limit, max(limit, limit + margin - CACHING_ROOM))
    block = history_window(recent, window_key, floor or limit, limit + margin, whole_chat)
    if floor is not None or caching_can_pay(model, head, history_tokens(block)):
        return block, True
    return history_window(recent, window_key, limit, limit, whole_chat), False


def history_window(
    recent: list[StoredMessage], window_key: str, keep: int, most: int, whole_chat: bool
) -> list[StoredMessage]:
    """The window over `recent` (the chat's newest messages up to the turn's last, oldest first; more than
    `most` of them unless `whole_chat`, the chat's every message).

    The window starts where the chat's previous window started (`window_key`) as long as it then holds at
    most `most` messages; past that it moves up to the newest `keep`. So it moves in blocks, once every
    `most - keep` messages or so, and between moves consecutive turns send the same messages first, byte for
    byte: prompt caching reads them back instead of billing them. With `most == keep` the window is the
    newest `keep` messages every turn (it slides by one).
    """
    kept = [m for m in recent if m.sort_key >= window_key]
    # `kept` is every message from window_key on when the fetch reached past window_key (or the chat's start).
    if kept and len(kept) <= most and (whole_chat or len(kept) < len(recent)):
        return kept
    return recent[-keep:]


def recall_memories(
    memory: MemoryRecall | None, top_k: int, owner: int, conversation: Conversation, text: str
) -> list[Memory]:
    """The `top_k` memories of `owner` (the group's in a group, the user's in a private chat: `Scope.owner`)
    nearest to the message. Best effort: without memory the turn still goes on.

    This chat's own summary is left out: the prompt shows the chat's rolling summary anyway.
    """
    if memory is None or top_k <= 0:
        return []
    try:
        matches = memory.recall(owner, text, top_k + 1)
    except Exception as error:
        logger.warning("recall failed; continuing without memories", extra={"error": str(error)})
        return []
    own_summary = summary_key(conversation)
    return [Memory(id=m.key, text=m.text) for m in matches if m.key != own_summary][:top_k]
