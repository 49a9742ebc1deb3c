"""Stepwise: a personal Claude assistant for Telegram, one durable Step Functions execution per turn."""
