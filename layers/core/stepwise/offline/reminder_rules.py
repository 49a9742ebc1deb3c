"""Rule-based intents for the reminder tools: "remind me at 5pm to call mom", "every friday at 17:00 ask me
how my week went", "list my reminders", "cancel reminder 2", "/timezone Europe/Lisbon", "snooze 10 minutes".

`parse_reminder_intent` returns the tool calls the real model would make, or None when the text is none of
these ("remind me to call mom", without a time, stays a task: see `stepwise.offline.task_commands`).
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stepwise.offline.calls import MAX_IDS
from stepwise.offline.reminder_times import (
    DURATION,
    SEPARATOR,
    day_first,
    duration_minutes,
    names_a_time,
    schedule_end,
    schedule_input,
    schedule_start,
)
from stepwise.prompt.clock_line import UserClock
from stepwise.turn_records.models import REMINDER_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.model.blocks import MessageParam
    from stepwise.offline.calls import ToolCall

SNOOZE_MINUTES = 10
SNOOZED_TEXT = "snoozed reminder"
MAX_LENGTH = 1000  # longer messages are no reminder commands (the tool takes at most 500 characters of text)
_QUOTES = "\"'\u201c\u201d\u2018\u2019"

_POLITE_START = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so)\b[\s,]*)?(?:(?:please|pls|kindly|can you|could you|would you|will you)\s+)*",
    re.I,
)
_POLITE_END = re.compile(r"(?:[\s,]+(?:please|pls|thanks|thank you|thx))+$", re.I)
_TRIGGER = re.compile(
    r"(?<![^\s,])(?:remind\s+me|ping\s+me|nudge\s+me|reminder"
    r"|(?:set|add|create|make|schedule)\s+(?:me\s+)?(?:an?\s+)?(?:new\s+)?reminder(?:\s+for\s+me)?)(?=[\s,:]|$)",
    re.I,
)
_AFTER_TRIGGER = re.compile(r"(?:\s*[,:]\s*|\s+)(?:(?:to|about|of|that)\s+)?", re.I)
_FOR = re.compile(r"(?:\s*,\s*|\s+)(?:for\s+)?", re.I)
_INSTRUCTION = re.compile(
    r"(?:send|show|give|tell|ask|list|summari[sz]e|review|check\s+(?:in|on)|message|text|share|recap|read"
    r"|report|go\s+(?:through|over)|plan|quiz)\b",
    re.I,
)
_EXPLICIT_CHECKIN = re.compile(r"check\s+(?:in|on)\b", re.I)
_SEPARATOR = re.compile(SEPARATOR)
_KIND = r"(?:reminders|check-?ins|alarms)"
_ONE_KIND = r"(?:reminders?|check-?ins?|alarms?)"
_IDS = rf"#?\d{{1,18}}(?:\s*(?:,|and|&)\s*#?\d{{1,18}}){{0,{MAX_IDS - 1}}}"
_ZONE = r"(?P<zone>[A-Za-z][\w+-]*(?:/[\w+-]+){0,2})"
_ZONE_PATH = r"(?P<zone>[A-Za-z][\w+-]*(?:/[\w+-]+){1,2})"  # only a name with a slash: "Europe/Lisbon"


def _list(match: re.Match[str], reminded: str | None) -> list[ToolCall]:
    return [("list_reminders", {})]


def _cancel(match: re.Match[str], reminded: str | None) -> list[ToolCall]:
    return [("cancel_reminder", {"reminder_id": int(n)}) for n in re.findall(r"\d+", match.group("ids"))]


def _timezone(match: re.Match[str], reminded: str | None) -> list[ToolCall]:
    return [("set_timezone", {"timezone": match.group("zone")})]


def _snooze(match: re.Match[str], reminded: str | None) -> list[ToolCall]:
    amount, bare = match.group("amount"), match.group("bare")
    minutes = duration_minutes(amount) if amount else int(bare) if bare else SNOOZE_MINUTES
    return [("set_reminder", {"text": reminded or SNOOZED_TEXT, "checkin": False, "in_minutes": minutes})]


@functools.cache
def _command_rules() -> list[tuple[re.Pattern[str], Callable[[re.Match[str], str | None], list[ToolCall]]]]:
    """The fixed-form commands (time zone, list, cancel, snooze), compiled on first use."""
    rules: list[tuple[str, Callable[[re.Match[str], str | None], list[ToolCall]]]] = [
        (rf"^/(?:timezone|tz|time_zone)(?:@\w+)?\s+{_ZONE}$", _timezone),
        (
            rf"^(?:set|change|update|switch)\s+(?:my\s+|the\s+)?time\s?zone\s+(?:to\s+|=\s*|:\s*)?{_ZONE}$",
            _timezone,
        ),
        (rf"^(?:my\s+)?time\s?zone\s*(?:is|:|=|to)\s*{_ZONE}$", _timezone),
        (rf"^time\s?zone\s+{_ZONE_PATH}$", _timezone),
        (rf"^(?:i'?m|i\s+am|i\s+live)(?:\s+now)?\s+in\s+{_ZONE_PATH}(?:\s+now)?$", _timezone),
        (rf"^/{_KIND}(?:@\w+)?$", _list),
        (
            rf"^(?:(?:list|show|view|see|get|display)(?:\s+me)?\s+)?(?:all\s+)?(?:my\s+|the\s+)?"
            rf"(?:active\s+|current\s+|upcoming\s+|open\s+|scheduled\s+)?{_KIND}(?:\s+and\s+{_KIND})?$",
            _list,
        ),
        (
            rf"^(?:what|which|any)\s+(?:active\s+|upcoming\s+)?{_KIND}\s+(?:do\s+i\s+have|have\s+i\s+(?:got|set)"
            r"|are\s+(?:set|there|scheduled|active|on)|did\s+i\s+set)(?:\s+(?:set|up|scheduled))?$",
            _list,
        ),
        (rf"^(?:what\s+are|what'?s|whats)\s+my\s+{_KIND}$", _list),
        (rf"^do\s+i\s+have\s+any\s+{_KIND}(?:\s+set)?$", _list),
        (
            r"^(?:cancel|delete|remove|stop|drop|disable|clear|turn\s+off|kill|end)\s+(?:the\s+|my\s+)?"
            rf"{_ONE_KIND}\s+(?:number\s+|no\.?\s*)?(?P<ids>{_IDS})$",
            _cancel,
        ),
        (rf"^{_ONE_KIND}\s+(?P<ids>{_IDS})\s+(?:off|cancel|stop)$", _cancel),
        (
            r"^(?:snooze|remind\s+me\s+again)(?:\s+(?:it|that|this|the\s+reminder))?(?:\s+(?:for|in|by))?"
            rf"(?:\s+(?:(?P<amount>{DURATION})|(?P<bare>\d{{1,6}})))?$",
            _snooze,
        ),
    ]
    return [(re.compile(pattern, re.I), build) for pattern, build in rules]


def utc_clock() -> UserClock:
    """The clock the rules assume when the user's is unknown: UTC, now."""
    return UserClock(datetime.now(UTC), "UTC")


def clean(text: str) -> str:
    """`text` on one line, without the politeness around a command ("please", "can you", "thanks")."""
    cleaned = re.sub(r"\s+", " ", text.strip()).rstrip("?!. ")
    cleaned = _POLITE_END.sub("", _POLITE_START.sub("", cleaned))
    return cleaned.rstrip("?!., ")


def parse_reminder_intent(text: str, clock: UserClock, reminded: str | None = None) -> list[ToolCall] | None:
    """The tool calls a reminder, check-in or time zone command asks for, or None when the text is not one.
    `clock` is the user's local now; `reminded` the text of the reminder just sent, for "snooze"."""
    if len(text) > MAX_LENGTH:
        return None
    cleaned = clean(text)
    for pattern, build in _command_rules():
        match = pattern.match(cleaned)
        if match:
            return build(match, reminded) or None
    return _reminder(cleaned, clock) or _checkin(cleaned, clock) or None


def _reminder(text: str, clock: UserClock) -> list[ToolCall]:
    """ "[when] remind me [when] to <what> [when]": a plain reminder."""
    trigger = _TRIGGER.search(text)
    if trigger is None:
        return []
    before = text[: trigger.start()].rstrip(" ,")
    if before and schedule_end(before) != len(before):
        return []
    position, inside = trigger.end(), ""
    lead = _FOR.match(text, position)
    end = schedule_end(text, lead.end()) if lead else None
    if lead and end is not None and _AFTER_TRIGGER.match(text, end):
        inside, position = text[lead.end() : end], end
    after = _AFTER_TRIGGER.match(text, position)
    if after is None:
        return []
    return _set_reminder(
        " ".join(p for p in (before, inside) if p), text[after.end() :], clock, checkin=False
    )


def _checkin(text: str, clock: UserClock) -> list[ToolCall]:
    """ "[when] <instruction> [when]" ("every morning at 8 send me my open tasks", "check in with me every day
    at 9"): at each time, run the instruction as a turn."""
    first = schedule_end(text)
    separator = _SEPARATOR.match(text, first) if first is not None else None
    before = text[:first] if separator and first is not None else ""
    rest = text[separator.end() :] if separator else text
    if not _INSTRUCTION.match(rest):
        return []
    calls = _set_reminder(before, rest, clock, checkin=True)
    if not calls:
        return []
    args = calls[0][1]
    if "repeat" in args or _EXPLICIT_CHECKIN.match(args["text"]):
        return calls
    # Once only: "in 2 hours ask me ..." or "tomorrow at 9 send me ...", the when first and a delay or a time
    # of day; "show me my tasks tomorrow" or "tomorrow show me my tasks" asks about tomorrow, now.
    return calls if before and ("in_minutes" in args or names_a_time(before)) else []


def _set_reminder(before: str, body: str, clock: UserClock, checkin: bool) -> list[ToolCall]:
    """set_reminder for `body` (what to remind of, perhaps ending in a schedule) and the schedule said
    `before` it; nothing when there is no schedule, no text or they do not parse. When the end of `body` does
    not fit the schedule before it ("every evening ask me what I got done today"), it is part of the text."""
    start = schedule_start(body)
    if start:
        calls = _with_schedule(before, body[:start], body[start:], clock, checkin)
        if calls or not before:
            return calls
    return _with_schedule(before, body, "", clock, checkin)


def _with_schedule(before: str, text: str, after: str, clock: UserClock, checkin: bool) -> list[ToolCall]:
    """set_reminder for `text` with the schedule said before and after it, if they make one."""
    text = text.rstrip(" ,").strip().strip(_QUOTES).rstrip(",;:- \u2013").strip()
    phrase = " ".join(p for p in (before, after) if p)
    if not phrase or not text:
        return []
    when = schedule_input(phrase, clock.now, dayfirst=day_first(clock.zone))
    if when is None:
        return []
    args: dict[str, Any] = {"text": text, "checkin": checkin, **when}
    task = re.fullmatch(r"task\s+#?(\d{1,18})|#(\d{1,18})", text, re.I)
    if task:
        args["task_id"] = int(task.group(1) or task.group(2))
    return [("set_reminder", args)]


def last_reminder(messages: list[MessageParam]) -> str | None:
    """The text of the newest reminder the assistant sent in `messages` ("⏰ Reminder: call mom" -> "call
    mom"), or None when there is none."""
    for message in messages[::-1]:  # (mypy reads reversed() of these TypedDicts as Any)
        if message["role"] != "assistant":
            continue
        texts = [block["text"] for block in message["content"] if block["type"] == "text"]
        for text in reversed(texts):
            for line in reversed(text.splitlines()):
                if line.strip().startswith(REMINDER_PREFIX):
                    reminded = line.strip()[len(REMINDER_PREFIX) :].strip()
                    if reminded:
                        return reminded
    return None
