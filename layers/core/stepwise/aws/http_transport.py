"""HTTP for the Bot API, Messages API and speech-to-text clients, over urllib3.

urllib3 is botocore's own HTTP library: a function has loaded it by the time it made its first boto3 client,
so speaking HTTP through it adds no dependency (`requests`, on top of urllib3, would add charset_normalizer,
http.cookiejar, idna and its own modules).

Each client holds one `HttpTransport`; its connection pool is made on first use and kept across warm
invocations. Certificates are checked against certifi's bundle, as `requests` checks them. Nothing is
retried and no redirect is followed here: each client retries by its own rules.
"""

from __future__ import annotations

import json
import threading
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, Self

import certifi
import urllib3
from urllib3.exceptions import LocationValueError
from urllib3.fields import RequestField
from urllib3.filepost import encode_multipart_formdata
from urllib3.util import make_headers, parse_url
from urllib3.util.ssl_ import create_urllib3_context

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterator, Mapping
    from types import TracebackType

# Connections kept open per host: as many as requests keeps.
POOL_SIZE = 10
# The encodings urllib3 can decode, offered as requests offers them.
DEFAULT_HEADERS = make_headers(accept_encoding=True)


class Pool(Protocol):
    """The part of `urllib3.PoolManager` the transport uses (the unit tests give it a scripted one)."""

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> urllib3.BaseHTTPResponse:
        """Send one request and return its response."""
        ...


class Response:
    """An answer: its status and headers, and its body, read whole or, when streamed, as it arrives.

    `close` (or leaving a ``with`` block) gives the connection back to the pool when the body was read to
    its end, and closes it otherwise, so a half-read answer never lingers on a reused connection.
    """

    def __init__(self, raw: urllib3.BaseHTTPResponse) -> None:
        self._raw = raw
        self.status: int = raw.status
        self.headers: Mapping[str, str] = raw.headers

    def body(self) -> bytes:
        """The whole body (read now, when the answer is streamed)."""
        return self._raw.data

    def json(self) -> Any:
        """The body parsed as JSON; ValueError when it is not JSON."""
        return json.loads(self.body())

    def chunks(self, size: int | None) -> Iterator[bytes]:
        """The body as it arrives: pieces of up to `size` bytes, or each chunk of a chunked answer as the
        server sent it (`size` None)."""
        return self._raw.stream(size)

    def close(self) -> None:
        """Give the connection back to the pool, or close it when the body was not read to its end."""
        if not self._raw.closed:
            self._raw.close()
        self._raw.release_conn()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class HttpTransport:
    """One client's HTTP: a urllib3 pool made on first use (or the one given), and its requests."""

    def __init__(self, pool: Pool | None = None) -> None:
        self._pool = pool
        self._lock = threading.Lock()  # a warm-up thread and the handler may make the first request at once

    def pool(self) -> Pool:
        """The connection pool (made now, if this is its first use)."""
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = urllib3.PoolManager(
                        maxsize=POOL_SIZE, ssl_context=verified_tls_context(), retries=False
                    )
        return self._pool

    def request(
        self,
        method: str,
        url: str,
        *,
        connect_timeout: float,
        read_timeout: float,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send one request. A streamed answer's body is read as it arrives (`Response.chunks`), else it is
        read before this returns. Failures are urllib3's exceptions, raised as they happen: connecting
        (`NewConnectionError`, `ConnectTimeoutError`), waiting (`ReadTimeoutError`), a dropped connection
        (`ProtocolError`); a URL that is not http(s) is `LocationValueError`."""
        if parse_url(url).scheme not in ("http", "https"):
            raise LocationValueError("the URL must start with http:// or https://")
        sent = urllib3.HTTPHeaderDict(DEFAULT_HEADERS)
        for name, value in (headers or {}).items():
            sent[name] = value
        raw = self.pool().urlopen(
            method,
            url,
            body=body,
            headers=sent,
            timeout=urllib3.Timeout(connect=connect_timeout, read=read_timeout),
            retries=False,
            redirect=False,
            preload_content=not stream,
        )
        return Response(raw)


def json_body(value: Any) -> tuple[bytes, dict[str, str]]:
    """A JSON request body and its content type (UTF-8, NaN refused), as `requests` sends `json=`."""
    return json.dumps(value, allow_nan=False).encode(), {"Content-Type": "application/json"}


def form_body(
    fields: Mapping[str, str], files: Mapping[str, tuple[str, bytes, str]]
) -> tuple[bytes, dict[str, str]]:
    """A multipart/form-data body and its content type: the text fields, then each file (field name:
    (file name, bytes, content type))."""
    parts = [(name, value) for name, value in fields.items()]
    uploads = []
    for name, (file_name, data, content_type) in files.items():
        upload = RequestField(name=name, data=data, filename=file_name)
        upload.make_multipart(content_type=content_type)
        uploads.append(upload)
    body, content_type = encode_multipart_formdata([*parts, *uploads])
    return body, {"Content-Type": content_type}


@cache
def verified_tls_context() -> ssl.SSLContext:
    """The TLS context every pool shares: certificates and host names checked, against certifi's bundle,
    which is read once per process (not once per connection)."""
    context = create_urllib3_context()
    context.load_verify_locations(certifi.where())
    return context
