"""What a turn keeps between its states (the state machine itself carries only ids and counters)."""

from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stepwise.inbox.outside_call import OutsideCall
from stepwise.model.blocks import AsJsonObjectMap, StoredBlocks, StoredResults, ToolResultBlock, ToolUseBlock
from stepwise.secretary.kinds import ContactWrote
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


class Chat(BaseModel):
    """The user's messages, answered by the model over the chat's history (or, when none of them is something
    the model can take, by notices saying so; once the daily token budget is spent, by the refusal)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["chat"] = "chat"


class Command(BaseModel):
    """A slash command, answered without a model (`stepwise.commands`)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["command"] = "command"
    text: str  # the command as written


class RulesCommand(BaseModel):
    """A slash command with arguments that the offline rules model answers with a tool (`/add milk`)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["rules_command"] = "rules_command"


REMINDER_PREFIX = "⏰ Reminder: "  # how a due reminder reads in the chat


class Reminder(BaseModel):
    """A reminder that fired: the turn shows its text (after `REMINDER_PREFIX`)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["reminder"] = "reminder"
    text: str


class Checkin(BaseModel):
    """A check-in that fired: a scheduled instruction the model carries out as a full turn."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["checkin"] = "checkin"
    number: int | None = None  # the check-in's number (its reminder id)
    text: str


class JobReport(BaseModel):
    """A background job ended: the chat's turn shows its report, as the job wrote it."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["job_report"] = "job_report"
    report: str


class JobRun(BaseModel):
    """A background job's own turn (its own execution: `states.job_turn`); its record is in the jobs'
    store."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["job"] = "job"
    number: int
    title: str
    task: str
    deadline: str  # ISO 8601 UTC


# What a turn is. OutsideCall: an MCP client's call that its turn asks the user to approve (and runs);
# ContactWrote: a contact's messages to an owner's business account, drafted a reply the owner may send.
TurnKind = Annotated[
    Chat | Command | RulesCommand | Reminder | Checkin | OutsideCall | JobReport | JobRun | ContactWrote,
    Field(discriminator="kind"),
]


def _kind_of_flat(data: dict[str, Any]) -> dict[str, Any]:
    """The kind of a turn whose record was written before issue 40, from the fields it kept it in."""
    if data.get("job") is not None:
        return {**data["job"], "kind": "job"}
    if data.get("outside_call") is not None:
        return {**data["outside_call"], "kind": "outside_call"}
    if data.get("reminder") is not None:
        return {"kind": "reminder", "text": data["reminder"]}
    if data.get("job_report") is not None:
        return {"kind": "job_report", "report": data["job_report"]}
    if data.get("command") is not None:
        return {"kind": "command", "text": data["command"]}
    if data.get("model_override") == "command":
        return {"kind": "rules_command"}
    if data.get("checkin") is not None:
        return {**data["checkin"], "kind": "checkin"}
    return {"kind": "chat"}


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
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
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
    kind: TurnKind = Field(default_factory=Chat)
    fallback: bool = False  # the turn fell back to the offline rules model (UseFallback)
    fallback_decisions: int = 0  # how often UseFallback switched this turn over
    summary: str = ""  # the chat's rolling summary when the turn began
    memories: list[Memory] = []  # memories recalled for this message
    timezone: str = "UTC"  # the user's IANA time zone when the turn began
    timezone_set: bool = False  # whether the user chose it (else the default)
    # the person's profile marks an account at an OAuth server: their tools are looked up (docs/accounts.md)
    has_accounts: bool = False
    notices: list[str] = []  # what the user is told about files the model does not get
    voice_reply: bool = False  # the turn answers a voice note and the user asked for spoken answers
    footnotes: list[str] = []  # lines after the reply (rough transcripts)
    topic_name: str | None = None  # the name this turn gives its Telegram-named topic (docs/topics.md)
    sender: str | None = None  # in a group: the first name of the member who asked (docs/groups.md)

    @model_validator(mode="before")
    @classmethod
    def _fold_flat_kind(cls, data: Any) -> Any:
        """A turn in flight across the deploy: its record, written before issue 40, kept its kind in fields of
        their own (`reminder`, `command`, `job`...) and its fallback in `model_override`."""
        if not isinstance(data, dict) or "kind" in data:
            return data
        return {**data, "kind": _kind_of_flat(data), "fallback": data.get("model_override") == "rules"}

    @property
    def conversation(self) -> Conversation:
        """The conversation the turn answers."""
        return Conversation(self.chat_id, self.topic, self.account)

    @property
    def scope(self) -> Scope:
        """Whose the turn is: its conversation, who asked, whose data it reads and writes."""
        return Scope(self.conversation, self.user_id, self.sender)


class ModelStep(BaseModel):
    """One model response within a turn, and the tool results that answered it (if any)."""

    model_config = ConfigDict(defer_build=True)

    step: int
    content: StoredBlocks
    stop_reason: str
    model: str
    message_id: str
    created_at: str
    tool_results: StoredResults = []  # one per tool_use block, in their order, once all are answered
    # the results recorded so far, by tool_use id (RunTools fills it call by call)
    partial_results: Annotated[dict[str, ToolResultBlock], AsJsonObjectMap] = {}
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
            if block["type"] != "text" or not block["text"]:
                continue
            now_cited = bool(block.get("citations"))
            if parts:
                parts.append("" if cited or now_cited else "\n\n")
            parts.append(block["text"])
            cited = now_cited
        return "".join(parts).strip()

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The response's tool_use blocks, in order."""
        return [block for block in self.content if block["type"] == "tool_use"]


class NewToken(BaseModel):
    """A reply that shows a new token (`/connect <name>`): its text has the token's TOKEN_SLOT, and the token
    is made from `seed` when the reply is sent (`states.new_token`)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["new_token"] = "new_token"
    user_id: int
    connection: str  # the connection the token is for
    kept_text: str  # what the history stores (never the token)
    # Delivery state (kept beside the reply's data: `TurnStore.settle_token`): the seed is gone once the
    # reply was delivered or given up; `revoked` when the token never reached the chat.
    seed: str | None = None
    revoked: bool = False


class NewTopic(BaseModel):
    """A reply that opens a topic (/new) and is sent inside it; the history where /new was written keeps
    `kept_text`."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["new_topic"] = "new_topic"
    name: str
    named: bool = False  # the user gave the name (else it is renamed after its first answer)
    kept_text: str
    thread: int | None = None  # delivery state: the topic's thread once opened (`TurnStore.set_topic_thread`)


class AppButton(BaseModel):
    """The inline button under a reply that opens the Mini App (`/app`), sent under its last chunk."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["app_button"] = "app_button"
    text: str
    url: str


class LinkButton(BaseModel):
    """A button that opens a web page."""

    model_config = ConfigDict(defer_build=True)

    text: str
    url: str


class LinkButtons(BaseModel):
    """Inline buttons that open web pages, one a row, under a reply's last chunk (`/accounts`' Connect
    buttons: a server's sign-in page)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["link_buttons"] = "link_buttons"
    buttons: list[LinkButton]


# What a reply brings besides its text: a new token, a topic it opens, or buttons.
ReplyExtra = Annotated[NewToken | NewTopic | AppButton | LinkButtons, Field(discriminator="kind")]
# The fields a reply recorded before issue 40 kept its extra in (a turn in flight across the deploy).
_FLAT_EXTRA = ("kept_text", "new_token", "token_seed", "token_revoked", "new_topic", "new_topic_named")


class WithExtra(NamedTuple):
    """A reply made without a model that brings more than its text (`stepwise.commands.answer`)."""

    text: str
    extra: ReplyExtra


class Reply(BaseModel):
    """The final answer of a turn and how much of it reached Telegram."""

    model_config = ConfigDict(defer_build=True)

    text: str
    source: ReplySource
    message_id: str
    created_at: str
    sent_chunks: int = 0
    voice_sent: bool = False  # the spoken copy reached Telegram (or was given up)
    extra: ReplyExtra | None = None

    @model_validator(mode="before")
    @classmethod
    def _fold_flat_extra(cls, data: Any) -> Any:
        """A reply recorded before issue 40 (its extra in flat fields) reads as one with `extra`."""
        if not isinstance(data, dict) or "extra" in data:
            return data
        flat = {key: data[key] for key in (*_FLAT_EXTRA, "app_button", "topic_thread") if key in data}
        data = {key: value for key, value in data.items() if key not in flat}
        if flat.get("new_token") is not None:
            data["extra"] = {
                **flat["new_token"],
                "kind": "new_token",
                "kept_text": flat.get("kept_text") or data.get("text", ""),
                "seed": flat.get("token_seed"),
                "revoked": bool(flat.get("token_revoked")),
            }
        elif flat.get("new_topic") is not None:
            data["extra"] = {
                "kind": "new_topic",
                "name": flat["new_topic"],
                "named": bool(flat.get("new_topic_named")),
                "kept_text": flat.get("kept_text") or data.get("text", ""),
                "thread": flat.get("topic_thread"),
            }
        elif flat.get("app_button") is not None:
            data["extra"] = {**flat["app_button"], "kind": "app_button"}
        return data

    @property
    def kept_text(self) -> str:
        """What the history stores of the reply: its text, or what stands for what it shows once."""
        match self.extra:
            case NewToken(kept_text=kept) | NewTopic(kept_text=kept):
                return kept
            case _:
                return self.text
