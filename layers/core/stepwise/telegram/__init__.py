"""Telegram adapter: Update models, the Bot API client port and adapters, reply formatting."""
