"""The system prompt and the message list sent to the model."""
