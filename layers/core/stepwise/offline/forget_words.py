"""A memory named by its words: "forget the birthday", "forget that I take my coffee black".

`forget` takes a memory's id, which the user rarely knows, and forgetting is for good, so the rules do not
guess: `forget_intent` recalls the memories the words are about (the recall tool, read-only), and `pointer`
reads its result and answers with the memory it would forget and the command that does it (`forget fact-…`,
which then asks for the tap). "forget it", "forget that" stay small talk; "forget 3" and "forget the milk
task" are about tasks (`stepwise.offline.task_phrases`, `stepwise.offline.named_tasks`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stepwise.offline.decorations import undecorated
from stepwise.offline.task_phrases import MAX_LENGTH, clean

if TYPE_CHECKING:
    from stepwise.offline.calls import ToolCall

_FORGET = re.compile(
    r"^forget\s+(?:about\s+)?(?:(?:that|the fact that|what i said about)\s+)?(?P<what>.+)$", re.I
)
_NOT_A_MEMORY = re.compile(
    r"^(?:it|that|this|them|me|you|him|her|us|everything|anything|all|all of it|all that|about it|it all"
    r"|what i said|i said that|i asked)$",
    re.I,
)
_LEADING = re.compile(r"^(?:the|my|a|an)\s+", re.I)
_RESULT_LINE = re.compile(r"^\[(?P<id>(?:fact|summary)-[A-Za-z0-9_-]+)\] ?(?P<text>.*)$")
_FILLER = frozenset({"the", "a", "an", "my", "i", "me", "is", "was", "that", "about", "of", "to", "and"})
MAX_SHOWN = 5
SHOWN_CHARS = 200


def forget_words(text: str) -> str | None:
    """What "forget …" is about when it names a memory by its words, or None."""
    if len(text) > MAX_LENGTH:
        return None
    found = _FORGET.match(clean(undecorated(text)))
    if found is None:
        return None
    what = _LEADING.sub("", found.group("what").strip()).strip()
    if not what or _NOT_A_MEMORY.match(what) or re.fullmatch(r"#?\d+", what):
        return None
    return what


def forget_intent(text: str) -> list[ToolCall] | None:
    """The recall call that finds the memories "forget <words>" is about, or None."""
    what = forget_words(text)
    return [("recall", {"query": what})] if what else None


def pointer(what: str, recalled: str) -> str:
    """The answer to "forget <what>" from recall's result: the memory it would forget and how to forget it,
    or which ones might be meant; never a deletion (that is `forget <id>`, with the tap)."""
    memories = _memories(recalled)
    if not memories:
        return "I have no memories to forget yet."
    wanted = _words(what)
    mentioning = [(key, text) for key, text in memories if wanted & _words(text)]
    # A fact, which the user asked to remember, before a chat's summary that repeats it
    mentioning = [(key, text) for key, text in mentioning if key.startswith("fact-")] or mentioning
    if len(mentioning) == 1:
        key, text = mentioning[0]
        return (
            f"This is the memory I would forget: “{_short(text)}” ({key}). To forget it, send *forget {key}* "
            "(you approve it with a tap); nothing is forgotten until then."
        )
    if mentioning:
        shown = "\n".join(f"[{key}] {_short(text)}" for key, text in mentioning[:MAX_SHOWN])
        return (
            f"These memories mention “{what}”:\n{shown}\n"
            f"Send *forget* with the id of the one to forget, like *forget {mentioning[0][0]}*."
        )
    key, text = memories[0]
    return (
        f"None of my memories mentions “{what}”. The nearest is “{_short(text)}” ({key}); to forget it, send "
        f"*forget {key}*."
    )


def _memories(recalled: str) -> list[tuple[str, str]]:
    """(id, text) of each memory in recall's result, nearest first; a memory's text may span lines."""
    memories: list[tuple[str, str]] = []
    for line in recalled.splitlines():
        found = _RESULT_LINE.match(line)
        if found:
            memories.append((found.group("id"), found.group("text")))
        elif memories:
            memories[-1] = (memories[-1][0], f"{memories[-1][1]} {line.strip()}".strip())
    return memories


def _words(text: str) -> frozenset[str]:
    words = re.findall(r"[\w']+", text.lower())
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _FILLER)


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= SHOWN_CHARS else one_line[:SHOWN_CHARS] + "…"
