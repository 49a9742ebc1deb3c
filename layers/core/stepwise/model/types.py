"""The model port and the request/response shapes it speaks (a subset of the Messages API)."""

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from stepwise.model.blocks import (
    MessageParam,
    StoredBlocks,
    TextBlock,
    ToolChoiceNone,
    ToolDefinition,
    ToolUseBlock,
)


class Usage(BaseModel):
    """Token counts reported for one call."""

    model_config = ConfigDict(defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0

    def plus(self, other: "Usage") -> "Usage":
        """The sum of two calls' counts (a paused turn continued is one model step)."""
        return Usage(**{name: getattr(self, name) + getattr(other, name) for name in Usage.model_fields})


class ModelRequest(NamedTuple):
    """Everything one model call needs. Stepwise builds it and never parses it, so it is a plain value, not a
    pydantic model."""

    model: str
    max_tokens: int
    system: list[TextBlock]
    messages: list[MessageParam]
    tools: Sequence[ToolDefinition] = ()  # not a list: one default would be shared by every request
    tool_choice: ToolChoiceNone | None = None


class ModelResponse(BaseModel):
    """A model's answer: content blocks (`text`, `tool_use`, the web tools') and why it stopped."""

    model_config = ConfigDict(defer_build=True)

    content: StoredBlocks
    stop_reason: str
    model: str
    usage: Usage = Field(default_factory=Usage)

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool_use blocks, in order."""
        return [block for block in self.content if block["type"] == "tool_use"]


TextSink = Callable[[str], None]
"""Takes each piece of the answer's text as the model writes it (tool inputs are never passed)."""


class ChatModel(Protocol):
    """Anything that answers a ModelRequest."""

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        """Answer the request, or raise ModelTransientError / ModelPermanentError. A model that streams calls
        `on_text` with the text as it arrives; the returned response is still the whole answer."""
        ...
