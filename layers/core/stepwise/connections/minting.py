"""Making a new token where it is sent, from a seed its reply keeps and a key that is in no table.

`/connect <name>` stores no token. Its reply keeps a random seed (256 bits) and `TOKEN_SLOT` where the token
goes; FinishTurn makes the token, `swp_` + HMAC-SHA256(key, seed) in hex, just before it sends the reply,
gives the connection the token's hash, and forgets the seed once the reply is delivered (or given up). The
key is derived from the bot token, an SSM SecureString that FinishTurn reads to send anyway: a copy of the
tables, a backup or a role that reads DynamoDB cannot make a token from a seed, and once the seed is gone
nobody can, whatever else they hold. A retried FinishTurn makes the same token again from the same seed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from stepwise.connections.models import TOKEN_PREFIX

# Where the reply's text shows the token; replaced before the text is rendered.
TOKEN_SLOT = "{new token}"  # noqa: S105 (a placeholder, not a secret)
SEED_BYTES = 32
_KEY_LABEL = b"stepwise/connect-token/v1"  # this key is for tokens only, whatever else the secret is for


def new_seed() -> str:
    """A new token's seed: 256 random bits, hex."""
    return secrets.token_hex(SEED_BYTES)


def token_key(secret: str) -> bytes:
    """The key tokens are made with, derived from a secret kept outside the tables (the bot token)."""
    return hmac.new(secret.encode(), _KEY_LABEL, hashlib.sha256).digest()


def token_from_seed(key: bytes, seed: str) -> str:
    """The token a seed makes with `key`: the same every time (a retried send shows the same token)."""
    return TOKEN_PREFIX + hmac.new(key, seed.encode(), hashlib.sha256).hexdigest()
