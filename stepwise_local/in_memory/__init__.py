"""In-memory stand-ins for the core's ports (stores, the Bot API client, the embedder and the vector
index): the unit tests run the core on them, and the local memory backend is built from two of them."""
