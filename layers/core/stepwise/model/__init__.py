"""Language models behind one small interface, and the adapter for Anthropic's Messages API."""
