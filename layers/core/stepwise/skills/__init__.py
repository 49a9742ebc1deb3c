"""Skills in the Agent Skills format: folders of instructions the model opens when it needs them."""
