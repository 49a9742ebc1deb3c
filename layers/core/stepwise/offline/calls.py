"""What the offline grammars return: the tool calls the real model would make for a command."""

from __future__ import annotations

from typing import Any

ToolCall = tuple[str, dict[str, Any]]  # (tool name, input)

# At most MAX_IDS numbers per command: a message of thousands ("done 1,1,1,…") would make a tool round
# too large to store, and the real model does not ask for more calls than that in one response either.
MAX_IDS = 20
