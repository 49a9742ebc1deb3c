"""Tokens encrypted at rest: Fernet (AES-128-CBC with HMAC-SHA256, from `cryptography`) under one key per
deployment, kept as an SSM SecureString that the functions make on first use.

Each value is sealed with its context (the item it belongs to, e.g. `account#7#calendar`) inside the
encrypted text, and opened only in the same context: a ciphertext copied into another person's item does
not open there.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError
from cryptography.fernet import Fernet, InvalidToken

_SEPARATOR = "\n"


class CipherError(Exception):
    """A sealed value that does not open: another key made it, it was changed, or it belongs elsewhere."""


class TokenCipher:
    """Seals and opens short secrets (tokens, PKCE verifiers, client secrets) with a Fernet key."""

    def __init__(self, key: bytes | str) -> None:
        self._fernet = Fernet(key)

    def seal(self, plain: str, context: str) -> str:
        """`plain`, encrypted and bound to `context` (URL-safe base64 text)."""
        return self._fernet.encrypt(f"{context}{_SEPARATOR}{plain}".encode()).decode()

    def open(self, sealed: str, context: str) -> str:
        """The plain value sealed in `context`; CipherError when it does not open here."""
        try:
            opened = self._fernet.decrypt(sealed.encode()).decode()
        except (InvalidToken, UnicodeDecodeError):
            raise CipherError("the value does not open with this deployment's key") from None
        found, _, plain = opened.partition(_SEPARATOR)
        if found != context:
            raise CipherError("the value was sealed for another item")
        return plain


def ssm_key(ssm: Any, name: str) -> bytes:
    """The deployment's token key from the SSM SecureString `name`; made now when there is none. The put
    never overwrites: when two functions make it at once, the first writer wins and both read its key back.
    (One SSM read per container: the caller keeps the cipher.)"""
    key = _read(ssm, name)
    if key is None:
        try:
            ssm.put_parameter(
                Name=name,
                Value=Fernet.generate_key().decode(),
                Type="SecureString",
                Overwrite=False,
                Description="Stepwise: the key that encrypts people's account tokens (made on first use)",
            )
        except ClientError as error:
            if _code(error) != "ParameterAlreadyExists":
                raise
        key = _read(ssm, name)
        if key is None:
            raise RuntimeError(f"SSM parameter {name} was written but cannot be read back")
    try:
        Fernet(key)
    except ValueError:
        raise ValueError(f"SSM parameter {name} does not hold a Fernet key") from None
    return key


def _read(ssm: Any, name: str) -> bytes | None:
    try:
        value = ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"]
    except ClientError as error:
        if _code(error) == "ParameterNotFound":
            return None
        raise
    return str(value).strip().encode()


def _code(error: ClientError) -> str | None:
    code: str | None = error.response.get("Error", {}).get("Code")
    return code
