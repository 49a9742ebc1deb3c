"""Tools the model can call: the registry and the tools themselves."""

from stepwise.tools.registry import Tool, ToolContext, ToolError, ToolRegistry, ToolResult

__all__ = ["Tool", "ToolContext", "ToolError", "ToolRegistry", "ToolResult"]
