"""The forms a secret could be found in at rest: as it is, in base64 (standard, and URL-safe unpadded) and in
hex. Tests that search tables, parameters and logs for a token look for each."""

from __future__ import annotations

import base64


def forms(secret: str) -> list[str]:
    """The secret as it is, in base64, URL-safe base64 without padding, and hex."""
    raw = secret.encode()
    return [
        secret,
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
    ]
