"""Token usage per user (per UTC day and month), its estimated cost, and the daily token budget."""
