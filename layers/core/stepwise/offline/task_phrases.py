"""Everyday phrasings of the task commands, for the offline rules model.

"please add milk to my list", "could you put eggs on the list", "note to self: call the bank", "I need to buy
milk", "don't let me forget to call mom", "tick off 2", "mark the third one as done", "I finished #3",
"what do I have to do", "anything pending?"... `everyday_task_intent` returns the tool calls for them, or
None; `stepwise.offline.task_commands` reads the short command forms ("add milk", "done 3").

Task references: "3", "#3", "task 3", "number 3", "no. 3", "item 3", "the 3rd", "the third one". An ordinal
names the task *number* the list shows (#3), not the third line of the list: numbers never change, positions
do, and every reply quotes the task's title (a deletion also asks first), so the user sees which one it was.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stepwise.offline.calls import MAX_IDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.offline.calls import ToolCall

MAX_LENGTH = 1000  # longer messages are not commands
ORDINALS = {
    word: n
    for n, word in enumerate(
        (
            "first",
            "second",
            "third",
            "fourth",
            "fifth",
            "sixth",
            "seventh",
            "eighth",
            "ninth",
            "tenth",
            "eleventh",
            "twelfth",
            "thirteenth",
            "fourteenth",
            "fifteenth",
            "sixteenth",
            "seventeenth",
            "eighteenth",
            "nineteenth",
            "twentieth",
        ),
        start=1,
    )
}
_ORDINAL = rf"(?:{'|'.join(ORDINALS)}|\d{{1,3}}(?:st|nd|rd|th))"
CARDINALS = {
    word: n
    for n, word in enumerate(
        (
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ),
        start=1,
    )
}
_NOUN = r"(?:task|item|todo|to-do|one|thing|entry)"
_CARDINAL = rf"(?:{'|'.join(CARDINALS)})"
_MARKED = (
    rf"(?:(?:the\s+)?{_NOUN}\s+)?(?:(?:number|no\.?|nr\.?|#)\s*)\d{{1,100}}"
    rf"|(?:the\s+)?(?:task|item|todo|number)\s+{_CARDINAL}\b"
)
_REF = (
    rf"(?:{_MARKED}|(?:the\s+)?{_NOUN}\s+#?\d{{1,100}}|#?\d{{1,100}}"
    rf"|(?:the\s+)?{_ORDINAL}(?:\s+(?:{_NOUN}|on\s+(?:my|the)\s+list))?)"
)
_REFS = (
    rf"(?:(?:tasks|items|numbers|todos)\s+)?(?:{_REF}(?:\s*(?:,\s*and|,|and|&)\s*{_REF}){{0,{MAX_IDS - 1}}})"
)
_LIST_WORDS = r"(?:list|tasks|todos|to-?dos|to do list|to-?do list|todo list|task list|checklist|agenda)"
_LIST = rf"(?:(?:my|the|our)\s+(?:(?:shopping|grocery|groceries|task|todo|to-?do|to do)\s+)?{_LIST_WORDS})"
# "… on my shopping list", at the end of a text
ENDS_WITH_LIST = re.compile(rf"\s{_LIST}$", re.I)
_POLITE_START = re.compile(
    r"^(?:(?:hey|hi|ok|okay|so|oh|and|also|alright|right|um|yes|yeah|stepwise)\b[\s,!]*)*"
    r"(?:(?:please|pls|kindly|can you|could you|would you|will you|can u|would you mind|just|quickly"
    r"|go ahead and|i'?d like you to|i want you to|i would like you to|help me|let'?s)\s+)*",
    re.I,
)
_POLITE_END = re.compile(
    r"(?:[\s,]+(?:please|pls|thanks|thank you|thx|for me|now|right now|too|as well))+$", re.I
)
QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_QUOTED = re.compile(rf"^[{QUOTES}](?P<inner>.+)[{QUOTES}]$")
# "I have to go", "I need to say…": conversation, not tasks.
_NOT_TASKS = re.compile(
    r"^(?:say|admit|confess|agree|know|understand|ask you|tell you|think|wonder|be honest|go|go now|run|leave"
    r"|sleep|rest|think about it|check|see|do it|do this|do that|talk|talk to you|vent|rant)\b(?:\s+\w+)?$"
    r"|^(?:say|admit|confess|know|understand|wonder|ask you|tell you)\b"
    r"|^(?:me|it|this|that|them|him|her|us|you|everything|something|anything|#?\d+)$",
    re.I,
)
_STATUS = {
    "pending": "pending",
    "open": "pending",
    "outstanding": "pending",
    "remaining": "pending",
    "unfinished": "pending",
    "incomplete": "pending",
    "undone": "pending",
    "left": "pending",
    "current": "pending",
    "active": "pending",
    "done": "completed",
    "completed": "completed",
    "finished": "completed",
    "closed": "completed",
    "checked off": "completed",
    "ticked off": "completed",
}


_NUMBERS = re.compile(
    rf"(\d+)|\b({'|'.join(ORDINALS)})\b|\b(?:task|item|todo|number)\s+({'|'.join(CARDINALS)})\b", re.I
)


def refs(text: str) -> list[int]:
    """The task numbers named in `text`, in order: digits, or ordinal words."""
    numbers = []
    for digits, ordinal, cardinal in _NUMBERS.findall(text):
        numbers.append(
            int(digits) if digits else ORDINALS.get(ordinal.lower()) or CARDINALS[cardinal.lower()]
        )
    return numbers


def clean(text: str) -> str:
    """`text` on one line, without the politeness around a command."""
    cleaned = re.sub(r"\s+", " ", text.strip()).rstrip("?!. ")
    cleaned = _POLITE_END.sub("", _POLITE_START.sub("", cleaned))
    return cleaned.rstrip("?!.,: ")


def is_task_title(title: str) -> bool:
    """False for the words after "I have to" that are conversation, not a task ("go", "say …", "it")."""
    return _NOT_TASKS.match(title) is None


def title_of(raw: str) -> str:
    """A task title from the words of a command: without quotes, a trailing period, or a leading article
    that the title does not need ("a" in "add a call to the bank" stays)."""
    title = raw.strip().rstrip(".!,;")
    quoted = _QUOTED.match(title)
    if quoted:
        title = quoted.group("inner").strip()
    return _CONTAINER.sub("", title)


_CONTAINER = re.compile(
    r"^(?:a|an)\s+(?:new\s+)?(?:task|todo|to-do|reminder|note|item)\s+(?:to|for|about)\s+", re.I
)


def _add_items(match: re.Match[str]) -> list[ToolCall]:
    """ "add milk, eggs and bread to the shopping list": one task per item when commas list them."""
    raw = match.group("title")
    if "," not in raw:
        return _add(match)
    items = [title_of(item) for item in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", raw) if item.strip()]
    if len(items) > MAX_IDS or not all(is_task_title(item) for item in items):
        return []
    return [("add_task", {"title": item}) for item in items]


def _add(match: re.Match[str]) -> list[ToolCall]:
    title = title_of(match.group("title"))
    if not title or not is_task_title(title):
        return []
    return [("add_task", {"title": title})]


def _buy(match: re.Match[str]) -> list[ToolCall]:
    item = title_of(match.group("title"))
    return [("add_task", {"title": f"buy {item}"})] if item else []


def _complete(match: re.Match[str]) -> list[ToolCall]:
    return [("complete_task", {"task_id": n}) for n in refs(match.group("ids"))]


def _delete(match: re.Match[str]) -> list[ToolCall]:
    return [("delete_task", {"task_id": n}) for n in refs(match.group("ids"))]


def _get(match: re.Match[str]) -> list[ToolCall]:
    numbers = refs(match.group("id"))
    return [("get_task", {"task_id": numbers[0]})] if len(numbers) == 1 else []


def _rename(match: re.Match[str]) -> list[ToolCall]:
    numbers, title = refs(match.group("id")), title_of(match.group("title"))
    return [("update_task", {"task_id": numbers[0], "title": title})] if len(numbers) == 1 and title else []


def _list(match: re.Match[str]) -> list[ToolCall]:
    word = (match.groupdict().get("status") or "").lower()
    return [("list_tasks", {"status": _STATUS.get(word, "all")})]


def _pending(match: re.Match[str]) -> list[ToolCall]:
    return [("list_tasks", {"status": "pending"})]


def _completed(match: re.Match[str]) -> list[ToolCall]:
    return [("list_tasks", {"status": "completed"})]


_ADD_VERB = r"(?:add|put|stick|pop|throw|place|write|jot|note|include|append|save)"
_DONE_VERB = (
    r"(?:done|complete|completed|finish|finished|check|checked|check off|tick|ticked|tick off|cross|crossed"
    r"|cross off|cross out|strike|strike off|strike out|scratch|scratch off|close|mark off|knock off|did)"
)
_DONE_WORD = r"(?:done|complete|completed|finished|checked off|ticked off|crossed off|sorted|taken care of)"
_DELETE_VERB = (
    r"(?:delete|remove|drop|erase|trash|bin|discard|get rid of|throw away|throw out|ditch|scrap|cancel"
    r"|forget about|forget|kill|nuke|clear)"
)
_OFF_LIST = rf"(?:\s+(?:off|from|out of)\s+{_LIST})"
_STATUS_WORD = (
    r"(?P<status>pending|open|outstanding|remaining|left|unfinished|incomplete|undone|current|active|done"
    r"|completed|finished|closed|checked off|ticked off)"
)

RULES: list[tuple[str, Callable[[re.Match[str]], list[ToolCall]]]] = [
    # adding: "add milk to my list", "put eggs on the shopping list", "note to self: …", "I need to …"
    (rf"^{_ADD_VERB}(?:\s+down)?\s+(?P<title>.+?)\s+(?:to|on|onto|in|into)\s+{_LIST}$", _add_items),
    (
        r"^(?:add|create|make|new|set up|put down|write down|jot down)\s+(?:me\s+)?(?:a\s+|an\s+)?"
        r"(?:new\s+)?(?:task|todo|to-do|to do|item|entry)\s*(?::|-|called|named|titled|saying|that says"
        r"|to|for|about)?\s+(?P<title>.+)$",
        _add,
    ),
    (
        r"^(?:note to self|memo to self|reminder to self|todo|to-do|to do|task|new task|new todo|add)"
        r"\s*[:\-\u2013\u2014]\s*(?P<title>.+)$",
        _add,
    ),
    (r"^(?:note to self|memo to self)\s*,?\s+(?P<title>.+)$", _add),
    (
        r"^(?:make|take|write|leave)\s+(?:me\s+)?a\s+note(?:\s+for\s+me)?\s*"
        r"(?::|to|that i (?:need|have) to)\s*"
        r"(?P<title>.+)$",
        _add,
    ),
    (r"^(?:jot|write|note|put|scribble)\s+down\s*:?\s+(?P<title>.+)$", _add),
    (r"^(?:add|new task|new todo|todo|to-do)\s*:?\s+(?P<title>[\"'\u201c\u2018].+)$", _add),
    (
        r"^(?:i|we)\s*(?:(?:really|still|also|definitely|absolutely|urgently|will)\s+)?"
        r"(?:must not forget to|mustn'?t forget to|shouldn'?t forget to|can'?t forget to|cannot forget to"
        r"|need to remember to|should remember to|must remember to|need to|have to|must|'ve got to"
        r"|have got to|got to|gotta|'ll need to)\s+(?P<title>.+)$",
        _add,
    ),
    (r"^(?:need to|have to|gotta|must|remember to|got to)\s+(?P<title>.+)$", _add),
    (r"^(?:don'?t|do not|dont)\s+let\s+me\s+forget\s+(?:to\s+|about\s+)?(?P<title>.+)$", _add),
    (r"^(?:don'?t|do not|dont)\s+forget\s+to\s+(?P<title>.+)$", _add),
    (r"^(?:make sure|make certain)\s+(?:that\s+)?i\s+(?P<title>.+)$", _add),
    (r"^help me remember to\s+(?P<title>.+)$", _add),
    (r"^(?:we'?re|we are|i'?m|i am)\s+(?:all\s+)?out of\s+(?P<title>.+)$", _buy),
    (r"^(?:we|i)\s+(?:ran|have run|'ve run|just ran)\s+out of\s+(?P<title>.+)$", _buy),
    # completing: "tick off 2", "cross 4 off my list", "mark the third one as done", "I finished #3"
    (
        rf"^{_DONE_VERB}\s+(?:off\s+)?(?P<ids>{_REFS})(?:\s+off)?{_OFF_LIST}?(?:\s+as\s+{_DONE_WORD})?$",
        _complete,
    ),
    (rf"^mark\s+(?P<ids>{_REFS})\s+(?:as\s+)?(?:{_DONE_WORD}|off)$", _complete),
    (rf"^(?:mark|set)\s+(?P<ids>{_REFS})\s+(?:to|as)\s+(?:{_DONE_WORD})$", _complete),
    (rf"^(?P<ids>{_REFS})\s+(?:is|are|'s|has been|have been|can be|was)?\s*(?:{_DONE_WORD}|off)$", _complete),
    (
        r"^i(?:'ve|\s+have|\s+just|\s+already|\s+finally)*\s+"
        r"(?:finished|completed|done|did|ticked off|crossed off"
        rf"|checked off|got|accomplished|handled|sorted|knocked out)\s+(?P<ids>{_REFS})(?:\s+done)?$",
        _complete,
    ),
    (rf"^(?:i'?m|i am|we'?re)\s+(?:all\s+)?(?:done|finished)\s+with\s+(?P<ids>{_REFS})$", _complete),
    (rf"^(?:done|finished)\s+with\s+(?P<ids>{_REFS})$", _complete),
    # deleting: "get rid of 3", "take 3 off my list", "scrap number 2"
    (rf"^{_DELETE_VERB}\s+(?P<ids>{_REFS}){_OFF_LIST}?$", _delete),
    (rf"^(?:take|strike|pull)\s+(?P<ids>{_REFS}){_OFF_LIST}$", _delete),
    (
        rf"^(?P<ids>{_REFS})\s+(?:can go|can be deleted|is not needed|isn'?t needed|is no longer needed)$",
        _delete,
    ),
    # renaming: "change 2 to oat milk", "change the title of task 2 to …", "change 3's title to …", "rename
    # task 2 from buy milk to buy oat milk"
    (
        r"^(?:rename|change|update|edit|retitle|reword|correct|fix)\s+(?:the\s+(?:title|name|text)\s+of\s+)?"
        rf"(?P<id>{_REF})(?:'s\s+(?:title|name|text))?(?:\s+from\s+.+?)?"
        r"\s*(?::|\s(?:to say|so it says|to|as|into)\s*:?)\s*(?P<title>.+)$",
        _rename,
    ),
    # showing one: "show me number 2", "tell me about task 2", "details of the 2nd"
    (
        r"^(?:show|get|view|open|display|see|read|details of|details for|details on|details about"
        r"|tell me about"
        rf"|tell me more about|more about|more on|info on|info about|what about)\s+(?:me\s+)?(?P<id>{_REF})$",
        _get,
    ),
    (
        r"^(?:show|give|get|tell|send)(?:\s+me)?\s+(?:the\s+|all\s+the\s+)?(?:details|info|description)\s+"
        rf"(?:of|for|on|about)\s+(?P<id>{_REF})$",
        _get,
    ),
    (rf"^(?:what'?s|what is|whats)\s+(?P<id>{_REF})\s+about$", _get),
    (rf"^what\s+(?:does|did)\s+(?P<id>{_REF})\s+say$", _get),
    (
        rf"^(?:what'?s|what is|what was|whats)\s+"
        rf"(?P<id>{_MARKED}|(?:the\s+)?{_NOUN}\s+#?\d{{1,100}}|#\d{{1,100}})$",
        _get,
    ),
    # listing: "show my todo list", "what do I have to do", "anything pending?", "what have I done"
    (
        r"^(?:show|list|display|give|gimme|get|see|view|read|send|tell|print|pull up|bring up|open|check"
        r"|let me see|can i see|may i see|i want to see|i'?d like to see)"
        rf"(?:\s+me)?(?:\s+all)?(?:\s+of)?(?:\s+(?:my|the|our))?(?:\s+{_STATUS_WORD})?\s+"
        r"(?:tasks|todos|to-?dos|to dos|todo list|to-?do list|to do list|list|task list|things to do|items"
        r"|checklist|agenda|stuff)(?:\s+(?:again|so far|for now))?$",
        _list,
    ),
    (
        r"^(?:what'?s|what is|whats|what'?re|what are)\s+(?:on\s+)?(?:my|the|our)\s+(?:list|tasks|todos"
        r"|to-?dos|to-?do list|todo list|to do list|plate|agenda|task list)(?:\s+(?:today|now|again))?$",
        _list,
    ),
    (
        r"^what\s+(?:do|should|must|shall)\s+i\s+(?:have\s+to\s+|need\s+to\s+|got\s+to\s+)?"
        r"do(?:\s+(?:today|now|next|this week))?$",
        _list,
    ),
    (  # "still": what is left
        r"^what\s+(?:do|should|must|shall)\s+i\s+(?:still\s+(?:have\s+to\s+|need\s+to\s+|got\s+to\s+)?do"
        r"|(?:have\s+to\s+|need\s+to\s+|got\s+to\s+)?do\s+still)(?:\s+(?:today|now|this week))?$",
        _pending,
    ),
    (
        r"^what\s+(?:have|'ve)\s+i\s+(?:got|still got)\s+to\s+do(?:\s+(?:today|now))?$",
        _list,
    ),
    (
        rf"^(?:what|which)\s+tasks\s+(?:are|do i have|have i got)\s+{_STATUS_WORD}$",
        _list,
    ),
    (
        r"^(?:anything|is there anything|is anything|do i have anything|got anything|any tasks|any todos"
        r"|anything else|what'?s|what is|whats|what else is|what'?s still|what is still)\s+(?:still\s+)?"
        r"(?:pending|open|left|outstanding|remaining|due|to do|left to do|undone|unfinished|on my plate)"
        r"(?:\s+(?:today|for today|on my list|for me))?$",
        _pending,
    ),
    (
        r"^(?:do i have|have i got|are there)\s+(?:any\s+)?(?:tasks|todos|to-?dos|things to do|open tasks"
        r"|pending tasks|things on my list)(?:\s+(?:left|today|pending|open|to do))?$",
        _pending,
    ),
    (
        r"^how many\s+(?:tasks|things|todos|items)\s+(?:do i have|are)\s*(?:left|open|pending|to do)?$",
        _pending,
    ),
    (r"^(?:what'?s|what is|whats)\s+next(?:\s+on\s+(?:my|the)\s+list)?$", _pending),
    (rf"^(?:my\s+)?{_STATUS_WORD}\s+(?:tasks|todos|to-?dos|items)$", _list),
    (rf"^(?:show|list|give|tell|read)(?:\s+me)?\s+(?:everything|all|what'?s)\s+(?:on|in)\s+{_LIST}$", _list),
    (r"^(?:show|list|give|gimme)(?:\s+me)?\s+(?:everything|it all|all of it)$", _list),
    (r"^(?:my\s+|the\s+)?(?:todo list|to-?do list|to do list|task list|todos|to-?dos|list)$", _list),
    (
        r"^what\s+(?:have|'ve|did)\s+i\s+(?:already\s+)?(?:done|finished|completed|get done|got done"
        r"|accomplished|finish|complete|accomplish|tick off|check off|ticked off|checked off)"
        r"(?:\s+(?:so far|today|already))?$",
        _completed,
    ),
    (
        r"^(?:what'?s|what is|whats)\s+(?:already\s+)?(?:been\s+)?(?:done|finished|completed)(?:\s+so far)?$",
        _completed,
    ),
    # not done: "what have I not finished", "what's not done yet"
    (
        r"^what\s+(?:have|'ve|did)\s+i\s+not\s+(?:done|finished|completed|got done|ticked off|checked off)"
        r"(?:\s+(?:yet|so far|today))?$",
        _pending,
    ),
    (r"^(?:what'?s|what is|whats)\s+not\s+(?:yet\s+)?(?:done|finished|completed)(?:\s+yet)?$", _pending),
]
_COMPILED = [(re.compile(pattern, re.I), build) for pattern, build in RULES]


def everyday_task_intent(text: str) -> list[ToolCall] | None:
    """The task tool calls an everyday phrasing asks for, or None when it is none the rules know."""
    if len(text) > MAX_LENGTH:
        return None
    cleaned = clean(text)
    for pattern, build in _COMPILED:
        match = pattern.match(cleaned)
        if match:
            return build(match) or None
    return None


_NEED = re.compile(
    r"^(?:don'?t|do not|dont)\s+let\s+me\s+forget\s+(?:to\s+)?(?P<rest>.+)$"
    r"|^(?:make sure|make certain)\s+(?:that\s+)?i\s+(?P<rest2>.+)$",
    re.I,
)


def as_reminder_command(text: str) -> str | None:
    """ "don't let me forget to call mom at 5pm" as "remind me to call mom at 5pm", for the reminder rules,
    which keep timed phrasings; None when `text` is not such a phrase."""
    match = _NEED.match(clean(text))
    if match is None:
        return None
    rest = match.group("rest") or match.group("rest2")
    return f"remind me to {rest}"
