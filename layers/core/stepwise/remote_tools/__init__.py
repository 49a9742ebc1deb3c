"""Stepwise as a client of outside MCP servers: their tools offered to the model as `server__tool`."""
