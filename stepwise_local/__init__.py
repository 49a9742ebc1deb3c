"""Local stand-ins for running and testing Stepwise without AWS or Telegram."""
