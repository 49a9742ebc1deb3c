"""Every argument of a call, shown in an approval request within Telegram's 4,096 characters.

Nothing is dropped: each argument is one line, `name: value`, the value as JSON (a text in quotes). Whatever
could break a line or reorder it is written visibly (`escaped`): line breaks as `\\n`, the line and paragraph
separators U+2028 and U+2029, NEL U+0085 and every other control character, and the bidi controls
(U+202A to U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C) as `\\u2028` and so on; so no value can pass for
another argument's line, and none can make the text after it read backwards. Short values (recipients, ids,
names, amounts) come first, long free text after them.

Only one value may be shortened: the single longest free-text value (`free_text`: a text of several words
whose name is not an id's, an address's or a recipient's), saying how much was cut. Every other value (a list
of recipients, an id, a token, a number) is shown whole. A call whose arguments do not fit their room even so
is not asked about (`TooLongToShowError`): it is refused, never shown in part.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

MAX_MESSAGE = 4096  # Telegram's limit on a message's text, in UTF-16 code units after entity parsing
# What the request message holds besides its calls: the title, who asks (a name of at most 60 characters),
# the line about silence, a bullet per call, and the decision appended when the message is edited.
MESSAGE_OVERHEAD = 400
SHORT_VALUE = 80  # a value this long or shorter is a decisive one, shown before longer free text
MIN_SHOWN = 12  # characters a shortened value keeps at least, besides its note
_SIMPLE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Controls (C0, DEL, C1 with NEL U+0085), the line and paragraph separators, and the bidi controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# The last word of an argument's name that says its value is not free text: an id, an address, a recipient.
# fmt: off
_NOT_FREE_TEXT = frozenset({
    "id", "ids", "uuid", "key", "keys", "token", "to", "cc", "bcc", "from", "sender", "recipient",
    "recipients", "address", "addresses", "email", "emails", "phone", "phones", "number", "numbers",
    "attendee", "attendees", "participant", "participants", "member", "members", "user", "users",
    "account", "accounts", "url", "urls", "uri", "path",
})
# fmt: on
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


class TooLongToShowError(ValueError):
    """The arguments cannot all be shown in the room there is, with only the longest free text shortened."""


class Value(NamedTuple):
    """A value as shown whole, and (for the free text that may be shortened) its text before escaping."""

    shown: str
    text: str | None = None
    render: Callable[[str], str] | None = None  # how a beginning of `text` is shown


def call_room(calls: int) -> int:
    """The room (in UTF-16 code units) one call's description may take in a request of `calls` calls."""
    return (MAX_MESSAGE - MESSAGE_OVERHEAD) // max(1, calls) - 3  # each call's bullet and line break


def tg_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def escaped(text: str) -> str:
    """`text` with every character that could break its line or reorder the text written visibly: `\\n`,
    `\\t`, `\\r`, and the others as `\\uXXXX` (`\\u2028`, `\\u0085`, `\\u202e`)."""
    return _UNSAFE.sub(lambda match: _NAMED.get(match[0], f"\\u{ord(match[0]):04x}"), text)


def as_json(value: Any) -> str:
    """`value` as JSON on one line, escaped (the escapes are JSON's own: the text stays valid JSON)."""
    return escaped(json.dumps(value, ensure_ascii=False))


def cut_note(cut: int, whole: int) -> str:
    """What a shortened value says of itself."""
    return f"… [{cut} of {whole} characters not shown]"


def shorten(text: str, limit: int, render: Callable[[str], str] = escaped) -> str:
    """`text` shown (`render`) if it fits `limit`, else its beginning shown and a note of how much of `text`
    was cut, within `limit` when it can be (a shortened value keeps at least `MIN_SHOWN` characters; it is
    never longer than the whole)."""
    whole = render(text)
    if tg_len(whole) <= limit:
        return whole

    def cut(keep: int) -> str:
        return render(text[:keep]) + cut_note(len(text) - keep, len(text))

    low, high = 0, len(text) - 1  # the longest beginning whose shortened form fits
    while low < high:
        middle = (low + high + 1) // 2
        if tg_len(cut(middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    shortened = cut(max(low, min(MIN_SHOWN, len(text) - 1)))
    return shortened if tg_len(shortened) < tg_len(whole) else whole


def fit(values: Sequence[Value], room: int) -> list[str]:
    """The values as shown, within `room` together: whole when they fit, else the single longest one that
    may be shortened (has a `text`) cut to what the others leave. Raises `TooLongToShowError` when they
    cannot fit so."""
    whole = [value.shown for value in values]
    total = sum(tg_len(shown) for shown in whole)
    if total <= room:
        return whole
    free = [index for index, value in enumerate(values) if value.text is not None]
    if not free:
        raise TooLongToShowError(f"{len(values)} values take {total} of {room} characters; none may be cut")
    longest = max(free, key=lambda index: tg_len(whole[index]))
    value = values[longest]
    assert value.text is not None
    render = value.render or escaped
    others = total - tg_len(whole[longest])
    shortened = shorten(value.text, room - others, render)
    if others + tg_len(shortened) > room:
        raise TooLongToShowError(
            f"the other values take {others} of {room} characters, even with the longest text shortened"
        )
    whole[longest] = shortened
    return whole


def free_text(name: str, value: Any) -> bool:
    """Whether an argument is free text, the only kind that may be shortened: a text of several words whose
    name does not end in a word of an id, an address or a recipient ("to", "user_id", "toRecipients")."""
    if not isinstance(value, str) or len(value.split(maxsplit=1)) < 2:
        return False
    words = _NAME_WORDS.findall(name)
    return not words or words[-1].lower() not in _NOT_FREE_TEXT


def argument_lines(arguments: Mapping[str, Any], room: int, indent: str = "") -> str:
    """Every argument on a line of its own, `name: value`, short values first, within `room` characters
    (line breaks included); "no arguments" for none. Raises `TooLongToShowError`."""
    if not arguments:
        return "no arguments"
    named = [
        (
            _name(key),
            Value(as_json(value), value, as_json) if free_text(key, value) else Value(as_json(value)),
        )
        for key, value in arguments.items()
    ]
    named.sort(key=lambda pair: tg_len(pair[1].shown) > SHORT_VALUE)  # stable: the given order in each group
    fixed = sum(tg_len(f"{indent}{name}: ") for name, _ in named) + len(named) - 1
    values = fit([value for _, value in named], room - fixed)
    return "\n".join(f"{indent}{name}: {value}" for (name, _), value in zip(named, values, strict=True))


def _name(key: str) -> str:
    """A plain name as it is; any other (spaces, line breaks, a colon) as JSON: one name on one line."""
    return key if _SIMPLE_NAME.fullmatch(key) else as_json(key)


def worded(template: str, values: Sequence[str], room: int, *, whole: Sequence[int] = ()) -> str:
    """A sentence of `str.format` `template` (fixed words, a `{}` per value) with the values escaped and
    fitted in: what the words leave of `room` goes to the values, of which only the longest may be shortened
    (never one whose index is in `whole`, such as an id; see `fit`). Raises `TooLongToShowError`."""
    fixed = tg_len(template.format(*[""] * len(values)))
    pieces = [
        Value(escaped(value)) if index in whole else Value(escaped(value), value)
        for index, value in enumerate(values)
    ]
    return template.format(*fit(pieces, room - fixed))
