"""The offline model's answers to small talk and to questions about itself: "thanks", "who are you", "how are
you", "bye"... without tools. `small_talk` returns None for anything else."""

from __future__ import annotations

import re

_OPENING = r"^(?:(?:hi|hello|hey|hiya|yo|ok|okay|oh|so|well|stepwise)\b[\s,!.]*)*"
_END = r"(?:[\s,]+(?:stepwise|buddy|mate|friend|bot))?[\s?!.]*$"

WHO = (
    "I'm Stepwise, your personal assistant here in Telegram. I keep your task list and reminders, and I "
    "remember the facts you ask me to. Right now I'm running on simple offline rules, so I understand "
    "short commands best: send *help* to see them."
)
CAPABILITIES = (
    "I can keep your task list (*add* buy milk, *list*, *done* 3, *delete* 3), set reminders (*remind me* "
    "at 5pm to call mom) and remember facts (*remember* that …). Send *help* for every command I know "
    "offline."
)
HOW_ARE_YOU = "I'm doing well, thanks for asking! What can I do for you — add a task, or check your list?"
THANKS = "You're welcome! Anything else I can add or check for you?"
BYE = "Bye for now! Your tasks and reminders are safe with me."
ACK = "👍 Just say when you need something."
SORRY = "No problem at all."
HERE = "I'm here! Send *help* to see what I can do offline."
HUMAN = (
    "I'm not a person: I'm Stepwise, an assistant program. Offline I follow simple rules; with a model API "
    "configured I talk to Claude."
)

ANSWERS: list[tuple[str, str]] = [
    (
        r"(?:thanks|thank you|thank u|thx|ty|cheers|much appreciated|appreciate it|thanks a lot|many thanks"
        r"|thank you (?:so|very) much|thanks (?:so|very) much|great,? thanks|perfect,? thanks|ok,? thanks)",
        THANKS,
    ),
    (
        r"(?:who are you|who r u|what are you|what'?s your name|what is your name|who is this"
        r"|who am i talking"
        r" to|introduce yourself|tell me about yourself"
        r"|who (?:made|built|created|wrote) you)",
        WHO,
    ),
    (
        r"(?:what can you do|what do you do|how can you help(?: me)?|what are you (?:able to do|good at|for)"
        r"|how do you work|what can i (?:ask|do) (?:you|here|with you)"
        r"|what commands do you (?:know|understand))",
        CAPABILITIES,
    ),
    (
        r"(?:how are you(?: doing)?(?: today)?|how'?s it going|how are things|how do you do|how are u"
        r"|what'?s up"
        r"|whats up|sup|how have you been|you ok|are you ok(?:ay)?)",
        HOW_ARE_YOU,
    ),
    (
        r"(?:bye|goodbye|good bye|bye bye|see you|see ya|see you later|later|ttyl|good night|goodnight|night"
        r"|gn|have a good (?:day|night|evening))",
        BYE,
    ),
    (
        r"(?:ok|okay|k|kk|cool|great|nice|perfect|awesome|got it|alright|all right|sounds good|fine|good"
        r"|excellent|sure|understood|noted|ok cool|great stuff|nice one|good job|well done|👍|👌)",
        ACK,
    ),
    (r"(?:sorry|my bad|oops|apologies|never ?mind|nvm|forget it)", SORRY),
    (r"(?:are you there|you there|anyone there|are you awake|ping)", HERE),
    (r"(?:are you (?:a )?(?:human|real|a person|a bot|a robot|an ai|ai|chatgpt|claude))", HUMAN),
]
_COMPILED = [(re.compile(_OPENING + pattern + _END, re.I), answer) for pattern, answer in ANSWERS]
MAX_LENGTH = 80  # small talk is short; longer messages are something else


def small_talk(text: str) -> str | None:
    """The answer to a small-talk message or a question about the assistant itself, or None."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    if not cleaned or len(cleaned) > MAX_LENGTH:
        return None
    for pattern, answer in _COMPILED:
        if pattern.match(cleaned):
            return answer
    return None
