"""The owner's list of outside MCP servers (a JSON document in an SSM parameter), validated once.

One bad entry is skipped with one log line naming it (its index and name) and what is wrong; the other entries
and the rest of Stepwise keep working. A document that cannot be read at all gives one line and no servers.
"""

import hashlib
import json
import logging
import re
from functools import lru_cache
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stepwise.aws.outbound_url import backslash_or_user_info, https_or_local

logger = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the Messages API's rule for tool names
SEPARATOR = "__"
MAX_SERVER_NAME = 40  # leaves room for the tool's own name within 64 characters
Approval = Literal["writes", "always", "never"]
Auth = Literal["token", "oauth"]  # one token for everybody (token_parameter), or each person signs in
SCOPE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749's scope-token: printable, no space, " or \\


class ServerEntry(BaseModel):
    """One outside MCP server: where it is, how to authenticate, which tools, and when to ask the user."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(min_length=1, max_length=MAX_SERVER_NAME)
    url: str
    token_parameter: str | None = None  # an SSM parameter: a bearer token, or a header `Name: value`
    auth: Auth = "token"
    # oauth only: the scopes asked for (else the server's scopes_supported, else none), and the SSM parameters
    # of a client registered by hand, for servers without dynamic client registration.
    scopes: tuple[str, ...] | None = Field(default=None, min_length=1)
    client_id_parameter: str | None = None
    client_secret_parameter: str | None = None
    allowed_tools: tuple[str, ...] | None = None  # None: every tool the server lists
    approval: Approval = "writes"
    timeout_seconds: float | None = Field(default=None, gt=0, le=60)
    # The hash of the server's tools' labels the owner accepts (given by the log line of a change).
    accept_labels: str | None = Field(default=None, pattern=r"^[0-9a-f]{12}$")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not TOOL_NAME.match(value) or SEPARATOR in value or value.endswith("_"):
            raise ValueError(
                "must be letters, digits, _ or -, without '__' and not ending in '_' (tools are named "
                "<server>__<tool>)"
            )
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if backslash_or_user_info(value):
            raise ValueError(
                "must not hold a backslash or a user-info part (user@): put a token in token_parameter"
            )
        if https_or_local(value):
            return value
        raise ValueError("must be https:// (http:// only to 127.0.0.1 or localhost)")

    @field_validator("token_parameter", "client_id_parameter", "client_secret_parameter")
    @classmethod
    def _parameter(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError("must be the full name of an SSM parameter, starting with /")
        return value

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and not all(SCOPE.match(scope) for scope in value):
            raise ValueError("each scope must be a non-empty string without spaces, quotes or backslashes")
        return value

    @model_validator(mode="after")
    def _auth(self) -> Self:
        named = ("scopes", "client_id_parameter", "client_secret_parameter")
        oauth_only = [name for name in named if getattr(self, name) is not None]
        if self.auth == "oauth" and self.token_parameter is not None:
            raise ValueError('an "oauth" server signs each person in: it takes no token_parameter')
        if self.auth == "token" and oauth_only:
            raise ValueError(f'{", ".join(oauth_only)}: only for "auth": "oauth"')
        if self.client_secret_parameter is not None and self.client_id_parameter is None:
            raise ValueError("client_secret_parameter needs client_id_parameter")
        return self

    def fingerprint(self) -> str:
        """A hash of the entry: a changed entry makes its cached tool list stale."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    def offers(self, tool: str) -> bool:
        """Whether the model may see this tool of the server (allowed_tools, and the name rule)."""
        allowed = self.allowed_tools is None or tool in self.allowed_tools
        return allowed and TOOL_NAME.match(self.tool_name(tool)) is not None

    def tool_name(self, tool: str) -> str:
        """The name the model sees: `<server>__<tool>`."""
        return f"{self.name}{SEPARATOR}{tool}"


def parse_servers(document: str, parameters_path: str) -> tuple[ServerEntry, ...]:
    """The valid entries of the document, in their order; each problem logged once per document (a Lambda
    container parses a document once)."""
    return _parse(document, parameters_path)


@lru_cache(maxsize=4)
def _parse(document: str, parameters_path: str) -> tuple[ServerEntry, ...]:
    try:
        loaded = json.loads(document)
    except ValueError as error:
        logger.warning(f"MCP servers list is not valid JSON ({error}); no outside tools are offered")
        return ()
    items = loaded.get("servers") if isinstance(loaded, dict) else loaded
    if not isinstance(items, list):
        logger.warning("MCP servers list must be a JSON array of servers; no outside tools are offered")
        return ()
    entries: list[ServerEntry] = []
    for index, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        problem = _problem(item, parameters_path, {entry.name for entry in entries})
        if isinstance(problem, str):
            logger.warning(f"MCP server entry {index} ({name!r}) skipped: {problem}")
            continue
        entries.append(problem)
    return tuple(entries)


def _problem(item: Any, parameters_path: str, taken: set[str]) -> ServerEntry | str:
    """The entry, or what is wrong with it."""
    if not isinstance(item, dict):
        return "an entry must be a JSON object"
    try:
        entry = ServerEntry.model_validate(item)
    except ValidationError as error:
        return "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg'].removeprefix('Value error, ')}"
            for e in error.errors(include_url=False)
        )
    if entry.name in taken:
        return "another entry has the same name"
    for field in ("token_parameter", "client_id_parameter", "client_secret_parameter"):
        name = getattr(entry, field)
        if name is not None and not name.startswith(parameters_path):
            return (
                f"{field} must be under {parameters_path} (McpParametersPath), the only parameters the "
                "functions may read"
            )
    return entry
