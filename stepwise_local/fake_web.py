"""The fake Messages API's web tools: answers shaped as the real API shapes web search and web fetch.

A scripted answer (`web_search`, `web_fetch`) carries what the API would put in the response: a
`server_tool_use` block, its `web_search_tool_result` (results with `encrypted_content`) or
`web_fetch_tool_result` (the page as a document), then text blocks whose `citations` point at what they
used, and `usage.server_tool_use` with the number of searches and fetches. The server checks the requests as
the real API does (`check_server_tools`, `check_resent`): server tool definitions, never both domain lists,
the web fetch beta header, and server tool blocks sent back byte for byte as they were given out.

The results are made up by the test that scripts them (no request leaves the machine); `local_results` gives a
small fixed set for an unscripted search.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

SERVER_TOOL_TYPES = {"web_search_20250305": "web_search", "web_fetch_20250910": "web_fetch"}
WEB_FETCH_BETA = "web-fetch-2025-09-10"
SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})
SEARCH_WORDS = ("search", "look up", "weather", "news", "latest")

_ids = itertools.count(1)


def _opaque(text: str) -> str:
    """Stands in for the API's encrypted fields: opaque, stable for the same input."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest() + text.encode()[:48]).decode()


def search_blocks(query: str, results: Sequence[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The `server_tool_use` and `web_search_tool_result` of one search; `results` are (url, title, text)."""
    use_id = f"srvtoolu_{next(_ids):06d}"
    return [
        {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": use_id,
            "content": [
                {
                    "type": "web_search_result",
                    "url": url,
                    "title": title,
                    "encrypted_content": _opaque(page),
                    "page_age": "November 20, 2026",
                }
                for url, title, page in results
            ],
        },
    ]


def search_citation(url: str, title: str, cited_text: str) -> dict[str, Any]:
    """A `web_search_result_location` citation, as a text block carries it."""
    return {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "encrypted_index": _opaque(url + cited_text),
        "cited_text": cited_text,
    }


def fetch_blocks(url: str, title: str, page: str) -> list[dict[str, Any]]:
    """The `server_tool_use` and `web_fetch_tool_result` of one fetch: the page as a text document."""
    use_id = f"srvtoolu_{next(_ids):06d}"
    return [
        {"type": "server_tool_use", "id": use_id, "name": "web_fetch", "input": {"url": url}},
        {
            "type": "web_fetch_tool_result",
            "tool_use_id": use_id,
            "content": {
                "type": "web_fetch_result",
                "url": url,
                "retrieved_at": "2026-11-25T08:00:00Z",
                "content": {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": page},
                    "title": title,
                    "citations": {"enabled": True},
                },
            },
        },
    ]


def local_results(query: str) -> list[tuple[str, str, str]]:
    """A small fixed set of made-up results for an unscripted search (a test that does not script one)."""
    slug = "-".join(query.lower().split())[:40] or "search"
    return [
        (
            f"https://example.com/{slug}",
            f"Example result about {query}",
            f"What example.com says about {query}.",
        ),
        (f"https://example.org/{slug}", f"Another view on {query}", f"What example.org says about {query}."),
    ]


def wants_search(text: str) -> bool:
    """Whether an unscripted message asks for something the fake answers with a search."""
    lowered = text.lower()
    return any(word in lowered for word in SEARCH_WORDS)


def offered(request: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The server tools a request offers, by name."""
    return {
        SERVER_TOOL_TYPES[tool["type"]]: tool
        for tool in request.get("tools") or []
        if tool.get("type") in SERVER_TOOL_TYPES
    }


def check_server_tools(request: Mapping[str, Any], betas: str) -> str | None:
    """Why the API would refuse the request's server tool definitions, or None."""
    for index, tool in enumerate(request.get("tools") or []):
        kind = tool.get("type")
        if kind is None or kind == "custom":
            continue
        where = f"tools.{index}"
        if kind not in SERVER_TOOL_TYPES:
            return f"{where}.type: unknown tool type {kind!r}"
        if tool.get("name") != SERVER_TOOL_TYPES[kind]:
            return f"{where}.name: must be {SERVER_TOOL_TYPES[kind]!r}"
        if tool.get("allowed_domains") and tool.get("blocked_domains"):
            return f"{where}: cannot use both allowed_domains and blocked_domains"
        max_uses = tool.get("max_uses")
        if max_uses is not None and (not isinstance(max_uses, int) or max_uses < 1):
            return f"{where}.max_uses: must be a positive integer"
        if kind == "web_fetch_20250910" and WEB_FETCH_BETA not in betas:
            return f"{where}: web_fetch_20250910 needs the anthropic-beta header {WEB_FETCH_BETA}"
    return None


def uses_of(content: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of the server tools an answer uses."""
    return [str(block["name"]) for block in content if block.get("type") == "server_tool_use"]


def server_usage(content: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """`usage.server_tool_use` of an answer: its searches and fetches."""
    names = uses_of(content)
    return {"web_search_requests": names.count("web_search"), "web_fetch_requests": names.count("web_fetch")}


def block_key(block: Mapping[str, Any]) -> str | None:
    """The id a server tool block is known by (its own, or the use it answers), or None for other blocks."""
    if block.get("type") not in SERVER_BLOCK_TYPES:
        return None
    return f"{block['type']}:{block.get('id') or block.get('tool_use_id')}"


def canonical(block: Mapping[str, Any]) -> str:
    """A block's JSON without `cache_control` (which a client may add), to compare with what was given out."""
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def check_resent(request: Mapping[str, Any], given: Mapping[str, str]) -> str | None:
    """Why the API would refuse server tool blocks sent back changed (or made up), or None."""
    for index, message in enumerate(request.get("messages") or []):
        content = message.get("content")
        for position, block in enumerate(content if isinstance(content, list) else []):
            key = block_key(block)
            if key is None:
                continue
            where = f"messages.{index}.content.{position}"
            if message.get("role") != "assistant":
                return f"{where}: {block['type']} blocks belong in assistant messages"
            if given.get(key) != canonical(block):
                return f"{where}: {block['type']} must be sent back exactly as the API returned it"
    return None
