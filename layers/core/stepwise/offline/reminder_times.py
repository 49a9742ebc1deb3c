"""When a reminder is due, from everyday English: "at 5pm", "tomorrow at 9", "in 20 minutes", "every weekday
at 8", "every 2 hours".

Such a phrase is a run of parts (repeat, relative, date, clock time, part of day): `schedule_end` and
`schedule_start` find one before or after what to remind of, and `schedule_input` turns it into set_reminder's
`at` (a local date-time), `in_minutes` or `repeat`, against the user's local now.

Absolute dates and clock times ("dec 24", "24/12", "2026-12-24", "5:30 pm", "17h30") are read by
python-dateutil.
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from dateutil import parser

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri"]
WEEKEND = ["sat", "sun"]
DAYPART_TIMES = {"morning": (8, 0), "afternoon": (15, 0), "evening": (19, 0), "night": (21, 0)}
DEFAULT_TIME = (9, 0)  # a date without a time of day: "tomorrow", "on friday"
MAX_MINUTES = 10**7  # far beyond the tool's limit (which it reports), short of absurd numbers

_NUMBER_WORDS = {
    "a couple of": 2,
    "half an": 0.5,
    "half a": 0.5,
    "an": 1,
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty-five": 45,
    "forty five": 45,
    "sixty": 60,
    "ninety": 90,
}
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 1440, "w": 10080}

_WORD_NUMBER = "|".join(
    re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_NUMBER_WORDS, key=len, reverse=True)
)
_UNIT = r"(?:minutes?|mins?|m|hours?|hrs?|hr|h|days?|d|weeks?|wks?|w)\b"
# "20m" or "20 minutes", but "an hour": a word needs a space before its unit ("and" is no "an d").
_QUANTITY_READ = rf"\b(\d{{1,7}}(?:[.,]\d{{1,2}})?)\s*({_UNIT})|\b({_WORD_NUMBER})\s+({_UNIT})"
_QUANTITY = rf"(?:\b\d{{1,7}}(?:[.,]\d{{1,2}})?\s*{_UNIT}|\b(?:{_WORD_NUMBER})\s+{_UNIT})"
DURATION = (
    rf"(?:\d{{1,3}}\s*h\s*\d{{1,2}}(?:\s*m(?:ins?)?)?\b"
    rf"|{_QUANTITY}(?:\s*(?:and\s+)?(?:a\s+half\b|{_QUANTITY}))?)"
)
_FULL_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ANY_DAY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?"
    r"|sun(?:day)?)"
)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORDINAL = r"(?:st|nd|rd|th)"
_DAY_LIST = rf"{_ANY_DAY}(?:\s*(?:,\s*and|,|and|&)\s*{_ANY_DAY})*"
_PERIOD = r"(?:morning|afternoon|evening|night)"
_CLOCK = (
    r"(?:\d{1,2}(?::\d{2}|h\d{2})\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?|\d{1,2}\s*o['\u2019]?\s?clock"
    r"|noon|midday|midnight)"
)

# The parts of a schedule phrase, most specific first; each is one named alternative of `_part()`.
_PARTS = {
    "interval": (
        rf"(?:every|each)\s+(?:half(?:\s+an)?\s+hour|(?:\d{{1,7}}(?:[.,]\d{{1,2}})?\s*|(?:{_WORD_NUMBER})\s+)?"
        r"(?:minutes?|mins?|hours?|hrs?|hr)\b|\d{1,7}\s*[hm]\b)|hourly"
    ),
    "every_period": rf"(?:every|each)\s+{_PERIOD}",
    "days": (
        rf"(?:every|each)\s+(?:single\s+)?(?:day|weekday|work\s?day|business\s+day|weekend(?:\s+day)?|{_DAY_LIST})"
        rf"|daily|everyday|(?:on\s+)?(?:weekdays|weekends)"
        rf"|(?:on\s+)?{_FULL_DAY}s(?:\s*(?:,\s*and|,|and|&)\s*{_FULL_DAY}s)*"
    ),
    "relative": rf"in\s+(?:about\s+|around\s+|roughly\s+)?{DURATION}|{DURATION}\s+from\s+now",
    "date": (
        r"(?:the\s+)?day\s+after\s+tomorrow|today|tonight|tomorrow|tmrw|tmr|next\s+week"
        rf"|(?:on\s+)?(?:next|this|coming)\s+{_ANY_DAY}|(?:on\s+)?{_FULL_DAY}|on\s+{_ANY_DAY}"
        r"|(?:on\s+)?\d{4}-\d{1,2}-\d{1,2}"
        r"|(?:on\s+)?\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?"
        rf"|(?:on\s+)?(?:the\s+)?\d{{1,2}}{_ORDINAL}?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?"
        rf"|(?:on\s+)?{_MONTH}\s+(?:the\s+)?\d{{1,2}}{_ORDINAL}?(?:,?\s+\d{{4}})?"
        rf"|(?:on\s+)?the\s+\d{{1,2}}{_ORDINAL}"
    ),
    "time": rf"(?:(?:at|@|around|by)\s+)?{_CLOCK}|(?:at|@|around)\s+\d{{1,2}}(?:\.\d{{2}})?",
    "period": rf"(?:(?:this|in\s+the|at)\s+)?{_PERIOD}",
}
_END = r"(?![\w/-]|[:.]\d)"  # a part ends a word: "at 5" is no part of "at 5th" or "at 5:30"
SEPARATOR = r"\s*,\s*|\s+"  # a comma or spaces, one way only (no backtracking over a long phrase)
_JOIN = re.compile(rf"(?:{SEPARATOR})(?:and\s+)?", re.I)
_WORD_START = re.compile(r"(?<![^\s,])\S")


@functools.cache
def _part() -> re.Pattern[str]:
    """One part of a schedule phrase, its kind named by its group (compiled on first use: it is large)."""
    return re.compile("|".join(f"(?P<{name}>{rx}){_END}" for name, rx in _PARTS.items()), re.I)


def schedule_end(text: str, start: int = 0) -> int | None:
    """Where the schedule phrase that begins at `start` ends (a run of parts, as long as it goes), or None
    when none begins there."""
    match = _part().match(text, start)
    if match is None:
        return None
    while True:
        end = match.end()
        join = _JOIN.match(text, end)
        match = _part().match(text, join.end()) if join else None
        if match is None:
            return end


def schedule_start(text: str) -> int | None:
    """Where the schedule phrase that ends `text` begins (at the earliest word it can), or None."""
    for word in _WORD_START.finditer(text):
        if schedule_end(text, word.start()) == len(text):
            return word.start()
    return None


@dataclass
class _When:
    """What a schedule phrase said, part by part."""

    every_minutes: int | None = None
    days: list[str] | None = None  # a repeat on these weekdays ([] = every day)
    daily: bool = False  # "every evening": every day, unless the phrase names days ("on weekdays")
    minutes: int | None = None  # "in 20 minutes"
    whole_days: bool = False  # "in 2 days": a date, when a time of day goes with it
    day: date | None = None
    roll: str = "fixed"  # how `day` moves on when it is past: fixed, week or year (see `_on_day`)
    month_day: int | None = None  # "on the 24th"
    clock: tuple[int, int] | None = None
    bare: bool = False  # an hour without minutes or am/pm ("at 9"): morning or afternoon is a guess
    period: str | None = None


def schedule_input(phrase: str, now: datetime, dayfirst: bool = True) -> dict[str, Any] | None:
    """set_reminder's `at`, `in_minutes` or `repeat` for `phrase`, seen from `now` (the user's local time),
    or None when the phrase does not make one schedule. `dayfirst` reads 3/4 as the 3rd of April."""
    when = _When()
    local = now.replace(tzinfo=None)
    for match in _part().finditer(phrase):
        name = match.lastgroup or ""
        if not _read_part(when, name, match.group(name).lower(), local, dayfirst):
            return None
    return _input(when, local)


def duration_minutes(text: str) -> int:
    """Minutes in a duration: "10 minutes", "an hour and a half", "1h30"."""
    return _duration(text)[0]


def names_a_time(phrase: str) -> bool:
    """True when a schedule phrase names a time of day ("at 9", "5pm", "in the evening")."""
    return any(match.lastgroup in ("time", "period", "every_period") for match in _part().finditer(phrase))


def names_a_date(phrase: str) -> bool:
    """True when a schedule phrase names a day ("tomorrow", "on friday", "the 3rd", "in 2 days"), not only a
    time of day, a delay of minutes or hours, or a repeat."""
    for match in _part().finditer(phrase):
        if match.lastgroup == "date" or (match.lastgroup == "relative" and _duration(match.group(0))[1]):
            return True
    return False


def day_first(zone: str) -> bool:
    """Whether 3/4 is the 3rd of April for a user in `zone`: in every zone but America/… and US/…."""
    return not zone.startswith(("America/", "US/"))


def _read_part(when: _When, name: str, text: str, now: datetime, dayfirst: bool) -> bool:
    """Adds one part to `when`; False when it contradicts an earlier one or does not parse."""
    if name == "interval":
        seen = when.every_minutes is not None
        when.every_minutes = _interval_minutes(text)
        return not seen
    if name in ("every_period", "period"):
        seen = when.period is not None
        when.period = re.sub(r"^\w+\s+(?:the\s+)?", "", text) if " " in text else text
        when.daily = when.daily or name == "every_period"
        return not seen
    if name == "days":
        seen = when.days is not None
        when.days = _day_list(text)
        return not seen
    if name == "relative":
        seen = when.minutes is not None
        when.minutes, when.whole_days = _duration(text)
        return not seen
    if name == "date":
        seen = when.day is not None or when.month_day is not None
        monthday = re.fullmatch(rf"(?:on\s+)?the\s+(\d{{1,2}}){_ORDINAL}", text)
        if monthday:
            when.month_day = int(monthday.group(1))
            return not seen and 1 <= when.month_day <= 31
        parsed = _date(text, now, dayfirst)
        if parsed is None:
            return False
        when.day, when.roll = parsed
        if text == "tonight" and when.period is None:
            when.period = "night"
        return not seen
    seen = when.clock is not None
    clock = _clock(text)
    if clock is None:
        return False
    when.clock, when.bare = clock
    return not seen


def _input(when: _When, now: datetime) -> dict[str, Any] | None:
    """The tool input for a complete phrase, or None when its parts do not fit together."""
    has_time = when.clock is not None or when.period is not None
    if when.days is None and when.daily:
        when.days = []
    if when.every_minutes is not None:
        alone = when.days is None and when.minutes is None and when.day is None and when.month_day is None
        alone = alone and not has_time
        return {"repeat": {"every_minutes": when.every_minutes}} if alone else None
    if when.days is not None:
        if when.minutes is not None or when.day is not None or when.month_day is not None:
            return None
        hour, minute = _time_of_day(when, dated=True)
        return {"repeat": {"days": when.days, "time": f"{hour:02d}:{minute:02d}"}}
    if when.minutes is not None:
        if not has_time and when.day is None:
            return {"in_minutes": when.minutes}
        if not when.whole_days or when.day is not None or when.month_day is not None:
            return None
        when.day, when.roll = now.date() + timedelta(minutes=when.minutes), "fixed"
    dated = when.day is not None or when.month_day is not None
    if not dated and not has_time:
        return None
    if not dated and when.clock is not None and when.bare and when.period is None:
        hour, minute = when.clock
        choices = [hour, hour + 12] if 1 <= hour <= 11 else [hour]
        due = min(_next(now, h, minute) for h in choices)
        return {"at": due.strftime("%Y-%m-%dT%H:%M")}
    hour, minute = _time_of_day(when, dated=dated)
    due = _on_day(when, hour, minute, now) if dated else _next(now, hour, minute)
    return {"at": due.strftime("%Y-%m-%dT%H:%M")}


def _time_of_day(when: _When, dated: bool) -> tuple[int, int]:
    """The hour and minute a phrase names, guessing morning or afternoon for a bare hour the way calendar apps
    do: in the morning or afternoon when the phrase says so, else 7-11 in the morning and 1-6 after noon."""
    if when.clock is None:
        return DAYPART_TIMES[when.period] if when.period else DEFAULT_TIME
    hour, minute = when.clock
    later = when.period in ("afternoon", "evening", "night") or (when.period is None and dated and hour <= 6)
    if when.bare and 1 <= hour <= 11 and later:
        hour += 12
    return hour, minute


def _next(now: datetime, hour: int, minute: int) -> datetime:
    """The next time the clock shows hour:minute, after `now`."""
    due = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return due if due > now else due + timedelta(days=1)


def _on_day(when: _When, hour: int, minute: int, now: datetime) -> datetime:
    """The phrase's date at hour:minute. A weekday, a date without a year and a day of the month move on to
    their next occurrence when that is past; an explicit date stays as said (the tool tells the user)."""
    if when.month_day is not None:
        for ahead in range(14):
            year, month = now.year + (now.month - 1 + ahead) // 12, (now.month - 1 + ahead) % 12 + 1
            with contextlib.suppress(ValueError):
                due = datetime(year, month, when.month_day, hour, minute)
                if due > now:
                    return due
    assert when.day is not None
    due = datetime(when.day.year, when.day.month, when.day.day, hour, minute)
    if when.roll == "week" and due <= now:
        return due + timedelta(days=7)
    for years in range(1, 9) if when.roll == "year" and due <= now else ():
        with contextlib.suppress(ValueError):  # the 29th of February waits for a leap year
            return due.replace(year=due.year + years)
    return due


def _interval_minutes(text: str) -> int:
    """Minutes between repeats: "every 2 hours" -> 120, "every hour" -> 60, "hourly" -> 60."""
    if text == "hourly":
        return 60
    if "half" in text:
        return 30
    rest = re.sub(r"^(?:every|each)\s+", "", text)
    return _duration(f"1 {rest}" if re.match(_UNIT, rest) else rest)[0]


def _duration(text: str) -> tuple[int, bool]:
    """Minutes in "in 1h30", "in an hour and a half", "2 hours and 15 minutes from now"; and whether only
    days and weeks were counted."""
    text = re.sub(r"^in\s+(?:about\s+|around\s+|roughly\s+)?|\s+from\s+now$", "", text)
    compact = re.fullmatch(r"(\d{1,3})\s*h\s*(\d{1,2})(?:\s*m(?:ins?)?)?", text)
    if compact:
        return int(compact.group(1)) * 60 + int(compact.group(2)), False
    total, units = 0.0, set()
    last_unit = 0
    for digits, digit_unit, word, word_unit in re.findall(_QUANTITY_READ, text):
        unit = digit_unit or word_unit
        value = float(digits.replace(",", ".")) if digits else _NUMBER_WORDS[re.sub(r"\s+", " ", word)]
        last_unit = _UNIT_MINUTES[unit[0]]
        units.add(unit[0])
        total += value * last_unit
    if re.search(r"a\s+half$", text):
        total += last_unit / 2
    return min(round(total), MAX_MINUTES), bool(units) and units <= {"d", "w"}


def _day_list(text: str) -> list[str]:
    """The weekdays of a repeat, in week order ([] = every day)."""
    if re.search(r"\b(?:every\s+(?:single\s+)?day|daily|everyday)\b", text):
        return []
    if re.search(r"week\s?day|work\s?day|business", text):
        return list(WEEKDAYS)
    if "weekend" in text:
        return list(WEEKEND)
    named = {word[:3] for word in re.findall(_ANY_DAY, text)}
    return [day for day in DAYS if day in named]


def _date(text: str, now: datetime, dayfirst: bool) -> tuple[date, str] | None:
    """The date a date part names and how it moves on when past (see `_on_day`); None when it is no date."""
    text = re.sub(r"^on\s+", "", text)
    today = now.date()
    fixed = {"today": 0, "tonight": 0, "tomorrow": 1, "tmrw": 1, "tmr": 1}
    if text in fixed:
        return today + timedelta(days=fixed[text]), "fixed"
    if text.endswith("day after tomorrow"):
        return today + timedelta(days=2), "fixed"
    if re.fullmatch(r"next\s+week", text):  # its Monday
        return today + timedelta(days=7 - today.weekday()), "fixed"
    weekday = re.fullmatch(rf"(?:(next)\s+|(?:this|coming)\s+)?({_ANY_DAY})", text)
    if weekday:
        ahead = (DAYS.index(weekday.group(2)[:3]) - today.weekday()) % 7
        if ahead == 0 and weekday.group(1):  # "next friday" said on a Friday: a week on
            ahead = 7
        return today + timedelta(days=ahead), "week"
    return _calendar_date(text, today, dayfirst)


def _calendar_date(text: str, today: date, dayfirst: bool) -> tuple[date, str] | None:
    """A date with a month ("dec 24", "24/12", "2026-12-24"), read by python-dateutil."""
    cleaned = re.sub(r"^the\s+", "", text)
    if re.fullmatch(r"\d{1,2}\.\d{1,2}(?:\.\d{2,4})?", cleaned):
        cleaned = cleaned.replace(".", "/")
    iso = re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", cleaned) is not None  # always year, month, day
    first = datetime(today.year, today.month, 1)
    try:
        parsed: datetime = parser.parse(cleaned, default=first, dayfirst=dayfirst and not iso, yearfirst=iso)
    except (ValueError, OverflowError):
        return None
    has_year = bool(re.search(r"\d{4}|\d{1,2}[/.]\d{1,2}[/.]\d{2}", text))
    return parsed.date(), "fixed" if has_year else "year"


def _clock(text: str) -> tuple[tuple[int, int], bool] | None:
    """((hour, minute), bare) for a clock-time part; bare is an hour without minutes or am/pm ("at 9")."""
    value = re.sub(r"^(?:at|@|around|by)\s+", "", text)
    named = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}
    if value in named:
        return named[value], False
    oclock = re.fullmatch(r"(\d{1,2})\s*o['\u2019]?\s?clock", value)
    if oclock or value.isdigit():
        hour = int(oclock.group(1) if oclock else value)
        return ((hour, 0), 1 <= hour <= 11) if hour <= 23 else None

    value = re.sub(r"^(\d{1,2})\.(\d{2})$", r"\1:\2", value)
    try:
        parsed: datetime = parser.parse(value, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return None
    return (parsed.hour, parsed.minute), False
