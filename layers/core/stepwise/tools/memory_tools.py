"""The memory tools: remember a fact now, recall memories, forget one (with the user's approval).

S3 Vectors cannot join a DynamoDB transaction, so remember and forget declare an `intent` (the registry
records its result first), then make an idempotent effect (remember's memory id comes from the call id, so
writing it again replaces it; deleting again deletes nothing): a retried call makes the effect again and
returns the recorded result. `memory_tools(memory)` binds the handlers to the memory service. `recall` also
returns its result as data (a `MemoryList`), which the /memory command reads too.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from stepwise.approvals.arguments import shorten, worded
from stepwise.memory.keys import fact_key
from stepwise.memory.service import MAX_MEMORY_CHARS
from stepwise.tools.registry import Intent, Tool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    from stepwise.memory.service import MemoryService

RECALL_LIMIT = 5
MAX_RECALL = 50  # what /memory lists
FORGET_SHOWN = 200  # how much of a memory an approval to forget it quotes


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
    limit: int = Field(
        default=RECALL_LIMIT, ge=1, le=MAX_RECALL, description="The most memories to return, nearest first."
    )


class MemoryView(BaseModel):
    """One of the user's memories: a fact (`fact-…`) or a chat's rolling summary (`summary-…`)."""

    model_config = ConfigDict(defer_build=True)

    id: str
    text: str


class MemoryList(BaseModel):
    """The user's memories nearest to the query, nearest first."""

    model_config = ConfigDict(defer_build=True)

    memories: list[MemoryView]


class ForgetInput(_Input):
    memory_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)] = Field(
        description="The id of the memory to forget, as shown by recall (e.g. fact-V1StGXR8_Z5j)."
    )


def remember_intent(context: ToolContext, args: RememberInput) -> Intent:
    return Intent(f"Remembered ({fact_key(context.call_id)}): {args.fact}")


def remember(memory: MemoryService, context: ToolContext, args: RememberInput) -> str:
    memory.remember(
        context.owner, context.scope.conversation.chat_id, args.fact, context.now, call_id=context.call_id
    )
    return "remembered"


def recall(memory: MemoryService, context: ToolContext, args: RecallInput) -> ToolOutput[MemoryList]:
    matches = memory.recall(context.owner, args.query, args.limit)
    data = MemoryList(memories=[MemoryView(id=m.key, text=m.text) for m in matches])
    if not matches:
        return ToolOutput("No memories yet.", data)
    return ToolOutput("\n".join(f"[{m.key}] {m.text}" for m in matches), data)


def _owned(memory: MemoryService, context: ToolContext, memory_id: str) -> str:
    match = memory.get_owned(context.owner, memory_id)
    if match is None:
        raise ToolError(f"There is no memory {memory_id} for this user.")
    return match.text


def describe_forget(memory: MemoryService, context: ToolContext, args: ForgetInput, room: int) -> str:
    text = _owned(memory, context, args.memory_id)
    shown = shorten(text, FORGET_SHOWN)  # the memory is quoted, not an argument: its beginning is enough
    return worded("Forget the memory {}: “{}”.", [args.memory_id, shown], room, whole=[0])


def forget_intent(memory: MemoryService, context: ToolContext, args: ForgetInput) -> Intent:
    return Intent(f"Forgot {args.memory_id}: {_owned(memory, context, args.memory_id)}")


def forget(memory: MemoryService, context: ToolContext, args: ForgetInput) -> str:
    memory.forget(context.owner, args.memory_id)  # on a retry the memory may be gone already
    return "forgotten"


def memory_tools(memory: MemoryService) -> list[Tool[Any]]:
    """The memory tools, bound to the memory service (offered only where long-term memory is deployed)."""
    return [
        Tool(
            "remember",
            "Store a fact about the user in long-term memory right away.",
            RememberInput,
            partial(remember, memory),
            writes=True,
            intent=remember_intent,
        ),
        Tool(
            "recall",
            "Search the user's long-term memories (facts and conversation summaries).",
            RecallInput,
            partial(recall, memory),
            read_only=True,
            output_model=MemoryList,
        ),
        Tool(
            "forget",
            "Delete one memory for good, by its id.",
            ForgetInput,
            partial(forget, memory),
            needs_approval=True,
            describe=partial(describe_forget, memory),
            writes=True,
            intent=partial(forget_intent, memory),
            destructive=True,
            idempotent=True,  # forgetting again deletes nothing
        ),
    ]
