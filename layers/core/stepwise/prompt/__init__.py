"""The system prompt and the message list sent to the model."""

from stepwise.prompt.messages import build_messages
from stepwise.prompt.system import ToolSummary, build_system_prompt

__all__ = ["ToolSummary", "build_messages", "build_system_prompt"]
