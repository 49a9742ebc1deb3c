"""FinishTurn's spoken copy of an answer to a voice note, for a user who said /voice on: the reply's words
(no Markdown, links or code, up to VOICE_REPLY_MAX_CHARS) as an Ogg Opus voice message, after the text.

The text is always sent first and in full: speech that fails (Polly refuses, the offline engine is missing,
Telegram will not take the voice message) is logged and given up, never a reason to fail the turn. The spoken
copy is sent once: `voice_sent` is recorded when Telegram confirms it (or when it is given up); a sendVoice
whose answer never came is sent again by the state's retry, the same trade-off as the text's chunks.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.telegram.errors import TelegramDeliveryUncertainError, TelegramError, TelegramTransientError
from stepwise.usage.meter import count_totals, speech_usage
from stepwise.voice.models import VoiceError
from stepwise.voice.speakable import speakable_text

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.turn_records.models import Reply, TurnMeta

logger = logging.getLogger(__name__)

SPOKEN_SOURCES = frozenset({"model", "fallback"})


def speak_reply(meta: TurnMeta, reply: Reply, services: TurnServices) -> None:
    """Send the reply's spoken copy once, if it has words to speak; see the module docstring."""
    voice = services.models.voice
    if reply.voice_sent or reply.source not in SPOKEN_SOURCES or voice is None or voice.speaker is None:
        return
    text = speakable_text(answer_text(meta, reply.text), voice.max_reply_chars)
    if not text:
        services.stores.turns.mark_voice_sent(meta.turn_id)
        return
    try:
        audio = voice.speaker().synthesize(text)
    except VoiceError as error:
        logger.warning("no spoken reply: speech failed; the text was sent", extra={"error": str(error)})
        services.stores.turns.mark_voice_sent(meta.turn_id)
        return
    except Exception as error:  # a speaker's bug must not cost the turn
        logger.exception("no spoken reply: the speaker failed", extra={"error_type": type(error).__name__})
        services.stores.turns.mark_voice_sent(meta.turn_id)
        return
    _count(meta, voice.speech_engine, audio.characters, services)
    try:
        services.outbound.telegram().send_voice(
            meta.chat_id, audio.ogg_opus, duration=round(audio.seconds) or None, message_thread_id=meta.topic
        )
    except (TelegramTransientError, TelegramDeliveryUncertainError):
        raise  # the state's retry sends it again (the text's chunks are recorded: they are not)
    except TelegramError as error:  # refused for good (the user's privacy settings forbid voice messages...)
        logger.warning("Telegram refused the spoken reply; the text was sent", extra={"error": str(error)})
    services.stores.turns.mark_voice_sent(meta.turn_id)
    logger.info(
        "spoken reply sent", extra={"characters": audio.characters, "seconds": round(audio.seconds, 1)}
    )


def answer_text(meta: TurnMeta, text: str) -> str:
    """The reply without the turn's notices before it and footnotes after it (they are not read out)."""
    head = "\n\n".join(meta.notices)
    if head and text.startswith(head):
        text = text[len(head) :]
    tail = "\n\n".join(meta.footnotes)
    if tail and text.endswith(tail):
        text = text[: -len(tail)]
    return text.strip()


def _count(meta: TurnMeta, engine: str, characters: int, services: TurnServices) -> None:
    """Add the speech to the user's day, once per turn."""
    if services.stores.usage is None:
        return
    used = speech_usage(services.settings.model.name, engine, characters)
    count_totals(services.stores.usage, meta.user_id, f"{meta.turn_id}#speech", used, services.clock())
