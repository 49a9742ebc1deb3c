"""Warm-ups: the webhook's warmer, the event and decorator every state imports, their settings. Empty, so
that a state's import of the event loads none of the webhook's part."""
