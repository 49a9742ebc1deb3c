"""An outside server's tool called by its name: `use notes__add_note text="buy milk"`.

The rules know the built-in tools' phrasings but none of the outside servers' tools (MCP, docs/mcp-client.md;
a person's own accounts, docs/accounts.md), so offline a person tries one by naming it, with its arguments
as `key=value` pairs (a value is read as JSON when it is JSON, else as text: `n=3` is a number, `n='"3"'`
text) or as one JSON object. A tool the turn does not offer gets one line naming those it does.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Collection

    from stepwise.offline.calls import ToolCall

USE = re.compile(r"\s*(?:use|call)\s+(?P<tool>[\w-]+__[\w-]+)(?P<arguments>.*)", re.IGNORECASE | re.DOTALL)


def outside_tool_call(text: str, offered: Collection[str]) -> ToolCall | str | None:
    """The call `text` names (`use <server>__<tool> …`), the one line saying why it cannot be made, or None
    when `text` names no outside tool."""
    named = USE.fullmatch(text)
    if named is None:
        return None
    tool = named["tool"]
    if tool not in offered:
        outside = sorted(name for name in offered if "__" in name)
        listed = f"the ones offered here: {', '.join(outside)}" if outside else "none is offered here"
        return f"There is no outside tool “{tool}” ({listed}; /accounts connects your own)."
    arguments = _arguments(named["arguments"].strip())
    if isinstance(arguments, str):
        return f"I couldn't read the arguments for {tool}: {arguments}"
    return tool, arguments


def _arguments(written: str) -> dict[str, Any] | str:
    """`key=value …` or one JSON object, as the tool's input; a string saying what is wrong otherwise."""
    if written.startswith("{"):
        try:
            value = json.loads(written)
        except json.JSONDecodeError:
            return "that is not a JSON object."
        return value if isinstance(value, dict) else "that is not a JSON object."
    try:
        words = shlex.split(written)
    except ValueError:
        return "a quote is not closed."
    arguments: dict[str, Any] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            return f"“{word}” is not key=value."
        arguments[key] = _value(value)
    return arguments


def _value(written: str) -> Any:
    try:
        return json.loads(written)
    except json.JSONDecodeError:
        return written
