"""Accounts: people's own sign-ins to outside MCP servers (OAuth, as MCP's authorization spec defines), their
tokens kept encrypted."""
