"""Tasks named by their words, not their numbers: "done buy milk", "delete the milk task", "mark milk as
done".

The rules do not know the list, so they read it first, as a real model would: `named_task_intent` says what
the words ask for, `lookup` is the list_tasks call that reads the list, and `resolve` reads that call's result
and either acts on the one task the words name (the usual tool call, so a deletion still asks for the tap) or
answers in words: the tasks that match and which command to send, or that none matches.

A task matches when every word of the name is a word of its title ("milk" matches "buy milk" and "buy oat
milk"; a title that is exactly the name wins over titles that only contain it). Only clear command forms
count, so "remove the background" or "check the weather" stay conversation: a verb that is mostly about tasks
("done", "delete", "tick off", "mark … as done"), or another verb with the task or the list named ("get rid
of the plants task", "remove X from my list").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from stepwise.offline.decorations import undecorated
from stepwise.offline.small_talk import small_talk
from stepwise.offline.task_phrases import MAX_LENGTH, QUOTES, clean

if TYPE_CHECKING:
    from stepwise.offline.calls import ToolCall

Action = Literal["complete", "delete"]


@dataclass(frozen=True)
class NamedTask:
    """What the words ask: `action` on the task(s) named `name`."""

    action: Action
    name: str


_NOUN = r"(?:task|item|todo|to-do|one|entry|thing)"
_LIST = (
    r"(?:(?:my|the|our)\s+(?:(?:shopping|grocery|task|todo|to-?do)\s+)?"
    r"(?:list|tasks|todos|to-?dos|to-?do list|todo list|task list))"
)
_OFF_LIST = rf"(?:\s+(?:off|from|out of)\s+{_LIST})"
_DONE_WORD = r"(?:done|complete|completed|finished|checked off|ticked off|crossed off)"
_COMPLETE_VERB = (
    r"(?:done(?:\s+with)?|complete|finished|tick off|check off|cross off|cross out|strike off|strike out"
    r"|scratch off|knock off|mark off)"
)
_TASK_VERB = r"(?:delete|erase)"  # about tasks even without the word "task"
_OTHER_DELETE_VERB = r"(?:remove|drop|get rid of|trash|bin|scrap|ditch|discard|forget|forget about)"

_COMPLETE = [
    re.compile(rf"^{_COMPLETE_VERB}\s+(?P<name>.+?)(?:\s+off)?{_OFF_LIST}?(?:\s+as\s+{_DONE_WORD})?$", re.I),
    re.compile(rf"^(?:mark|set)\s+(?P<name>.+?)\s+(?:as\s+|to\s+)?(?:{_DONE_WORD}|off)$", re.I),
    re.compile(rf"^(?P<name>.+?)(?:\s+is|'s|\s+has\s+been|\s+can\s+be\s+marked)?\s+{_DONE_WORD}$", re.I),
]
_DELETE = re.compile(
    rf"^(?P<verb>{_TASK_VERB}|{_OTHER_DELETE_VERB})\s+(?P<name>.+?)(?P<list>{_OFF_LIST})?$", re.I
)
_HAS_NOUN = re.compile(rf"(?:^|\s){_NOUN}(?:s)?(?:\s|$)", re.I)
# Words that name no task: pronouns, the whole list, numbers (the number rules take those).
_NOT_A_NAME = re.compile(
    r"^(?:it|that|this|them|these|those|me|you|him|her|us|everything|something|anything|all|both|i|i'?m"
    r"|we|we'?re|you'?re|he'?s|she'?s|they'?re|i am|we are|it'?s|that'?s|for (?:today|now|the day|the week)"
    r"|here|now|today|already|almost|nearly|finally|just|not|not yet|half|well|so|as|to|off|up|#?\d+)$"
    r"|^(?:all|every|each|any|what|who|how|which|why|when|where|is|are|was|were|did|do|does|has|have|had"
    r"|i|i'?m|i'?ve|we|we'?re|you|you'?re|he|she|they|it'?s|that'?s)(?![\w'])"
    r"|\b(?:list|tasks|todos|to-?dos)$|^\W*$",
    re.I,
)
# Not part of a name: articles and the words that say it is a task.
_FILLER = frozenset({"the", "a", "an", "my", "our", "task", "tasks", "item", "items", "todo", "to-do", "one"})
_ARTICLE = re.compile(rf"^(?:(?:the|my|our|a|an)\s+)?(?:{_NOUN}\s+)?(?:called\s+|named\s+)?", re.I)
_TRAILING_NOUN = re.compile(rf"\s+{_NOUN}s?$", re.I)
_LINE = re.compile(r"^#(?P<id>\d+) \[(?P<mark>[ x])\] (?P<title>.+?)(?: \(due [^)]*\))?$")


def named_task_intent(text: str) -> NamedTask | None:
    """What a command that names a task by its words asks for ("done buy milk"), or None when `text` is no
    such command (a number, a pronoun or the whole list is not a name)."""
    if len(text) > MAX_LENGTH or small_talk(text) is not None:  # "well done" is praise
        return None
    cleaned = clean(undecorated(text))
    for pattern in _COMPLETE:
        found = pattern.match(cleaned)
        if found:
            return _named("complete", found.group("name"))
    found = _DELETE.match(cleaned)
    if found is None:
        return None
    about_tasks = re.fullmatch(_TASK_VERB, found.group("verb"), re.I) is not None
    if not (about_tasks or found.group("list") or _HAS_NOUN.search(found.group("name"))):
        return None
    return _named("delete", found.group("name"))


def _named(action: Action, raw: str) -> NamedTask | None:
    name = _TRAILING_NOUN.sub("", _ARTICLE.sub("", raw.strip().strip(QUOTES))).strip()
    words = _words(name)
    if (
        not name or _NOT_A_NAME.search(name) or all(word.isdigit() for word in words)
    ):  # numbers: the number rules
        return None
    return NamedTask(action, name)


def lookup(named: NamedTask) -> list[ToolCall]:
    """The call that reads the tasks the words may name: the open ones to complete, all to delete."""
    return [("list_tasks", {"status": "pending" if named.action == "complete" else "all"})]


def resolve(named: NamedTask, listed: str) -> ToolCall | str:
    """The call for the one task of `listed` (list_tasks' result) that `named` names, or the answer in words
    when several match (which one?) or none does."""
    lines = [found for line in listed.splitlines() if (found := _LINE.match(line.strip()))]
    wanted = _words(named.name)
    matching = [line for line in lines if wanted <= _words(line.group("title"))]
    exact = [line for line in matching if _words(line.group("title")) == wanted]
    chosen = exact if len(exact) == 1 else matching
    tool, command = ("complete_task", "done") if named.action == "complete" else ("delete_task", "delete")
    if len(chosen) == 1:
        return (tool, {"task_id": int(chosen[0].group("id"))})
    kind = "open task" if named.action == "complete" else "task"
    if not chosen:
        return f"No {kind} on your list matches “{named.name}”. Send *list* to see your tasks."
    shown = "\n".join(line.group(0) for line in chosen)
    example = f"*{command} {chosen[0].group('id')}*"
    return (
        f"Which one? {len(chosen)} {kind}s match “{named.name}”:\n{shown}\n"
        f"Send *{command}* with its number, like {example}."
    )


def _words(text: str) -> frozenset[str]:
    """The words of `text` that tell tasks apart, lowercase, without a plural "s"."""
    words = re.findall(r"[\w']+", text.lower())
    return frozenset(_stem(word) for word in words if word not in _FILLER)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
