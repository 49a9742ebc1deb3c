"""Conversation history: stored messages and the repository that keeps them."""
