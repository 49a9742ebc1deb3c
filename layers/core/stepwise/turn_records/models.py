"""What a turn keeps between its states (the state machine itself carries only ids and counters)."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.inbox.outside_call import OutsideCall

ReplySource = Literal[
    "model",
    "fallback",
    "error",
    "reminder",
    "notice",
    "budget",
    "command",
    "outside_call",
    "job_report",  # a chat's turn showing a background job's report
    "job_timeout",  # a job that reached its deadline: what it did
    "job_not_done",  # a job whose model said it cannot do its task: why
]


class JobBrief(BaseModel):
    """What a background job's own turn knows of the job (the record is in the jobs' store)."""

    model_config = ConfigDict(defer_build=True)

    number: int
    title: str
    task: str
    deadline: str = Field(description="ISO 8601 UTC")


class CheckinBrief(BaseModel):
    """The check-in a turn carries out (a scheduled instruction run as a full turn)."""

    model_config = ConfigDict(defer_build=True)

    number: int | None = Field(default=None, description="the check-in's number (its reminder id)")
    text: str


class Memory(BaseModel):
    """A recalled memory as the prompt shows it."""

    model_config = ConfigDict(defer_build=True)

    id: str
    text: str


class TurnMeta(BaseModel):
    """The turn's identity and the history window its model calls see."""

    model_config = ConfigDict(defer_build=True)

    turn_id: str
    chat_id: int
    user_id: int
    update_id: int
    user_message_id: str
    first_key: str = Field(description="sort key of the oldest message in the context window")
    last_key: str = Field(description="sort key of the newest message in the context window (the user's)")
    history_cached: bool = Field(
        default=True,
        description="whether the prompt marks the history for prompt caching (see stepwise.prompt.caching)",
    )
    stable_prefix_tokens: int = Field(
        default=0,
        description="the chat's tools and system prompt in tokens, as LoadContext found it (0: unknown)",
    )
    created_at: str
    model_override: str | None = Field(
        default=None,
        description='"rules" once the turn fell back offline; "command" for a slash command the rules handle',
    )
    fallback_decisions: int = Field(default=0, description="how often UseFallback switched this turn over")
    summary: str = Field(default="", description="the chat's rolling summary when the turn began")
    memories: list[Memory] = Field(default_factory=list, description="memories recalled for this message")
    timezone: str = Field(default="UTC", description="the user's IANA time zone when the turn began")
    timezone_set: bool = Field(default=False, description="whether the user chose it (else the default)")
    reminder: str | None = Field(default=None, description="the text of the reminder this turn delivers")
    checkin: CheckinBrief | None = Field(default=None, description="the check-in this turn carries out")
    notices: list[str] = Field(
        default_factory=list, description="what the user is told about files the model does not get"
    )
    notices_only: bool = Field(default=False, description="every message of the turn is such a file")
    command: str | None = Field(default=None, description="the slash command answered without a model")
    outside_call: OutsideCall | None = Field(
        default=None, description="the MCP client's call this turn asks the user to approve (and runs)"
    )
    job: JobBrief | None = Field(
        default=None, description="the background job this turn is (its own execution)"
    )
    job_report: str | None = Field(default=None, description="a job's report this chat turn shows")
    voice_reply: bool = Field(
        default=False, description="the turn answers a voice note and the user asked for spoken answers"
    )
    footnotes: list[str] = Field(
        default_factory=list, description="lines after the reply (rough transcripts)"
    )


class ModelStep(BaseModel):
    """One model response within a turn, and the tool results that answered it (if any)."""

    model_config = ConfigDict(defer_build=True)

    step: int
    content: list[dict[str, Any]]
    stop_reason: str
    model: str
    message_id: str
    created_at: str
    tool_results: list[dict[str, Any]] = Field(default_factory=list)
    partial_results: dict[str, dict[str, Any]] = Field(default_factory=dict)
    approval_id: str | None = None
    approval_asks: int = Field(default=0, description="how often RunTools handed this approval to the wait")
    tokens: int = Field(
        default=0, description="the call's tokens (input, output, cache), as a job counts them"
    )
    cost_nano_usd: int = Field(default=0, description="the call's estimated cost")

    @property
    def text(self) -> str:
        """The response's text blocks joined: as paragraphs, except that a block with citations (the API
        splits a sentence that cites a web source into several blocks) joins its neighbours as written."""
        parts: list[str] = []
        cited = False
        for block in self.content:
            if block.get("type") != "text" or not block.get("text"):
                continue
            now_cited = bool(block.get("citations"))
            if parts:
                parts.append("" if cited or now_cited else "\n\n")
            parts.append(str(block["text"]))
            cited = now_cited
        return "".join(parts).strip()

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The response's tool_use blocks, in order."""
        return [block for block in self.content if block.get("type") == "tool_use"]


class NewToken(BaseModel):
    """The connection whose new token a reply shows (`/connect <name>`), made when the reply is sent."""

    model_config = ConfigDict(defer_build=True)

    user_id: int
    connection: str


class Reply(BaseModel):
    """The final answer of a turn and how much of it reached Telegram."""

    model_config = ConfigDict(defer_build=True)

    text: str
    source: ReplySource
    message_id: str
    created_at: str
    sent_chunks: int = 0
    voice_sent: bool = Field(default=False, description="the spoken copy reached Telegram (or was given up)")
    kept_text: str | None = Field(
        default=None, description="what the history stores when the text shows something once (a new token)"
    )
    new_token: NewToken | None = Field(
        default=None, description="the text shows this connection's new token in place of its TOKEN_SLOT"
    )
    token_seed: str | None = Field(
        default=None,
        description="what FinishTurn makes the new token from; gone once the reply was delivered or given up",
    )
    token_revoked: bool = Field(
        default=False, description="the new token never reached the chat: its connection was revoked"
    )
