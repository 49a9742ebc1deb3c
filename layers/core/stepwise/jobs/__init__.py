"""Background jobs: a task handed by a turn to its own durable execution, whose report enters the chat."""
