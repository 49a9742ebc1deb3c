"""Language models behind one small interface: Anthropic's Messages API and the offline model."""
