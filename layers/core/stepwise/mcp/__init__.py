"""Stepwise over the Model Context Protocol: the MCP server of the built-in tools (imports the MCP SDK)."""
