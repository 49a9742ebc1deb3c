"""The offline model: a rule-based stand-in without a Messages API, and the fallback when that API fails.

It drives the same task and reminder tools the real model would ("add buy milk", "done 3", "remind me at 5pm
to call mom", "every friday at 17:00 ask me how my week went"...), reports their results, answers greetings,
help and the time, and says plainly what it does not understand, with the three commands closest to it (in a
background job, by calling `cannot_do`: the job then reports that it could not do its task). A task named by
its words ("done buy milk") takes two rounds: the list, then the call on the one task it names (or a question
when several match); "forget the birthday" recalls, then points to the memory and the command that forgets
it; a near miss ("lst") gets "Did you mean …?". Times are the user's, from the clock line of the per-turn
context (`stepwise.prompt.clock_line`); without one, UTC by the model's own clock.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC
from typing import TYPE_CHECKING

from stepwise.history.forwarded import is_forwarded
from stepwise.jobs.models import CANNOT_DO
from stepwise.model.types import ModelRequest, ModelResponse, TextSink
from stepwise.offline.forget_words import forget_intent, forget_words, pointer
from stepwise.offline.intents import parse_intent, reminder_intent, task_intent
from stepwise.offline.job_rules import job_intent
from stepwise.offline.media_rules import media_answer
from stepwise.offline.named_tasks import named_task_intent, resolve
from stepwise.offline.near_misses import closest_commands, corrected, did_you_mean
from stepwise.offline.outside_tools import outside_tool_call
from stepwise.offline.reminder_rules import last_reminder
from stepwise.offline.replies import phrase_results, tool_inputs, tool_names
from stepwise.offline.small_talk import small_talk
from stepwise.offline.task_commands import reminder_without_time
from stepwise.offline.web_questions import web_answer
from stepwise.prompt.clock_line import UserClock, parse_clock_line
from stepwise.prompt.system import is_turn_context
from stepwise.turn.ids import utc_now

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from stepwise.model.blocks import MessageParam, ResponseBlock, ToolResultBlock
    from stepwise.offline.calls import ToolCall

OFFLINE_MODEL_NAME = "stepwise-offline"

GREETING = re.compile(r"^\s*(/start|hi|hello|hey|hallo|good (morning|afternoon|evening))\b", re.IGNORECASE)
HELP = re.compile(r"^\s*(/help|help|what can you do)\b", re.IGNORECASE)
TIME = re.compile(
    r"\b(what time|what's the time|what is the time|what day|what's the date|today's date)\b", re.IGNORECASE
)
COMMAND_EXAMPLES = (
    "*add* buy milk (tomorrow, by friday, 2026-12-03…)",
    "*remind me to* call mom",
    "*list* (or: what's on my list)",
    "*show task* 2",
    "*rename* 2 to new title",
    "*done* 3",
    "*delete* 3",
    "*remember* that …",
    "*what do you remember*",
    "*forget* fact-…",
    "*remind me* at 5pm to call mom",
    "*remind me* in 20 minutes to …",
    "*every* friday at 17:00 ask me how my week went",
    "*reminders*",
    "*cancel reminder* 2",
    "*snooze* 10 minutes",
    "*/timezone* Europe/Lisbon",
    "*in the background:* add buy milk",
)
COMMANDS = " · ".join(COMMAND_EXAMPLES)
HELP_ANSWER = (
    f"Offline I understand these task commands: {COMMANDS}. Set `ANTHROPIC_API_KEY` to talk to Claude."
)
NOT_UNDERSTOOD = "I'm in offline mode (no model API is configured), so I didn't understand that."
NOT_UNDERSTOOD_TASK = "I'm in offline mode (no model API is configured), so I didn't understand the task."
_tool_ids = itertools.count(1)


class OfflineModel:
    """ChatModel that needs no network: it reads the newest user message and answers by rules."""

    def __init__(self, clock: Callable[[], datetime] = utc_now) -> None:
        self._clock = clock

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        """Answer by rules, at once (`on_text` is not called: there is nothing to stream)."""
        if drafts_for_a_contact(request.messages):  # secretary mode: the rules cannot read a contact's words
            return self._text(SECRETARY_DRAFT)
        text = last_user_text(request.messages)
        results = last_tool_results(request.messages)
        if results is not None:
            return self._after_tools(results, text, request)
        if (about_file := media_answer(text)) is not None:
            return self._text(about_file)
        clock = local_clock(request.messages) or UserClock(self._clock().astimezone(UTC), "UTC")
        outside = outside_tool_call(text, _callable(request))
        if isinstance(outside, str):
            return self._text(outside)
        if outside is not None:
            return self._calls([outside])
        calls = self.intent(text, clock, request)
        if calls:
            return self._calls(calls)
        answer = self.answer(text, clock)
        if answer.startswith(NOT_UNDERSTOOD):
            if _offered(request, CANNOT_DO):  # a background job's task
                return self._calls([(CANNOT_DO, {"reason": NOT_UNDERSTOOD_TASK})])
            near = corrected(text, lambda command: parse_intent(command, clock))
            if near is not None:
                answer = did_you_mean(*near)
        return self._text(answer)

    def _after_tools(self, results: list[ToolResultBlock], text: str, request: ModelRequest) -> ModelResponse:
        """The next step after a round of tool results: the second round of a task or memory named by its
        words, else the results in words (with a word on a reminder that had no time)."""
        names, inputs = tool_names(request.messages), tool_inputs(request.messages)
        follow_up = self._follow_up(results, names, text, request)
        if follow_up is not None:
            return follow_up
        answer = phrase_results(results, names, inputs)
        added = [inputs.get(call, {}) for call, name in names.items() if name == "add_task"]
        if added and reminder_without_time(text):
            title = str(added[0].get("title", "…"))
            answer += (
                "\nA reminder needs a time, so I added it as a task. To be reminded, say when: "
                f"“remind me at 5pm to {title}” or “remind me in 20 minutes to {title}”."
            )
        return self._text(answer)

    def _follow_up(
        self, results: list[ToolResultBlock], names: dict[str, str], text: str, request: ModelRequest
    ) -> ModelResponse | None:
        """After the list a task named by its words is on: the call on that task, or the question which one
        (or that none matches). After recalling the memories "forget …" names: the one it would forget."""
        if len(results) != 1 or results[0]["is_error"]:
            return None
        name = names.get(results[0]["tool_use_id"], "")
        read = results[0]["content"]
        named = named_task_intent(text) if name == "list_tasks" else None
        if named is not None:
            resolved = resolve(named, read)
            if isinstance(resolved, str):
                return self._text(resolved)
            return self._calls([resolved]) if _offered(request, resolved[0]) else None
        what = forget_words(text) if name == "recall" else None
        return self._text(pointer(what, read)) if what else None

    def intent(self, text: str, clock: UserClock, request: ModelRequest) -> list[ToolCall] | None:
        """The tool calls for `text` (a background job first, then reminder commands, then task commands)
        when the request offers all the tools they need, else None."""
        if request.tool_choice is not None and request.tool_choice["type"] == "none":
            return None
        available = {tool["name"] for tool in request.tools}
        reminder = reminder_intent(text, clock, last_reminder(request.messages))
        for calls in (job_intent(text), reminder, task_intent(text, clock), forget_intent(text)):
            if calls and all(name in available for name, _ in calls):
                return calls
        return None

    def _calls(self, calls: list[ToolCall]) -> ModelResponse:
        content: list[ResponseBlock] = [
            {"type": "tool_use", "id": f"toolu_offline_{next(_tool_ids):06d}", "name": name, "input": args}
            for name, args in calls
        ]
        return ModelResponse(content=content, stop_reason="tool_use", model=OFFLINE_MODEL_NAME)

    def _text(self, text: str) -> ModelResponse:
        return ModelResponse(
            content=[{"type": "text", "text": text}], stop_reason="end_turn", model=OFFLINE_MODEL_NAME
        )

    def answer(self, text: str, clock: UserClock | None = None) -> str:
        """The rule-based answer to a message that is no command; `clock` is the user's, when known."""
        chat = small_talk(text)
        if chat is not None:
            return chat
        if GREETING.search(text):
            return (
                "Hello! I'm Stepwise, running in offline mode (no model API is configured), "
                f"so I follow simple commands for your task list: {COMMANDS}."
            )
        if HELP.search(text):
            return HELP_ANSWER
        web = web_answer(text)
        if web is not None:
            return web
        if TIME.search(text):
            if clock is None or clock.zone == "UTC":
                return f"It is {self._clock().isoformat(timespec='seconds')} (UTC)."
            return f"It is {clock.now:%H:%M} on {clock.now:%A, %d %B %Y} ({clock.zone})."
        return not_understood(text)


def not_understood(text: str) -> str:
    """One line saying the rules did not understand `text`, with the commands closest to it (not all of
    them: "help" lists those)."""
    offered = " · ".join(closest_commands(text, COMMAND_EXAMPLES))
    return f"{NOT_UNDERSTOOD} Closest commands: {offered} (“help” lists them all)."


def _offered(request: ModelRequest, tool: str) -> bool:
    """Whether the request offers `tool` and lets the model call tools."""
    return tool in _callable(request)


def _callable(request: ModelRequest) -> set[str]:
    """The tools the model may call in this request (none when `tool_choice` says so)."""
    if request.tool_choice is not None and request.tool_choice["type"] == "none":
        return set()
    return {offered["name"] for offered in request.tools}


def local_clock(messages: list[MessageParam]) -> UserClock | None:
    """The user's local clock from the per-turn context of the newest user message, if it has one."""
    newest = messages[-1] if messages and messages[-1]["role"] == "user" else None
    for block in newest["content"] if newest is not None else []:
        if is_turn_context(block):
            return parse_clock_line(block["text"])
    return None


def last_tool_results(messages: list[MessageParam]) -> list[ToolResultBlock] | None:
    """The tool_result blocks of the newest message, when it is a user message carrying them."""
    if not messages or messages[-1]["role"] != "user":
        return None
    blocks = [block for block in messages[-1]["content"] if block["type"] == "tool_result"]
    return blocks or None


SECRETARY_DRAFT = "Thanks for your message! I'll get back to you soon."
SECRETARY_SECTION = "## Secretary mode"


def drafts_for_a_contact(messages: list[MessageParam]) -> bool:
    """Whether the turn drafts a reply to someone who wrote to the owner's account (secretary mode): its turn
    context says so. The rules answer commands; a contact's words get a neutral acknowledgement to edit."""
    last = messages[-1] if messages else None
    if last is None or last["role"] != "user" or isinstance(last["content"], str):
        return False
    return any(is_turn_context(block) and SECRETARY_SECTION in block["text"] for block in last["content"])


def last_user_text(messages: list[MessageParam]) -> str:
    """The text of the newest user message (its last text block that is not Stepwise's turn context); empty
    when that block is a forwarded message: someone else's words are no request to act on."""
    for message in messages[::-1]:  # (mypy reads reversed() of these TypedDicts as Any)
        if message["role"] != "user":
            continue
        texts = [
            block["text"]
            for block in message["content"]
            if block["type"] == "text" and not is_turn_context(block)
        ]
        if texts:
            return "" if is_forwarded(texts[-1]) else texts[-1]
    return ""
