"""`/voice on|off`: whether answers to voice notes also come as voice messages (kept on the chat's record, the
main conversation's: in the private chat with the assistant, the user's own, for every topic)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest

USAGE = "Use /voice on or /voice off: with it on, my answers to your voice notes also come as voice messages."


def voice(request: CommandRequest) -> str:
    """Turn spoken answers on or off, or say how they are."""
    services, chat = request.services, request.meta.conversation.main  # one setting per person
    setup = services.models.voice
    if setup is None:
        return "Voice notes are off in this deployment (VOICE_TRANSCRIBER=off), so I can't answer them aloud."
    if setup.speaker is None:
        return "Spoken answers are off in this deployment (VOICE_SPEAKER=off); I still read your voice notes."
    choice = request.args.strip().lower()
    if choice in ("on", "off"):
        services.stores.chats.set_voice_replies(chat, choice == "on")
        if choice == "on":
            return (
                "Spoken answers are on: when you send me a voice note, my answer also comes as a voice "
                f"message (up to about {setup.max_reply_chars:,} characters; the text always comes in full)."
            )
        return "Spoken answers are off: I answer your voice notes in text only."
    if choice:
        return USAGE
    record = services.stores.chats.get(chat)
    state = "on" if record is not None and record.voice_replies else "off"
    return f"Spoken answers are {state}. {USAGE}"
