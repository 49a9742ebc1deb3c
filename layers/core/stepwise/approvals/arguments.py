"""Every argument of a call, shown in an approval request within Telegram's 4,096 characters.

Nothing is dropped: each argument is one line, `name: value`, the value as JSON (a text in quotes, its line
breaks as `\\n`, so no value can pass for another argument's line). Short values (recipients, ids, names,
amounts) come first, long free text after them. When the whole does not fit its room, the longest values are
shortened, one by one, each saying how much was cut; the message itself is never cut. A call whose arguments
cannot all be shown even shortened is not asked about (`TooLongToShow`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

MAX_MESSAGE = 4096  # Telegram's limit on a message's text, in UTF-16 code units after entity parsing
# What the request message holds besides its calls: the title, who asks (a name of at most 60 characters),
# the line about silence, a bullet per call, and the decision appended when the message is edited.
MESSAGE_OVERHEAD = 400
SHORT_VALUE = 80  # a value this long or shorter is a decisive one, shown before longer free text
MIN_SHOWN = 12  # characters a shortened value keeps at least, besides its note
_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class TooLongToShowError(ValueError):
    """The arguments cannot all be shown in the room there is, even shortened."""


def call_room(calls: int) -> int:
    """The room (in UTF-16 code units) one call's description may take in a request of `calls` calls."""
    return (MAX_MESSAGE - MESSAGE_OVERHEAD) // max(1, calls) - 3  # each call's bullet and line break


def tg_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def cut_note(cut: int, whole: int) -> str:
    """What a shortened value says of itself."""
    return f"… [{cut} of {whole} characters not shown]"


def shorten(text: str, limit: int) -> str:
    """`text` if it fits `limit`, else its beginning and a note of how much was cut, within `limit` when it
    can be (a shortened value keeps at least `MIN_SHOWN` characters; it is never longer than `text`)."""
    if tg_len(text) <= limit:
        return text

    def cut(keep: int) -> str:
        return text[:keep] + cut_note(len(text) - keep, len(text))

    low, high = 0, len(text) - 1  # the longest beginning whose shortened form fits
    while low < high:
        middle = (low + high + 1) // 2
        if tg_len(cut(middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    shortened = cut(max(low, min(MIN_SHOWN, len(text) - 1)))
    return shortened if tg_len(shortened) < tg_len(text) else text


def smallest(text: str) -> int:
    """The least room `text` can be shortened into."""
    return tg_len(shorten(text, 0))


def fit(texts: Sequence[str], room: int) -> list[str]:
    """The texts, the longest shortened first and equally, so that together they take at most `room`.
    Raises `TooLongToShowError` when even each shortened to the least cannot fit."""
    if sum(smallest(text) for text in texts) > room:
        raise TooLongToShowError(f"{len(texts)} values cannot be shown in {room} characters")
    limits = {index: tg_len(text) for index, text in enumerate(texts)}
    spare = room
    # Water-filling: texts that fit an equal share of what is left stay whole; the others share the rest.
    waiting = sorted(limits, key=lambda index: limits[index])
    while waiting:
        share = spare // len(waiting)
        index = waiting[0]
        if limits[index] <= share:
            spare -= limits[index]
            waiting.pop(0)
            continue
        for other in waiting:
            limits[other] = share
        break
    shown = [shorten(text, limits[index]) for index, text in enumerate(texts)]
    # A value cannot be shortened below its least size: when a share was smaller, the others give way.
    while (over := sum(tg_len(text) for text in shown) - room) > 0:
        can = [index for index in range(len(shown)) if tg_len(shown[index]) > smallest(texts[index])]
        longest = max(can, key=lambda index: tg_len(shown[index]))  # some can: the least sizes fit
        shown[longest] = shorten(texts[longest], max(0, tg_len(shown[longest]) - over))
    return shown


def argument_lines(arguments: Mapping[str, Any], room: int, indent: str = "") -> str:
    """Every argument on a line of its own, `name: value`, short values first, within `room` characters
    (line breaks included); "no arguments" for none. Raises `TooLongToShowError`."""
    if not arguments:
        return "no arguments"
    named = [(_name(key), json.dumps(value, ensure_ascii=False)) for key, value in arguments.items()]
    named.sort(key=lambda pair: tg_len(pair[1]) > SHORT_VALUE)  # stable: the given order within each group
    fixed = sum(tg_len(f"{indent}{name}: ") for name, _ in named) + len(named) - 1
    values = fit([value for _, value in named], room - fixed)
    return "\n".join(f"{indent}{name}: {value}" for (name, _), value in zip(named, values, strict=True))


def _name(key: str) -> str:
    """A plain name as it is; any other (spaces, line breaks, a colon) as JSON: one name on one line."""
    return key if _SIMPLE_NAME.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def worded(template: str, values: Sequence[str], room: int) -> str:
    """A sentence of `str.format` `template` (fixed words, a `{}` per value) with the values fitted in: what
    the words leave of `room` goes to the values (see `fit`). Raises `TooLongToShowError`."""
    fixed = tg_len(template.format(*[""] * len(values)))
    return template.format(*fit(values, room - fixed))
