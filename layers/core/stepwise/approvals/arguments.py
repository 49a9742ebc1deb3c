"""Every argument of a call, shown in an approval request within Telegram's 4,096 characters.

Nothing is dropped and nothing can pose as something else: each argument is one line, `name: value`, the value
as JSON (a text in quotes, its line breaks as `\\n`), and the characters that would break a line or reorder
what is shown (U+2028, U+2029, U+0085 and the other C1 controls, the bidi controls U+202A to U+202E and
U+2066 to U+2069, the marks U+200E, U+200F and U+061C) written as `\\uXXXX`, so no value can pass for another
argument's line. Short values (recipients, ids, names, amounts) come first, long free text after them. Only
the one longest free-text value may be shortened, saying how much was cut; every other value is shown whole
(a list of recipients is never cut). A call whose arguments do not fit even so is not asked about
(`TooLongToShowError`): it is refused, never shown in part.
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
# Line and paragraph separators, C1 controls (U+0085 among them), bidi embeddings, overrides, isolates, marks.
_DISGUISES = re.compile("[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


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


def visible(text: str) -> str:
    """`text` with every character that could break its line or reorder what is shown written as `\\uXXXX`
    (a valid escape inside a JSON string too)."""
    return _DISGUISES.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def fit(texts: Sequence[str], room: int, *, free_text: Sequence[bool] | None = None) -> list[str]:
    """The texts, together within `room`: all whole when they fit, else the one longest free-text value
    (`free_text` says which are; by default all) shortened and the others whole. Raises
    `TooLongToShowError` when even that cannot fit."""
    total = sum(tg_len(text) for text in texts)
    if total <= room:
        return list(texts)
    candidates = [index for index in range(len(texts)) if free_text is None or free_text[index]]
    if not candidates:
        raise TooLongToShowError(f"{len(texts)} values need {total} characters, {room} are left")
    longest = max(candidates, key=lambda index: tg_len(texts[index]))
    limit = room - (total - tg_len(texts[longest]))
    if limit < smallest(texts[longest]):
        raise TooLongToShowError(
            f"{len(texts)} values need {total} characters, {room} are left; only the longest text may be cut"
        )
    return [shorten(text, limit) if index == longest else text for index, text in enumerate(texts)]


def argument_lines(arguments: Mapping[str, Any], room: int, indent: str = "") -> str:
    """Every argument on a line of its own, `name: value`, short values first, within `room` characters
    (line breaks included); "no arguments" for none. Raises `TooLongToShowError`."""
    if not arguments:
        return "no arguments"
    named = [(_name(key), visible(json.dumps(value, ensure_ascii=False))) for key, value in arguments.items()]
    named.sort(key=lambda pair: tg_len(pair[1]) > SHORT_VALUE)  # stable: the given order within each group
    fixed = sum(tg_len(f"{indent}{name}: ") for name, _ in named) + len(named) - 1
    # Free text: a JSON string longer than a decisive value (never a list, a number or a short name).
    free_text = [value.startswith('"') and tg_len(value) > SHORT_VALUE for _, value in named]
    values = fit([value for _, value in named], room - fixed, free_text=free_text)
    return "\n".join(f"{indent}{name}: {value}" for (name, _), value in zip(named, values, strict=True))


def _name(key: str) -> str:
    """A plain name as it is; any other (spaces, line breaks, a colon) as JSON: one name on one line."""
    return key if _SIMPLE_NAME.fullmatch(key) else visible(json.dumps(key, ensure_ascii=False))


def worded(template: str, values: Sequence[str], room: int) -> str:
    """A sentence of `str.format` `template` (fixed words, a `{}` per value) with the values fitted in: what
    the words leave of `room` goes to the values (see `fit`: only the longest may be shortened), each value
    made `visible`. Raises `TooLongToShowError`."""
    fixed = tg_len(template.format(*[""] * len(values)))
    return template.format(*fit([visible(value) for value in values], room - fixed))
