"""Slash commands answered without the model: one table for the answers and for Telegram's command menu."""
