"""Secretary mode: people who write to the owner's connected account get a reply only the owner approved."""
