"""`make chat` checks its configuration before starting: one line per bad variable instead of a traceback
after the first message. The functions' environments are checked with the core's own Settings, as each
function would read them; the chat's own variables (the Anthropic key and endpoint) with the rules below."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

from pydantic import ValidationError

from stepwise_local.emulation import LAYER_DIR

_BOUNDS = {
    "less_than_equal": ("le", "must be at most {}"),
    "less_than": ("lt", "must be less than {}"),
    "greater_than_equal": ("ge", "must be at least {}"),
    "greater_than": ("gt", "must be greater than {}"),
    "string_too_short": ("min_length", "must be at least {} character(s) long"),
}
_KINDS = {
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "bool_parsing": "must be true or false",
}


def shown(value: Any) -> str:
    """A value as the user typed it: bare when it is one word, quoted otherwise."""
    if isinstance(value, str) and value and not any(c.isspace() for c in value):
        return value
    return repr(value)


def describe(error: Mapping[str, Any]) -> str:
    """One pydantic error of Settings as a line naming the environment variable (and the value given, unless
    the section hides it: it may be a secret)."""
    name = str(error["loc"][0]).upper() if error.get("loc") else "a setting"
    kind, ctx = error["type"], error.get("ctx") or {}
    got = f" (got {shown(error['input'])})" if "input" in error else ""
    if kind in _BOUNDS and _BOUNDS[kind][0] in ctx:
        key, phrase = _BOUNDS[kind]
        bound = ctx[key]
        bound = int(bound) if isinstance(bound, float) and bound.is_integer() else bound  # 0, not 0.0
        return f"{name} {phrase.format(bound)}{got}"
    if kind in _KINDS:
        return f"{name} {_KINDS[kind]}{got}"
    if kind == "literal_error":
        return f"{name} must be {ctx.get('expected', 'one of its allowed values')}{got}"
    message = str(error.get("msg", "is invalid")).removeprefix("Value error, ")
    if not message.startswith(name):  # the core's own validators name the variable themselves
        message = f"{name}: {message}"
    return message if "got" in message else f"{message}{got}"


def settings_problems(environments: Iterable[Mapping[str, str]]) -> list[str]:
    """What the core's Settings, and each of its sections, reject in any of these function environments (each
    problem once). A deployed function validates a section only when the code that reads it first runs."""
    if str(LAYER_DIR) not in sys.path:
        sys.path.insert(0, str(LAYER_DIR))
    from stepwise.config import all_settings_models
    from stepwise.voice.settings import VoiceServiceSettings

    kinds = all_settings_models()
    problems: list[str] = []
    for environment in environments:
        with mock.patch.dict(os.environ, dict(environment), clear=True):  # Settings reads os.environ
            voice = None
            for kind in kinds:
                try:
                    made = kind()
                except ValidationError as error:
                    shows_input = not kind.model_config.get("hide_input_in_errors", False)
                    lines = [describe(e) for e in error.errors(include_input=shows_input)]
                    problems += [line for line in lines if line not in problems]
                else:
                    voice = made if isinstance(made, VoiceServiceSettings) else voice
        if voice is not None:  # the rule across it and Settings, whatever else is wrong
            problem = voice.problem_for(environment.get("VOICE_TRANSCRIBER", "").strip())
            if problem and problem not in problems:
                problems.append(problem)
    return problems


def chat_problems(environ: Mapping[str, str]) -> list[str]:
    """What is wrong with the variables `make chat` itself reads or passes on: the Anthropic key, endpoint and
    model, the MCP port and how long the chat waits for a line's turns."""
    problems = []
    key = environ.get("ANTHROPIC_API_KEY", "")
    if key.strip() and any(c.isspace() or not c.isprintable() for c in key):
        problems.append("ANTHROPIC_API_KEY must not contain spaces or line breaks (check how it was pasted)")
    base_url = environ.get("ANTHROPIC_BASE_URL", "")
    if base_url.strip():
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(
                "ANTHROPIC_BASE_URL must be an http:// or https:// URL such as http://localhost:11434 "
                f"(got {shown(base_url)})"
            )
    port = environ.get("STEPWISE_MCP_PORT", "")
    if port.strip() and not (port.strip().isdigit() and int(port) <= 65535):
        problems.append(f"STEPWISE_MCP_PORT must be a port number, 0 for any free one (got {shown(port)})")
    wait = environ.get("STEPWISE_CHAT_WAIT_SECONDS", "")
    if wait.strip() and not _positive_number(wait):
        problems.append(f"STEPWISE_CHAT_WAIT_SECONDS must be a number of seconds above 0 (got {shown(wait)})")
    model = environ.get("ANTHROPIC_MODEL", "")
    if model and (not model.strip() or any(c.isspace() for c in model)):
        problems.append(f"ANTHROPIC_MODEL must be a model id such as claude-haiku-4-5 (got {shown(model)})")
    return problems


def _positive_number(text: str) -> bool:
    try:
        value = float(text)
    except ValueError:
        return False
    return 0 < value < float("inf")
