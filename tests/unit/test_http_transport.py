"""The HTTP transport of the Bot API, Messages API and speech-to-text clients (urllib3, no sockets here): its
pool, the options of each request, its bodies, its streamed answers, and that a plain turn never loads
`requests`."""

from __future__ import annotations

import http.client
import io
import ssl
from typing import Any

import certifi
import pytest
import urllib3
from support.fresh_python import run_fresh
from support.scripted_http import Canned, ScriptedPool
from urllib3.exceptions import LocationValueError, ProtocolError

from stepwise.aws import http_transport
from stepwise.aws.http_transport import HttpTransport, Response, form_body, json_body
from stepwise_local.fake_speech import parse_multipart


def test_a_plain_turns_functions_and_clients_never_load_requests() -> None:
    # Given a fresh interpreter (other tests' imports cannot hide anything there)
    code = """
import importlib.util, sys
for function in ("call_model", "finish_turn", "request_approval"):
    spec = importlib.util.spec_from_file_location(f"{function}_app", f"functions/{function}/app.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
import stepwise.telegram.client, stepwise.model.messages_api
from stepwise.telegram.client import BotApiClient
from stepwise.model.messages_api import MessagesApiModel
BotApiClient("1:token")._http.pool()
MessagesApiModel("key", None, 5.0, 0)._http.pool()
print(sorted(name for name in sys.modules if name.split(".")[0] in ("requests", "charset_normalizer")))
print("urllib3" in sys.modules)
"""
    # When the three functions' handlers are imported and the clients make their pools
    out = run_fresh(code, timeout=120)
    # Then neither requests nor its charset detection was loaded (urllib3 was)
    assert out.split("\n")[:2] == ["[]", "True"]


def test_the_pool_is_made_on_first_use_once_verifying_certificates_against_certifi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a transport without a pool of its own
    made: list[dict[str, Any]] = []
    real = urllib3.PoolManager

    def pool_manager(**options: Any) -> urllib3.PoolManager:
        made.append(options)
        return real(**options)

    monkeypatch.setattr(http_transport.urllib3, "PoolManager", pool_manager)
    transport = HttpTransport()
    assert made == []
    # When its pool is asked for twice
    pool = transport.pool()
    assert transport.pool() is pool
    # Then one pool was made: no retries of its own, certificates and host names checked against certifi's
    assert len(made) == 1 and made[0]["retries"] is False and made[0]["maxsize"] == 10
    context: ssl.SSLContext = made[0]["ssl_context"]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    bundle = ssl.create_default_context(cafile=certifi.where())
    assert context.cert_store_stats()["x509_ca"] == bundle.cert_store_stats()["x509_ca"] > 0
    # And every transport shares that context (the bundle is read once per process)
    assert HttpTransport().pool() is not pool
    assert made[1]["ssl_context"] is context


def test_each_request_goes_out_once_with_its_timeouts_and_is_read_whole_unless_streamed() -> None:
    # Given a transport over a scripted pool
    pool = ScriptedPool([(200, {"ok": True}), Canned(200, chunks=[b"ab", b"cd"])])
    transport = pool.transport()
    # When a JSON answer and a streamed one are asked for
    with transport.request(
        "POST", "https://api.example/x", connect_timeout=2, read_timeout=7, headers={"X-One": "1"}, body=b"{}"
    ) as answer:
        assert (answer.status, answer.json(), answer.headers["content-type"]) == (
            200,
            {"ok": True},
            "application/json",
        )
    with transport.request(
        "GET", "http://api.example/y", connect_timeout=1, read_timeout=3, stream=True
    ) as got:
        assert list(got.chunks(None)) == [b"ab", b"cd"]
    # Then urllib3 neither retried nor followed redirects, with (connect, read) time-outs, and read the first
    # answer before returning and the second as it came
    first, second = pool.requests
    assert (first.method, first.url, first.body, first.headers["X-One"]) == (
        "POST",
        "https://api.example/x",
        b"{}",
        "1",
    )
    assert all(
        sent.options["retries"] is False and sent.options["redirect"] is False for sent in pool.requests
    )
    assert pool.timeouts == [(2, 7), (1, 3)]
    assert (first.options["preload_content"], second.options["preload_content"]) == (True, False)
    # And each offered the encodings urllib3 decodes, as requests did
    assert "gzip" in first.headers["Accept-Encoding"] and "deflate" in first.headers["Accept-Encoding"]


@pytest.mark.parametrize("url", ["api.example/x", "ftp://api.example/x", "/bot1:token/getMe"])
def test_a_url_that_is_not_http_is_refused_before_the_pool(url: str) -> None:
    pool = ScriptedPool([])
    with pytest.raises(LocationValueError):
        pool.transport().request("GET", url, connect_timeout=1, read_timeout=1)
    assert pool.requests == []


def test_bodies_are_json_and_multipart_form_data() -> None:
    # When a JSON body and a form with a file are made
    data, headers = json_body({"text": "crème", "n": 1})
    form, form_headers = form_body({"chat_id": "5"}, {"voice": ("reply.ogg", b"OggS\x00", "audio/ogg")})
    # Then the JSON is UTF-8 with its content type, as requests sent it
    assert (data, headers) == (b'{"text": "cr\\u00e8me", "n": 1}', {"Content-Type": "application/json"})
    with pytest.raises(ValueError):
        json_body({"x": float("nan")})
    # And the form holds the field and the file, with its name and type
    fields = parse_multipart(form_headers["Content-Type"], form)
    assert fields["chat_id"].text == "5"
    assert (fields["voice"].data, fields["voice"].file_name, fields["voice"].content_type) == (
        b"OggS\x00",
        "reply.ogg",
        "audio/ogg",
    )


def test_a_chunked_answer_cut_short_breaks_off_as_a_dropped_connection() -> None:
    pool = ScriptedPool([Canned(200, chunks=[b"first"], broken=True)])
    response = pool.transport().request(
        "GET", "https://api.example/", connect_timeout=1, read_timeout=1, stream=True
    )
    chunks = response.chunks(None)
    assert next(chunks) == b"first"
    with pytest.raises(ProtocolError):
        next(chunks)


class _Connection:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _ConnectionPool:
    def __init__(self) -> None:
        self.returned: list[_Connection] = []

    def _put_conn(self, connection: _Connection) -> None:
        self.returned.append(connection)


def streamed(answer: Canned) -> tuple[Response, _ConnectionPool, _Connection]:
    """A streamed answer holding its connection, as urllib3 hands one out before its body is read."""
    parsed = http.client.HTTPResponse(_Socket(answer.wire()), method="GET")  # type: ignore[arg-type]
    parsed.begin()
    pool, connection = _ConnectionPool(), _Connection()
    raw = urllib3.HTTPResponse(
        body=parsed,
        headers=urllib3.HTTPHeaderDict(parsed.getheaders()),
        status=parsed.status,
        preload_content=False,
        original_response=parsed,
        pool=pool,  # type: ignore[arg-type]
        connection=connection,  # type: ignore[arg-type]
    )
    return Response(raw), pool, connection


class _Socket:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> io.BytesIO:
        return io.BytesIO(self._data)


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_a_connection_read_to_the_end_goes_back_to_the_pool_and_a_half_read_one_is_closed(
    chunked: bool,
) -> None:
    body = b"x" * 100
    answer = Canned(200, chunks=[body[:50], body[50:]]) if chunked else Canned(200, body)
    # Given an answer read to its end, and the same answer of which only the first piece was read
    whole, whole_pool, whole_connection = streamed(answer)
    assert b"".join(whole.chunks(None)) == body
    half, _, half_connection = streamed(answer)
    pieces = half.chunks(50)
    assert next(pieces) == body[:50]
    # When each is closed
    whole.close()
    half.close()
    # Then the first connection went back to the pool open, and the second was closed
    assert whole_pool.returned == [whole_connection] and not whole_connection.closed
    assert half_connection.closed
