"""The per-chat inbox and lease: one turn at a time per chat, queued messages folded into the next turn."""
