"""The Messages API's content blocks, messages and tool definitions, as Stepwise writes and reads them.

TypedDicts named after the anthropic SDK's request types (`TextBlock` is its `TextBlockParam`, `MessageParam`
its `MessageParam`...), with the fields of theirs that Stepwise uses; tests/contract validates what the code
builds with the SDK's own types. A model step's blocks go back to the API in later requests exactly as they
came: the web tools' blocks keep every field the API gave, beyond those named here.

Stored blocks (a turn record's `ModelStep`) are validated as JSON objects only (`AsJsonObjects`): a turn
record written before these types, or a block of a type named nowhere here, reads and is written back
unchanged, and no state pays for checking a union of TypedDicts per block. What goes in is checked where it
is made: the Messages client keeps only the blocks below (`stepwise.model.messages_api`), and the rules model,
the tool results and the prompt build them typed.
"""

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from pydantic import GetPydanticSchema


class CacheControl(TypedDict):
    """A cache breakpoint (the SDK's CacheControlEphemeralParam)."""

    type: Literal["ephemeral"]


class Citation(TypedDict, total=False):
    """What a text block cites. The API has several kinds (`type`); Stepwise reads only a web search
    result's `url` and `title` (the SDK's CitationWebSearchResultLocationParam)."""

    type: str
    cited_text: str
    url: str
    title: str | None


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    citations: NotRequired[list[Citation]]
    cache_control: NotRequired[CacheControl]


class ToolUseBlock(TypedDict):
    """A call of one of Stepwise's tools; `input` is what the model gave (the tool's model checks it)."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    """The answer to a tool_use block (Stepwise's are text, and always say whether they failed)."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: bool
    cache_control: NotRequired[CacheControl]


class ServerToolUseBlock(TypedDict):
    """A call of a tool the API runs itself (web search, web fetch)."""

    type: Literal["server_tool_use"]
    id: str
    name: str
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl]


class WebSearchResult(TypedDict):
    type: Literal["web_search_result"]
    url: str
    title: str
    encrypted_content: str
    page_age: NotRequired[str | None]


class WebSearchToolResultError(TypedDict):
    type: Literal["web_search_tool_result_error"]
    error_code: str


class WebSearchToolResultBlock(TypedDict):
    type: Literal["web_search_tool_result"]
    tool_use_id: str
    content: list[WebSearchResult] | WebSearchToolResultError
    cache_control: NotRequired[CacheControl]


class Base64Source(TypedDict):
    """A file's bytes in base64 (the SDK's Base64ImageSourceParam and Base64PDFSourceParam)."""

    type: Literal["base64"]
    media_type: str
    data: str


class PlainTextSource(TypedDict):
    type: Literal["text"]
    media_type: Literal["text/plain"]
    data: str


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: Base64Source
    cache_control: NotRequired[CacheControl]


class DocumentBlock(TypedDict):
    type: Literal["document"]
    source: Base64Source | PlainTextSource
    title: NotRequired[str | None]
    cache_control: NotRequired[CacheControl]


class WebFetchResult(TypedDict):
    """A fetched page (the SDK's WebFetchBlockParam)."""

    type: Literal["web_fetch_result"]
    url: str
    content: DocumentBlock
    retrieved_at: NotRequired[str | None]


class WebFetchToolResultError(TypedDict):
    type: Literal["web_fetch_tool_result_error"]
    error_code: str


class WebFetchToolResultBlock(TypedDict):
    type: Literal["web_fetch_tool_result"]
    tool_use_id: str
    content: WebFetchResult | WebFetchToolResultError
    cache_control: NotRequired[CacheControl]


ServerBlock = ServerToolUseBlock | WebSearchToolResultBlock | WebFetchToolResultBlock
"""The web tools' blocks: sent back exactly as received."""

ResponseBlock = TextBlock | ToolUseBlock | ServerBlock
"""What a model step holds: the blocks of a response that a later request may send back."""

FileBlock = ImageBlock | DocumentBlock
"""A photo or document the model reads (`stepwise.media.render`)."""

ContentBlock = ResponseBlock | ToolResultBlock | FileBlock
"""A block of a request's message (the SDK's ContentBlockParam, the kinds Stepwise sends)."""

Role = Literal["user", "assistant"]


class MessageParam(TypedDict):
    """One message of a request (Stepwise's content is always a list of blocks, never a bare string)."""

    role: Role
    content: list[ContentBlock]


class ToolParam(TypedDict):
    """A tool of Stepwise's own (or of an outside MCP server) as the model is offered it (no `type`: the
    API's default, "custom")."""

    type: NotRequired[Literal["custom"]]
    name: str
    description: str
    input_schema: dict[str, Any]


class WebDomains(TypedDict, total=False):
    """Where the web tools may go (one of the two, or neither)."""

    allowed_domains: list[str]
    blocked_domains: list[str]


class WebSearchToolParam(WebDomains):
    type: Literal["web_search_20250305"]
    name: Literal["web_search"]
    max_uses: int


class WebCitations(TypedDict):
    enabled: bool


class WebFetchToolParam(WebDomains):
    type: Literal["web_fetch_20250910"]
    name: Literal["web_fetch"]
    max_uses: int
    citations: WebCitations
    max_content_tokens: int


ToolDefinition = ToolParam | WebSearchToolParam | WebFetchToolParam
"""An entry of a request's `tools`."""


class ToolChoiceNone(TypedDict):
    """The only tool choice Stepwise makes: no tools (the last call of a turn at its tool-round limit)."""

    type: Literal["none"]


AsJsonObjects = GetPydanticSchema(lambda _type, handler: handler(list[dict[str, Any]]))
"""Pydantic validates and serializes a list of blocks as plain JSON objects (see the module docstring):
`Annotated[list[TextBlock], AsJsonObjects]` is typed for mypy, checked as a list of objects at runtime."""

AsJsonObjectMap = GetPydanticSchema(lambda _type, handler: handler(dict[str, dict[str, Any]]))
"""The same for a mapping of blocks by key."""

StoredBlocks = Annotated[list[ResponseBlock], AsJsonObjects]
StoredResults = Annotated[list[ToolResultBlock], AsJsonObjects]
