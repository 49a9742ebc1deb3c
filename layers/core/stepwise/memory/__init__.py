"""Long-term memory: text embeddings and a vector index, each a small port with an AWS adapter."""
