"""What names a turn, its execution's input, the ids and timestamps of its records, and starting, resuming
and stopping its execution. Empty, so that importing one module loads none of its siblings."""
