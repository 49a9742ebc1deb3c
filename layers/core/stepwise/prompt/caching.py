"""Prompt caching per model: whether a turn's prompt can be cached, and so how its history is laid out.

The API caches a prompt prefix only from a minimum length that depends on the model (4,096 tokens for
Claude Haiku 4.5, 1,024 for Sonnet 4.5). Below it a breakpoint costs nothing, but nothing is read back
either, and the history window that moves in blocks (`states.load_context.history_window`) bills up to
`CACHING_MARGIN` more messages every turn for nothing. So LoadContext (`choose_window`) lays the history out
for caching only when the turn's longest cacheable prefix can reach the model's minimum: the prompt's stable
head (tools and system prompt, measured by CallModel on the chat's previous call and kept on the chat record)
plus a window of at most `HISTORY_LIMIT + CACHING_MARGIN - CACHING_ROOM` of the newest messages
(`window_floor`), or plus the current block window. Then the window moves in blocks and, when it moves, it
keeps the newest `HISTORY_LIMIT` messages or, if their prompt falls short of the minimum, the fewest newest
messages that reach it, so it is cached from the move on. Otherwise the window slides by one message per
turn and the messages carry no breakpoints: the turn pays for no history it would not otherwise send and
writes nothing to the cache.

Tokens are estimated as characters / 4 (rounded up) of each block's compact JSON: the same rule the local
fake Messages API counts with, and within some percent of the real tokenizer for English and JSON (which
usually counts more, so near the minimum the estimate errs towards not caching).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from stepwise.media.render import content_blocks

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.model.blocks import TextBlock, ToolDefinition

# The shortest prefix each model family caches (Anthropic's prompt caching documentation, checked 2026-11).
MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-haiku-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-opus-4-0": 1024,
    "claude-sonnet-4": 1024,
    "claude-sonnet-4-0": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
# A model not listed: the highest minimum known, so an unknown model never pays for a window it cannot cache.
UNKNOWN_MODEL_MIN_CACHEABLE_TOKENS = 4096
# How many more messages than HISTORY_LIMIT the window holds before it moves, while caching can pay.
CACHING_MARGIN = 10
# Messages (two turns) the block window must still be able to grow by once it reaches the minimum, so that
# what it writes there is read back before it moves (with none, a window that reaches the minimum only just
# before it moves would write what no turn reads).
CACHING_ROOM = 4


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix `model` caches; `UNKNOWN_MODEL_MIN_CACHEABLE_TOKENS` for a model not listed. The
    family is found in a dated id (claude-haiku-4-5-20251001), a Bedrock id
    (anthropic.claude-haiku-4-5-20251001-v1:0) or an alias (claude-3-5-haiku-latest)."""
    name = model.lower()
    name = name[name.find("claude-") :] if "claude-" in name else ""
    for family, minimum in MIN_CACHEABLE_TOKENS.items():
        if name.startswith(family) and _ends_family(name[len(family) :]):
            return minimum
    return UNKNOWN_MODEL_MIN_CACHEABLE_TOKENS


def _ends_family(rest: str) -> bool:
    """Whether what follows a family's name in a model id ends the name: nothing, a date (-20251001), a
    version (-v1), -latest, or a provider's suffix (@..., :...). String tests rather than a regular
    expression, which every cold start would compile."""
    if not rest or rest[0] in "@:" or rest.startswith("-latest"):
        return True
    if rest.startswith("-v"):
        return rest[2:3].isdigit()
    date = rest[1:9]
    return rest[0] == "-" and len(date) == 8 and date.isascii() and date.isdigit()


def estimate_tokens(value: Any) -> int:
    """Characters / 4, rounded up, of the value's compact JSON (sorted keys, `cache_control` left out)."""
    if isinstance(value, dict):
        value = {key: item for key, item in value.items() if key != "cache_control"}
    return math.ceil(len(json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))) / 4)


def head_tokens(tools: Iterable[ToolDefinition], system: Iterable[TextBlock]) -> int:
    """The estimated tokens of a prompt's stable head: its tools, then its system blocks."""
    return sum(estimate_tokens(tool) for tool in tools) + sum(estimate_tokens(block) for block in system)


def history_tokens(messages: Sequence[StoredMessage]) -> int:
    """The estimated tokens of a history window as the prompt shows it: each message's blocks, a photo or
    document as its line of text (the file itself, sent in the turn that answers it, counts more), and
    without the leading assistant messages the prompt leaves out."""
    total, started = 0, False
    for message in messages:
        started = started or message.role == "user"
        if started:
            total += message_tokens(message)
    return total


def window_floor(model: str, head: int, recent: Sequence[StoredMessage], least: int, most: int) -> int | None:
    """The fewest of the newest messages of `recent` (oldest first), from `least` to `most`, whose prompt
    with its stable head of `head` tokens reaches `model`'s minimum; None when even the newest `most` fall
    short (or the chat holds fewer messages, and all of them do)."""
    count = len(recent)
    own = [message_tokens(message) for message in recent]
    after = [0] * (count + 1)  # after[i]: the tokens of recent[i:]
    first_user = [count] * (count + 1)  # first_user[i]: where the window recent[i:] starts in the prompt
    for index in range(count - 1, -1, -1):
        after[index] = after[index + 1] + own[index]
        first_user[index] = index if recent[index].role == "user" else first_user[index + 1]
    for size in range(least, most + 1):
        start = max(0, count - size)
        if caching_can_pay(model, head, after[first_user[start]]):
            return size
        if start == 0:
            return None
    return None


def message_tokens(message: StoredMessage) -> int:
    """The estimated tokens of one stored message as the prompt shows it in a later turn."""
    return sum(estimate_tokens(block) for block in content_blocks(message, {}))


def caching_can_pay(model: str, head: int, history: int) -> bool:
    """Whether the longest cacheable prefix of a turn, its stable head (`head` tokens; 0 when not measured
    yet) and its history window (`history` tokens), reaches `model`'s minimum. A head not measured yet (a
    chat's first model call) counts as reaching it: its window is the same either way, and the breakpoints
    cost nothing where the prefix turns out shorter."""
    return head <= 0 or head + history >= min_cacheable_tokens(model)
