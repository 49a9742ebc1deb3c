"""A connection (one named bearer token of one user) and the token's form.

A token is shown to its user once, in the reply to `/connect <name>`; Stepwise keeps only its SHA-256 hash.
It is made when that reply is sent (`stepwise.connections.minting`), so a connection is first pending (no
hash: no token exists), then active. It acts as its user, in the private chat where it was created (approvals
are asked there).
"""

import hashlib
import re

from pydantic import BaseModel, ConfigDict, Field

TOKEN_PREFIX = "swp_"  # noqa: S105 (a prefix that makes a leaked token recognizable, not a secret)
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
MAX_CONNECTIONS = 10  # per user


class Connection(BaseModel):
    """One named token of one user: who it acts as, where approvals go, and its hash (None while pending)."""

    model_config = ConfigDict(defer_build=True)

    user_id: int
    chat_id: int
    name: str = Field(pattern=NAME_PATTERN.pattern)
    # None: pending, its token not yet made (the reply that shows it not yet sent)
    token_hash: str | None = Field(default=None, min_length=64, max_length=64)
    created_at: str
    created_by_turn: str  # the turn that made it: a retry of that turn replaces it

    @property
    def pending(self) -> bool:
        """Made by `/connect`, but its token not yet (FinishTurn makes it as it sends it): nothing works."""
        return self.token_hash is None


def token_hash(token: str) -> str:
    """What is stored and looked up: the token's SHA-256, hex. A token has 256 bits nobody can guess
    (`stepwise.connections.minting`), so a plain hash (no salt, no slow hash) is what keeps it unguessable
    and lets a request be checked with one read."""
    return hashlib.sha256(token.encode()).hexdigest()


def valid_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None
