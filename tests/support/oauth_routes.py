"""Canned OAuth servers for unit tests, without sockets: `Routes("notes.example", ...)` stands in for
urllib3's pool (give it to `HttpTransport`), each host answering as an MCP server that is its own
authorization server (MCP's authorization spec: the 401's resource_metadata, RFC 9728 and 8414 metadata,
RFC 7591 registration, a token endpoint and RFC 7009 revocation). Other URLs get 404."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from support.scripted_http import SentRequest, canned

TOKEN = {"access_token": "access-1", "refresh_token": "refresh-1", "token_type": "bearer", "expires_in": 3600}


def oauth_routes(host: str) -> dict[tuple[str, str], tuple[int, Any] | tuple[int, Any, dict[str, str]]]:
    """A server at `host` that follows MCP's authorization spec (its own authorization server)."""
    base = f"https://{host}"
    return {
        ("POST", f"{base}/mcp"): (401, {}, {"WWW-Authenticate": f'Bearer resource_metadata="{base}/meta"'}),
        ("GET", f"{base}/meta"): (200, {"resource": f"{base}/mcp", "authorization_servers": [base]}),
        ("GET", f"{base}/.well-known/oauth-authorization-server"): (
            200,
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "revocation_endpoint": f"{base}/revoke",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            },
        ),
        ("POST", f"{base}/register"): (201, {"client_id": f"client-{host}", "client_secret": "s"}),
        ("POST", f"{base}/token"): (200, TOKEN),
        ("POST", f"{base}/revoke"): (200, b""),
    }


class Routes:
    """Stands in for urllib3's pool: answers by method and URL (without the query), 404 otherwise."""

    def __init__(self, *hosts: str) -> None:
        self.table: dict[tuple[str, str], Any] = {}
        for host in hosts:
            self.table |= oauth_routes(host)
        self.requests: list[SentRequest] = []

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:
        self.requests.append(SentRequest(method, url, kw["headers"], kw.get("body"), kw["timeout"], {}))
        parts = urlsplit(url)
        answer = self.table.get((method, f"{parts.scheme}://{parts.netloc}{parts.path}"), (404, {}))
        return canned(answer).response(method, url, kw.get("preload_content", True))

    def forms(self, path: str) -> list[dict[str, str]]:
        """The forms posted to URLs ending in `path`."""
        return [dict(parse_qsl((r.body or b"").decode())) for r in self.requests if r.url.endswith(path)]

    def revoked(self) -> list[dict[str, str]]:
        return [dict(parse_qsl((r.body or b"").decode())) for r in self.requests if r.url.endswith("/revoke")]
