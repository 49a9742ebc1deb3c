"""Connections: the bearer tokens with which a user's own MCP clients reach Stepwise's `/mcp` endpoint."""
