"""What a turn keeps between its states (the state machine itself carries only ids and counters)."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from stepwise.inbox.outside_call import OutsideCall
from stepwise.telegram.conversation import Conversation, Scope

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
    deadline: str  # ISO 8601 UTC


class CheckinBrief(BaseModel):
    """The check-in a turn carries out (a scheduled instruction run as a full turn)."""

    model_config = ConfigDict(defer_build=True)

    number: int | None = None  # the check-in's number (its reminder id)
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
    topic: int | None = None  # the topic's message_thread_id; None: the chat itself
    user_id: int
    update_id: int
    user_message_id: str
    first_key: str  # sort key of the oldest message in the context window
    last_key: str  # sort key of the newest message in the context window (the user's)
    # whether the prompt marks the history for prompt caching (see stepwise.prompt.caching)
    history_cached: bool = True
    # the chat's tools and system prompt in tokens, as LoadContext found it (0: unknown)
    stable_prefix_tokens: int = 0
    created_at: str
    # "rules" once the turn fell back offline; "command" for a slash command the rules handle
    model_override: str | None = None
    fallback_decisions: int = 0  # how often UseFallback switched this turn over
    summary: str = ""  # the chat's rolling summary when the turn began
    memories: list[Memory] = []  # memories recalled for this message
    timezone: str = "UTC"  # the user's IANA time zone when the turn began
    timezone_set: bool = False  # whether the user chose it (else the default)
    reminder: str | None = None  # the text of the reminder this turn delivers
    checkin: CheckinBrief | None = None  # the check-in this turn carries out
    notices: list[str] = []  # what the user is told about files the model does not get
    notices_only: bool = False  # every message of the turn is such a file
    command: str | None = None  # the slash command answered without a model
    # the MCP client's call this turn asks the user to approve (and runs)
    outside_call: OutsideCall | None = None
    job: JobBrief | None = None  # the background job this turn is (its own execution)
    job_report: str | None = None  # a job's report this chat turn shows
    voice_reply: bool = False  # the turn answers a voice note and the user asked for spoken answers
    footnotes: list[str] = []  # lines after the reply (rough transcripts)
    topic_name: str | None = None  # the name this turn gives its Telegram-named topic (docs/topics.md)
    sender: str | None = None  # in a group: the first name of the member who asked (docs/groups.md)

    @property
    def conversation(self) -> Conversation:
        """The conversation the turn answers."""
        return Conversation(self.chat_id, self.topic)

    @property
    def scope(self) -> Scope:
        """Whose the turn is: its conversation, who asked, whose data it reads and writes."""
        return Scope(self.conversation, self.user_id, self.sender)


class ModelStep(BaseModel):
    """One model response within a turn, and the tool results that answered it (if any)."""

    model_config = ConfigDict(defer_build=True)

    step: int
    content: list[dict[str, Any]]
    stop_reason: str
    model: str
    message_id: str
    created_at: str
    tool_results: list[dict[str, Any]] = []
    partial_results: dict[str, dict[str, Any]] = {}
    approval_id: str | None = None
    approval_asks: int = 0  # how often RunTools handed this approval to the wait
    tokens: int = 0  # the call's tokens (input, output, cache), as a job counts them
    cost_nano_usd: int = 0  # the call's estimated cost

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


class AppButton(BaseModel):
    """The inline button under a reply that opens the Mini App (`/app`)."""

    model_config = ConfigDict(defer_build=True)

    text: str
    url: str


class Reply(BaseModel):
    """The final answer of a turn and how much of it reached Telegram."""

    model_config = ConfigDict(defer_build=True)

    text: str
    source: ReplySource
    message_id: str
    created_at: str
    sent_chunks: int = 0
    voice_sent: bool = False  # the spoken copy reached Telegram (or was given up)
    kept_text: str | None = None  # what the history stores when the text shows something once (a new token)
    new_token: NewToken | None = None  # the text shows this connection's new token in place of its TOKEN_SLOT
    # what FinishTurn makes the new token from; gone once the reply was delivered or given up
    token_seed: str | None = None
    token_revoked: bool = False  # the new token never reached the chat: its connection was revoked
    # /new: the topic the reply opens (its name; None: none) and is sent in, once opened (its thread id)
    new_topic: str | None = None
    new_topic_named: bool = False  # the user gave the name (else it is renamed after its first answer)
    topic_thread: int | None = None
    app_button: AppButton | None = None  # sent under the reply's last chunk
