"""Per-turn records: the context window, each model response, tool results and the reply's delivery."""
