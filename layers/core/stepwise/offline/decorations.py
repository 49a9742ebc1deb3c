"""Emoji around a command, as chat apps invite: "✅ done with 2!", "pls add milk 🥛", "🗑️ delete 4".

`undecorated` drops them from the start and the end of a message before the rules read it; emoji inside the
words stay ("add milk 🥛 and bread" adds "milk 🥛 and bread").
"""

from __future__ import annotations

import unicodedata

# Emoji are symbols (So); skin tones are modifiers (Sk); these join or restyle them ("✔️" is ✔ and U+FE0F).
_JOINERS = frozenset("\u200d\ufe0e\ufe0f\u20e3")


def _decoration(char: str) -> bool:
    return char.isspace() or char in _JOINERS or unicodedata.category(char) in ("So", "Sk")


def undecorated(text: str) -> str:
    """`text` without the emoji and spaces at its start and end; "" when it holds nothing else."""
    start, end = 0, len(text)
    while start < end and _decoration(text[start]):
        start += 1
    while end > start and _decoration(text[end - 1]):
        end -= 1
    return text[start:end]
