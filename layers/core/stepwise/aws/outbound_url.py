"""Where a configured service URL may point: https anywhere, plain http to this machine only, and never a URL
that two parsers read differently.

`http://192.0.2.2:8099\\@localhost` is a request to 192.0.2.2 for urllib3 (which sends the speech-to-text
requests) and to localhost for `urllib.parse`; httpx (the MCP client's) has its own reading again. So a
backslash, and a user-info part as any of them splits it, are refused outright, and the host is checked as
urllib3 reads it.
"""

from urllib.parse import urlsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})  # as urllib3 writes them


def backslash_or_user_info(url: str) -> bool:
    """A backslash anywhere, or an `@` in the authority as either parser splits it."""
    if "\\" in url:
        return True
    try:
        return parse_url(url).auth is not None or "@" in urlsplit(url).netloc
    except (LocationParseError, ValueError):
        return False  # `https_or_local` refuses it


def https_or_local(url: str) -> bool:
    """https to any host, or http to this machine only, as urllib3 reads the URL."""
    try:
        parts = parse_url(url)
    except LocationParseError:
        return False
    if parts.scheme == "https":
        return bool(parts.host)
    return parts.scheme == "http" and parts.host in LOCAL_HOSTS
