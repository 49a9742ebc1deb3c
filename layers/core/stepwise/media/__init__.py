"""Photos and documents: what a message carries, what the model can take, how it is rendered."""
