"""Anthropic's web server tools (web search, web fetch): their definitions, and the sources an answer cited.

The API runs these tools itself: a response carries `server_tool_use` and `web_search_tool_result` /
`web_fetch_tool_result` blocks, and text blocks whose `citations` point at what they used. Those blocks are
sent back exactly as received within a turn (see `stepwise.model.messages_api`); the turn's reply gets the
sources as numbered Markdown links after its text (`with_sources`).
"""

from collections.abc import Sequence
from typing import Final, NamedTuple
from urllib.parse import quote

from stepwise.model.blocks import (
    ResponseBlock,
    ToolDefinition,
    WebDomains,
    WebFetchToolParam,
    WebSearchToolParam,
)

WEB_SEARCH_TOOL: Final = "web_search_20250305"
WEB_FETCH_TOOL: Final = "web_fetch_20250910"
WEB_FETCH_BETA = "web-fetch-2025-09-10"
# A fetched page's text is capped so that a model step (kept whole in one DynamoDB item of at most 400 KB)
# stays far below the limit.
WEB_FETCH_MAX_CONTENT_TOKENS = 20_000
SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})
MAX_SOURCES = 8
MAX_TITLE_CHARS = 80


class WebAccess(NamedTuple):
    """What the owner turned on (`WEB_SEARCH`, `WEB_FETCH`) and its limits."""

    search: bool = False
    fetch: bool = False
    max_uses: int = 5
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.search or self.fetch

    def server_tools(self) -> list[ToolDefinition]:
        """The server tool definitions, in a fixed order with fixed keys (they are part of the cached prefix:
        they go after the client tools, and are byte-identical from call to call)."""
        domains: WebDomains = {}
        if self.allowed_domains:
            domains["allowed_domains"] = list(self.allowed_domains)
        elif self.blocked_domains:
            domains["blocked_domains"] = list(self.blocked_domains)
        tools: list[ToolDefinition] = []
        if self.search:
            search: WebSearchToolParam = {
                "type": WEB_SEARCH_TOOL,
                "name": "web_search",
                "max_uses": self.max_uses,
                **domains,
            }
            tools.append(search)
        if self.fetch:
            fetch: WebFetchToolParam = {
                "type": WEB_FETCH_TOOL,
                "name": "web_fetch",
                "max_uses": self.max_uses,
                **domains,
                "citations": {"enabled": True},
                "max_content_tokens": WEB_FETCH_MAX_CONTENT_TOKENS,
            }
            tools.append(fetch)
        return tools


def uses_web_fetch(tools: Sequence[ToolDefinition]) -> bool:
    """Whether a request offers web fetch (which needs its beta header)."""
    return any(tool.get("type") == WEB_FETCH_TOOL for tool in tools)


def cited_sources(content: Sequence[ResponseBlock]) -> list[tuple[str, str]]:
    """(url, title) of what an answer drew on, first use first, each URL once: the search results its text
    cites, then the pages it fetched."""
    seen: dict[str, str] = {}
    for block in content:
        if block["type"] != "text":
            continue
        for citation in block.get("citations") or []:
            url = citation.get("url") or ""
            if url.startswith(("https://", "http://")) and url not in seen:
                seen[url] = citation.get("title") or ""
    for block in content:
        if block["type"] != "web_fetch_tool_result":
            continue
        result = block["content"]
        if result["type"] == "web_fetch_result" and result["url"].startswith(("https://", "http://")):
            seen.setdefault(result["url"], result["content"].get("title") or "")
    return list(seen.items())[:MAX_SOURCES]


def with_sources(text: str, content: Sequence[ResponseBlock]) -> str:
    """The answer's text followed by its sources as numbered Markdown links (none: the text unchanged)."""
    sources = cited_sources(content)
    if not sources:
        return text
    lines = [
        f"{index}. [{_title(title, url)}]({_safe_url(url)})" for index, (url, title) in enumerate(sources, 1)
    ]
    return f"{text}\n\nSources:\n" + "\n".join(lines)


def _title(title: str, url: str) -> str:
    """A link text without Markdown's brackets and markup, short enough for a line."""
    words = "".join(" " if char in "[]()*_`<>\\" else char for char in title)
    plain = " ".join(words.split()) or url.split("//", 1)[-1].split("/", 1)[0] or "link"
    return plain if len(plain) <= MAX_TITLE_CHARS else plain[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def _safe_url(url: str) -> str:
    """The URL with whatever would end a Markdown link or break an HTML attribute percent-encoded."""
    return quote(url, safe=":/?#@!$&+,;=%-._~")
