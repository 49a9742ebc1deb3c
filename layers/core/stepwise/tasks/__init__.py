"""Per-user task lists with short integer ids."""
