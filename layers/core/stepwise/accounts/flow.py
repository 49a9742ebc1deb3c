"""The OAuth flow of MCP's authorization spec (2025-06-18): a person signs in to an outside MCP server and
Stepwise keeps their tokens.

- discovery: the server's protected resource metadata (RFC 9728: the `resource_metadata` of its 401's
  `WWW-Authenticate`, else the well-known URLs at its origin), then its authorization server's metadata
  (RFC 8414, else OpenID's configuration);
- the client: registered dynamically (RFC 7591) and kept once per server, or configured by hand
  (`client_id_parameter`); a token endpoint that answers `invalid_client` to a registered client forgot it:
  it is registered once more and the request sent once more;
- a sign-in: authorization code with PKCE S256, a random `state` kept for a few minutes and used up by the
  first callback that carries it, `resource` (RFC 8707) = the MCP server's URL in every request;
- refresh, with a rotated refresh token kept by a conditional write, and revocation (RFC 7009).

The protocol's values and URL rules are the MCP SDK's (`mcp.shared.auth`, `mcp.client.auth.utils`); HTTP is
the core's own transport (urllib3; no redirect is followed). No token, code or verifier is ever logged or put
in an error: errors say what happened in words.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from urllib.parse import quote, urlencode, urlsplit

import httpx2
from mcp.client.auth.oauth2 import PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    issuers_match,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import AnyUrl, ValidationError
from urllib3.exceptions import HTTPError, LocationValueError

from stepwise.accounts.models import Account, PendingSignIn, RegisteredClient
from stepwise.aws.outbound_url import https_or_local

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from stepwise.accounts.store import AccountMarks, AccountStore
    from stepwise.aws.http_transport import HttpTransport, Response
    from stepwise.remote_tools.config import ServerEntry

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-06-18"
CONNECT_SECONDS = 5.0
READ_SECONDS = 15.0
STATE_BYTES = 32  # 256 random bits
DEFAULT_STATE_MINUTES = 10
CLIENT_NAME = "Stepwise"
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
_ERROR_CODE = re.compile(r"^[a-z_]{1,40}$")


class CannotConnect(Exception):
    """The server cannot be signed in to (or reached) now; the message says why, in words."""


class _Refused(Exception):
    """The token endpoint refused a request with an OAuth `error` (RFC 6749 5.2)."""

    def __init__(self, error: str, status: int) -> None:
        super().__init__(f"it answered {status} {error}")
        self.error = error


class Discovery(NamedTuple):
    """Where a server's sign-in happens: its resource URL (RFC 8707), its protected resource metadata (None
    for a server of the 2025-03-26 spec that publishes none) and its authorization server's metadata."""

    resource: str
    resource_metadata: ProtectedResourceMetadata | None
    server: OAuthMetadata


class SignInStarted(NamedTuple):
    """The authorization URL to open (the Connect button's), and when its state dies."""

    url: str
    expires_at: int


FailureKind = Literal["unknown", "expired", "refused", "no_code", "not_listed", "exchange_failed"]


class SignInFailed(NamedTuple):
    """A callback that kept nothing: what happened, and whose sign-in it was (None for an unknown state)."""

    kind: FailureKind
    reason: str
    user_id: int | None = None
    server: str | None = None


class Disconnected(NamedTuple):
    """The account is gone: its newest refresh token was refused (or there was none); connect again."""

    user_id: int
    server: str
    reason: str


class AccountFlow:
    """Sign-ins, token refreshes and disconnections for people's accounts at the listed OAuth servers."""

    def __init__(
        self,
        store: AccountStore,
        http: HttpTransport,
        servers: Callable[[], Sequence[ServerEntry]],
        parameter: Callable[[str], str],
        *,
        marks: AccountMarks,
        state_minutes: int = DEFAULT_STATE_MINUTES,
        now: Callable[[], float] = time.time,
    ) -> None:
        """`servers`: the servers list's entries; `parameter`: an SSM parameter's value (a configured client's
        id and secret); `marks`: the people's profiles, marked with the servers they have accounts at."""
        self._store = store
        self._marks = marks
        self._http = http
        self._servers = servers
        self._parameter = parameter
        self._state_seconds = state_minutes * 60
        self._now = now
        self._discovered: dict[str, Discovery] = {}  # per container, by server URL

    # -------------------------------------------------------------------------------------------- sign-in
    def start_sign_in(self, user_id: int, entry: ServerEntry, redirect_uri: str) -> SignInStarted:
        """A new sign-in of the person at the server: its state kept (with the PKCE verifier) and the
        authorization URL to send them to. CannotConnect when the server offers no way to sign in."""
        discovery = self.discover(entry)
        scope = _scope(entry, discovery)
        client = self._client_for_sign_in(entry, discovery, redirect_uri, scope)
        pkce = PKCEParameters.generate()
        now = int(self._now())
        sign_in = PendingSignIn(
            state=secrets.token_urlsafe(STATE_BYTES),
            user_id=user_id,
            server=entry.name,
            code_verifier=pkce.code_verifier,
            redirect_uri=redirect_uri,
            resource=discovery.resource,
            made_at=now,
            expires_at=now + self._state_seconds,
        )
        self._store.add_sign_in(sign_in)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": sign_in.state,
            "code_challenge": pkce.code_challenge,
            "code_challenge_method": "S256",
            "resource": discovery.resource,
        }
        if scope is not None:
            params["scope"] = scope
        endpoint = str(discovery.server.authorization_endpoint)
        separator = "&" if urlsplit(endpoint).query else "?"
        return SignInStarted(endpoint + separator + urlencode(params), sign_in.expires_at)

    def finish_sign_in(
        self, state: str | None, code: str | None, error: str | None
    ) -> Account | SignInFailed:
        """The callback: its state used up whatever it carries; with a code, the code exchanged and the
        account kept (returned); otherwise what happened, with nothing kept."""
        pending = self._store.take_sign_in(state) if state else None
        if pending is None:
            return SignInFailed("unknown", "This sign-in link is unknown or was used already.")
        user, server = pending.user_id, pending.server
        if self._now() >= pending.expires_at:
            return SignInFailed("expired", f"The sign-in to {server} expired: start it again.", user, server)
        if error is not None:
            return SignInFailed(
                "refused", f"{server} did not sign you in ({_error_code(error)}).", user, server
            )
        if not code:
            return SignInFailed("no_code", f"{server} sent no authorization code back.", user, server)
        entry = self._entry(server)
        if entry is None:
            return SignInFailed("not_listed", f"{server} is no longer on the servers list.", user, server)
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": pending.redirect_uri,
            "code_verifier": pending.code_verifier,
            "resource": pending.resource,
        }
        try:
            token = self._token(entry, self.discover(entry), data)
        except (CannotConnect, _Refused) as problem:
            logger.warning(f"sign-in of user {user} at {server} failed: {problem}")
            return SignInFailed("exchange_failed", f"{server} gave no tokens ({problem}).", user, server)
        now = self._now()
        account = Account(
            user_id=user,
            server=server,
            access_token=token.access_token,
            refresh_token=token.refresh_token,
            expires_at=_expires_at(token, now),
            scope=token.scope,
            connected_at=_iso(now),
        )
        logger.info(f"user {user} connected {server}")
        self._marks.mark_account(
            user, server
        )  # first: a crash between the two costs a query, never the tools
        return self._store.put(account)

    # ------------------------------------------------------------------------------------ tokens in use
    def current(self, user_id: int, server: str) -> Account | Disconnected | None:
        """The person's account at the server with an access token in its lifetime (refreshed now when it
        is past it), Disconnected when the refresh was refused, None when not connected. CannotConnect when
        the server cannot be reached to refresh."""
        account = self._store.get(user_id, server)
        if account is None or not account.expired(self._now()):
            return account
        return self.refresh(account)

    def refresh(self, account: Account) -> Account | Disconnected:
        """Refresh the account once (its access token expired, or the server answered 401). A rotated
        refresh token is kept only over the version refreshed; a refused refresh token that another turn
        has rotated meanwhile gives the newer account; only the newest refused disconnects the account.
        CannotConnect for anything else (the account is kept)."""
        user, server = account.user_id, account.server
        entry = self._entry(server)
        if entry is None:
            raise CannotConnect(f"{server} is no longer on the servers list")
        if account.refresh_token is None:
            return self._disconnect_refused(account, "the server gave no refresh token")
        discovery = self.discover(entry)
        data = {
            "grant_type": "refresh_token",
            "refresh_token": account.refresh_token,
            "resource": discovery.resource,
        }
        try:
            token = self._token(entry, discovery, data)
        except _Refused as refused:
            if refused.error != "invalid_grant":
                raise CannotConnect(f"{server} refused the refresh ({refused})") from None
            return self._disconnect_refused(account, "the server refused its refresh token")
        now = self._now()
        rotated = account._replace(
            access_token=token.access_token,
            refresh_token=token.refresh_token or account.refresh_token,
            expires_at=_expires_at(token, now),
            scope=token.scope or account.scope,
        )
        if self._store.replace(rotated, account.version):
            return rotated._replace(version=account.version + 1)
        kept = self._store.get(user, server)  # another turn refreshed first: its tokens are the kept ones
        return kept if kept is not None else Disconnected(user, server, "disconnected meanwhile")

    def _disconnect_refused(self, account: Account, reason: str) -> Account | Disconnected:
        """The account's refresh token was refused: a newer kept account (another turn rotated it) is used;
        else the account is removed."""
        kept = self._store.get(account.user_id, account.server)
        if kept is not None and kept.version != account.version:
            return kept
        if kept is not None and not self._store.delete(account.user_id, account.server, version=kept.version):
            newer = self._store.get(
                account.user_id, account.server
            )  # rotated between the read and the delete
            if newer is not None:
                return newer
        self._marks.unmark_account(account.user_id, account.server)
        logger.warning(f"account of user {account.user_id} at {account.server} disconnected: {reason}")
        return Disconnected(account.user_id, account.server, reason)

    def mark_connected(self, user_id: int, servers: Sequence[str]) -> None:
        """Mark the person's profile with the servers of accounts they have: `/accounts` does, so an account
        kept before profiles were marked (issue 41's first release) has its tools offered again."""
        for server in servers:
            self._marks.mark_account(user_id, server)

    # ------------------------------------------------------------------------------------- disconnecting
    def disconnect(self, user_id: int, server: str) -> bool:
        """Forget the person's account at the server, revoking its refresh and access tokens first when the
        server offers revocation (RFC 7009); a revocation that fails still forgets it here. False when there
        was no account."""
        account = self._store.get(user_id, server)
        if account is None:
            forgotten = self._store.delete(user_id, server)  # one that no longer opens is forgotten too
            self._marks.unmark_account(user_id, server)
            return forgotten
        entry = self._entry(server)
        try:
            if entry is not None:
                self._revoke(entry, account)
        except CannotConnect as problem:
            logger.warning(f"revoking the tokens of user {user_id} at {server} failed ({problem}); forgotten")
        self._store.delete(user_id, server)
        self._marks.unmark_account(user_id, server)
        logger.info(f"user {user_id} disconnected {server}")
        return True

    def _revoke(self, entry: ServerEntry, account: Account) -> None:
        discovery = self.discover(entry)
        endpoint = discovery.server.revocation_endpoint
        if endpoint is None:
            return
        client = self._client_for_tokens(entry, discovery)
        tokens = ((account.refresh_token, "refresh_token"), (account.access_token, "access_token"))
        for token, hint in tokens:
            if token is None:
                continue
            data, headers = _client_auth(client, {"token": token, "token_type_hint": hint})
            with self._post_form(str(endpoint), data, headers) as answer:
                if answer.status != 200:
                    logger.warning(f"{entry.name} answered {answer.status} to revoking a {hint}")

    # ------------------------------------------------------------------------------------------ discovery
    def discover(self, entry: ServerEntry) -> Discovery:
        """The server's resource and authorization server metadata (found once per container)."""
        known = self._discovered.get(entry.url)
        if known is not None:
            return known
        resource = resource_url_from_server_url(entry.url)
        resource_metadata = self._resource_metadata(entry)
        if resource_metadata is not None and not check_resource_allowed(
            resource, str(resource_metadata.resource)
        ):
            raise CannotConnect(
                f"its resource metadata is for another resource ({resource_metadata.resource})"
            )
        issuer = str(resource_metadata.authorization_servers[0]) if resource_metadata is not None else None
        server = self._server_metadata(entry, issuer)
        found = Discovery(resource, resource_metadata, server)
        self._discovered[entry.url] = found
        return found

    def _resource_metadata(self, entry: ServerEntry) -> ProtectedResourceMetadata | None:
        pointed = self._pointed_metadata(entry.url)
        for url in build_protected_resource_metadata_discovery_urls(pointed, entry.url):
            body = self._get_json(url)
            if body is None:
                continue
            try:
                return ProtectedResourceMetadata.model_validate(body)
            except ValidationError:
                logger.warning(f"{entry.name}: the protected resource metadata at {url} is not valid")
        return None

    def _pointed_metadata(self, url: str) -> str | None:
        """The `resource_metadata` of the 401 the server answers a request without a token with."""
        body = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}'
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        with self._send("POST", url, headers, body, stream=True) as answer:  # only its headers are read
            seen = httpx2.Response(answer.status, headers=dict(answer.headers))
        pointed = extract_resource_metadata_from_www_auth(seen)
        return pointed if pointed is not None and https_or_local(pointed) else None

    def _server_metadata(self, entry: ServerEntry, issuer: str | None) -> OAuthMetadata:
        for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, entry.url):
            body = self._get_json(url)
            if body is None:
                continue
            try:
                metadata = OAuthMetadata.model_validate(body)
            except ValidationError:
                raise CannotConnect(f"its authorization server metadata at {url} is not valid") from None
            _check_usable(metadata, issuer or _origin(entry.url))
            return metadata
        raise CannotConnect("it publishes no authorization server metadata")

    # --------------------------------------------------------------------------------------------- client
    def _client_for_sign_in(
        self, entry: ServerEntry, discovery: Discovery, redirect_uri: str, scope: str | None
    ) -> RegisteredClient:
        configured = self._configured_client(entry, discovery)
        if configured is not None:
            return configured
        kept = self._store.get_client(entry.name)
        issuer = str(discovery.server.issuer)
        if kept is not None and (kept.issuer, kept.redirect_uri, kept.scope) == (issuer, redirect_uri, scope):
            return kept
        return self._register(entry, discovery, redirect_uri, scope)

    def _client_for_tokens(self, entry: ServerEntry, discovery: Discovery) -> RegisteredClient:
        configured = self._configured_client(entry, discovery)
        if configured is not None:
            return configured
        kept = self._store.get_client(entry.name)
        if kept is None or not issuers_match(kept.issuer, str(discovery.server.issuer)):
            raise CannotConnect("Stepwise is not registered at its authorization server")
        return kept

    def _configured_client(self, entry: ServerEntry, discovery: Discovery) -> RegisteredClient | None:
        """The client the entry names (client_id_parameter), or None."""
        if entry.client_id_parameter is None:
            return None
        try:
            client_id = self._parameter(entry.client_id_parameter).strip()
            secret = self._parameter(entry.client_secret_parameter) if entry.client_secret_parameter else None
        except Exception as error:
            raise CannotConnect(f"its client parameters could not be read ({type(error).__name__})") from None
        supported = discovery.server.token_endpoint_auth_methods_supported
        if secret is None:
            method = "none"
        elif supported is None or "client_secret_basic" in supported:
            method = "client_secret_basic"
        else:
            method = "client_secret_post"
        issuer = str(discovery.server.issuer)
        return RegisteredClient(
            entry.name, issuer, client_id, secret and secret.strip(), method, "", None, ""
        )

    def _register(
        self, entry: ServerEntry, discovery: Discovery, redirect_uri: str, scope: str | None
    ) -> RegisteredClient:
        """Register Stepwise at the server (RFC 7591) and keep the client."""
        endpoint = discovery.server.registration_endpoint
        if endpoint is None:
            raise CannotConnect(
                "it offers no client registration (RFC 7591) and the entry names no client_id_parameter"
            )
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect_uri)],
            client_name=CLIENT_NAME,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=scope,
            application_type="web" if redirect_uri.startswith("https://") else "native",
        )
        body = metadata.model_dump_json(exclude_none=True).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        with self._send("POST", str(endpoint), headers, body) as answer:
            if answer.status not in (200, 201):
                raise CannotConnect(f"its client registration answered {answer.status}")
            try:
                raw = answer.json()
                if isinstance(raw, dict):
                    raw.pop("issuer", None)  # the SDK's own field, never the server's
                info = OAuthClientInformationFull.model_validate(raw)
            except ValueError:
                raise CannotConnect("its client registration gave no client") from None
        method = info.token_endpoint_auth_method or "client_secret_basic"  # RFC 7591's default
        if method not in AUTH_METHODS or (method != "none" and not info.client_secret):
            raise CannotConnect(f"its client registration gave an unusable client ({method})")
        client = RegisteredClient(
            server=entry.name,
            issuer=str(discovery.server.issuer),
            client_id=info.client_id,
            client_secret=info.client_secret if method != "none" else None,
            auth_method=method,
            redirect_uri=redirect_uri,
            scope=scope,
            registered_at=_iso(self._now()),
        )
        self._store.put_client(client)
        logger.info(f"registered at {entry.name}'s authorization server as client {client.client_id}")
        return client

    # ------------------------------------------------------------------------------------- token endpoint
    def _token(self, entry: ServerEntry, discovery: Discovery, data: dict[str, str]) -> OAuthToken:
        """A token request with the client's authentication; a registered client the server forgot
        (401 invalid_client) is registered once more and the request sent once more."""
        client = self._client_for_tokens(entry, discovery)
        try:
            return self._token_request(discovery, client, data)
        except _Refused as refused:
            if refused.error != "invalid_client" or entry.client_id_parameter is not None:
                raise
        logger.warning(
            f"{entry.name}'s authorization server forgot client {client.client_id}; registering again"
        )
        client = self._register(entry, discovery, client.redirect_uri, client.scope)
        return self._token_request(discovery, client, data)

    def _token_request(
        self, discovery: Discovery, client: RegisteredClient, data: dict[str, str]
    ) -> OAuthToken:
        form, headers = _client_auth(client, data)
        with self._post_form(str(discovery.server.token_endpoint), form, headers) as answer:
            if answer.status != 200:
                raise _Refused(_answered_error(answer), answer.status)
            try:
                return OAuthToken.model_validate_json(answer.body())
            except ValidationError:
                # The error's text would quote the answer, tokens and all.
                raise CannotConnect("its token endpoint's answer is not a token response") from None

    # ----------------------------------------------------------------------------------------------- HTTP
    def _post_form(self, url: str, data: Mapping[str, str], headers: Mapping[str, str]) -> Response:
        sent = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json", **headers}
        return self._send("POST", url, sent, urlencode(data).encode())

    def _get_json(self, url: str) -> Any:
        """The JSON of a 200 answer, or None (another status, or not JSON)."""
        if not https_or_local(url):
            return None
        headers = {"Accept": "application/json", "MCP-Protocol-Version": PROTOCOL_VERSION}
        with self._send("GET", url, headers, None) as answer:
            if answer.status != 200:
                return None
            try:
                return answer.json()
            except ValueError:
                return None

    def _send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, *, stream: bool = False
    ) -> Response:
        if not https_or_local(url):
            raise CannotConnect(f"{urlsplit(url).scheme}:// is refused: only https (or http to this machine)")
        try:
            return self._http.request(
                method,
                url,
                headers=headers,
                body=body,
                connect_timeout=CONNECT_SECONDS,
                read_timeout=READ_SECONDS,
                stream=stream,
            )
        except (HTTPError, LocationValueError) as error:
            raise CannotConnect(f"{urlsplit(url).netloc} is unreachable ({type(error).__name__})") from None

    def _entry(self, server: str) -> ServerEntry | None:
        return next((e for e in self._servers() if e.name == server and e.auth == "oauth"), None)


def _check_usable(metadata: OAuthMetadata, expected_issuer: str) -> None:
    """CannotConnect unless the authorization server is the one expected and offers the code flow with PKCE
    S256 at https endpoints (http only on this machine)."""
    if not issuers_match(str(metadata.issuer), expected_issuer):
        raise CannotConnect(f"its authorization server names itself {metadata.issuer}, not {expected_issuer}")
    if "code" not in metadata.response_types_supported:
        raise CannotConnect("its authorization server offers no authorization code flow")
    if (
        metadata.grant_types_supported is not None
        and "authorization_code" not in metadata.grant_types_supported
    ):
        raise CannotConnect("its authorization server offers no authorization code grant")
    if "S256" not in (metadata.code_challenge_methods_supported or []):
        raise CannotConnect("its authorization server does not offer PKCE with S256")
    endpoints = (
        metadata.authorization_endpoint,
        metadata.token_endpoint,
        metadata.registration_endpoint,
        metadata.revocation_endpoint,
    )
    if not all(https_or_local(str(url)) for url in endpoints if url is not None):
        raise CannotConnect("its authorization server's endpoints are not all https")


def _client_auth(client: RegisteredClient, data: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The form and headers of a request to the token or revocation endpoint, with the client's
    authentication (RFC 6749 2.3.1): HTTP Basic, the secret in the form, or the client id alone."""
    form = {**data, "client_id": client.client_id}
    if client.client_secret is None or client.auth_method == "none":
        return form, {}
    if client.auth_method == "client_secret_post":
        return form | {"client_secret": client.client_secret}, {}
    pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
    return form, {"Authorization": f"Basic {base64.b64encode(pair.encode()).decode()}"}


def _scope(entry: ServerEntry, discovery: Discovery) -> str | None:
    """The entry's scopes, else the resource's scopes_supported, else none."""
    if entry.scopes:
        return " ".join(entry.scopes)
    supported = discovery.resource_metadata.scopes_supported if discovery.resource_metadata else None
    return " ".join(supported) if supported else None


def _answered_error(answer: Response) -> str:
    """The OAuth `error` of an error answer (a known shape only: nothing else of the body is repeated)."""
    try:
        error = answer.json().get("error")
    except (ValueError, AttributeError):
        return "an error"
    return _error_code(error)


def _error_code(error: object) -> str:
    return error if isinstance(error, str) and _ERROR_CODE.match(error) else "an error"


def _expires_at(token: OAuthToken, now: float) -> int | None:
    return int(now) + token.expires_in if token.expires_in is not None else None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _iso(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
