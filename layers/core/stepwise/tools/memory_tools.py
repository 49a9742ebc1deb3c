"""The memory tools: remember a fact now, recall memories, forget one (with the user's approval).

S3 Vectors cannot join a DynamoDB transaction, so remember and forget record their result as the call's
intent first, then make an idempotent effect (remember's memory id comes from the call id, so writing it again
replaces it; deleting again deletes nothing): a retried call makes the effect again and returns the recorded
result.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from stepwise.memory.service import MAX_MEMORY_CHARS, fact_key
from stepwise.tools.registry import Tool, ToolContext, ToolError

RECALL_LIMIT = 5


class _Input(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class RememberInput(_Input):
    fact: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MEMORY_CHARS)
    ] = Field(description="One self-contained fact worth remembering, e.g. 'Anna is the user's sister'.")


class RecallInput(_Input):
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)] = Field(
        description="What to look for in the user's memories."
    )


class ForgetInput(_Input):
    memory_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)] = Field(
        description="The id of the memory to forget, as shown by recall (e.g. fact-V1StGXR8_Z5j)."
    )


def remember(context: ToolContext, args: RememberInput) -> str:
    memories = context.memories()
    key = fact_key(context.call_id)
    result = context.intent(lambda: f"Remembered ({key}): {args.fact}")
    memories.remember(context.user_id, context.chat_id, args.fact, context.now, call_id=context.call_id)
    return result


def recall(context: ToolContext, args: RecallInput) -> str:
    matches = context.memories().recall(context.user_id, args.query, RECALL_LIMIT)
    if not matches:
        return "No memories yet."
    return "\n".join(f"[{m.key}] {m.text}" for m in matches)


def _owned(context: ToolContext, memory_id: str) -> str:
    match = context.memories().get_owned(context.user_id, memory_id)
    if match is None:
        raise ToolError(f"There is no memory {memory_id} for this user.")
    return match.text


def describe_forget(context: ToolContext, args: ForgetInput) -> str:
    text = _owned(context, args.memory_id)
    short = text if len(text) <= 200 else text[:200] + "…"
    return f"Forget the memory {args.memory_id}: “{short}”."


def forget(context: ToolContext, args: ForgetInput) -> str:
    memories = context.memories()
    result = context.intent(lambda: f"Forgot {args.memory_id}: {_owned(context, args.memory_id)}")
    memories.forget(context.user_id, args.memory_id)  # on a retry the memory may be gone already
    return result


MEMORY_TOOLS: list[Tool[RememberInput] | Tool[RecallInput] | Tool[ForgetInput]] = [
    Tool(
        "remember",
        "Store a fact about the user in long-term memory right away.",
        RememberInput,
        remember,
        writes=True,
    ),
    Tool(
        "recall",
        "Search the user's long-term memories (facts and conversation summaries).",
        RecallInput,
        recall,
    ),
    Tool(
        "forget",
        "Delete one memory for good, by its id.",
        ForgetInput,
        forget,
        needs_approval=True,
        describe=describe_forget,
        writes=True,
    ),
]
