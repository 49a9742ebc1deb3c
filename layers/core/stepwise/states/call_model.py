"""CallModel: one model call over the history window and this turn's tool rounds. It only calls the model:
what kind of turn it is was decided where the turn started (`states.turn_kind`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from stepwise.audit.log import call_entry
from stepwise.media.fetch import fetch_files
from stepwise.media.notices import with_notices
from stepwise.model.errors import ModelRateLimitedError
from stepwise.model.types import ModelRequest
from stepwise.model.web import WebAccess, with_sources
from stepwise.prompt.caching import head_tokens
from stepwise.prompt.layout import build_prompt
from stepwise.remote_tools.personal import reconnect_buttons
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput, CallModelOutput
from stepwise.states.policy import policy_of
from stepwise.states.spend import count_usage, wait_for_rate_limit
from stepwise.states.typing_indicator import show_typing
from stepwise.telegram.drafts import draft_stream
from stepwise.tools.registry import ToolError
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import ModelStep, Reply, RulesCommand, TurnMeta
from stepwise.usage.meter import call_usage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.model.blocks import ToolDefinition, ToolResultBlock
    from stepwise.services import TurnServices
    from stepwise.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

EMPTY_ANSWER = "I don't have an answer to that — could you rephrase it?"
REFUSAL_ANSWER = "I can't help with that one."
FALLBACK_NOTE = "_(My language model is unavailable right now, so I handled this with simple offline rules.)_"


def memory_sections(meta: TurnMeta, whose: str = "the user") -> list[str]:
    """The per-turn context sections of long-term memory: the chat's rolling summary and recalled memories
    (`whose`: "this group" in a group, whose memories they are)."""
    sections = []
    if meta.summary:
        sections.append(f"## Earlier in this conversation (summary)\n{meta.summary}")
    if meta.memories:
        lines = "\n".join(f"- [{memory.id}] {memory.text}" for memory in meta.memories)
        sections.append(f"## Memories about {whose} (ids for the forget tool)\n{lines}")
    return sections


GROUP_NOTE = (
    "## A group chat\nThis is a group: each member's message comes after a line “From <first name>:”. Answer "
    "the member who asked, by name when it helps. The tasks, reminders and memories you reach here are the "
    "group's, shared by its members; nobody's private ones are here."
)


def default_zone_note(zone: str, in_group: bool = False) -> str:
    """The per-turn context section while the user (in a group: the member who asked) has not chosen a time
    zone."""
    if in_group:
        return (
            f"## Time zone\nThe member who asked has not set a time zone; times are in {zone}, the default. "
            "When a time of day matters, say that you use it; they set their own with /timezone in their "
            "private chat with you."
        )
    return (
        f"## Time zone\nThe user has not set a time zone; times are in {zone}, the default. When a time of "
        "day matters (a reminder at 5pm, a daily check-in), ask which zone they are in and call set_timezone."
    )


def limit_note(max_tool_steps: int) -> str:
    """The per-turn context section of the final call at the tool-round limit."""
    return (
        f"## Tool limit reached\nThis turn has used all {max_tool_steps} tool rounds. Do not call tools: "
        "tell the user what was done, what was not, and what they can ask next."
    )


def limit_result(tool_use_id: str, max_tool_steps: int) -> ToolResultBlock:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "is_error": True,
        "content": f"Not run: this turn reached its limit of {max_tool_steps} tool rounds.",
    }


def close_unanswered(step: ModelStep, meta: TurnMeta, services: TurnServices, max_tool_steps: int) -> None:
    """The calls asked for past the limit do not run: they get "not run" results, and the audit says so."""
    step.tool_results = [limit_result(block["id"], max_tool_steps) for block in step.tool_uses]
    for block, result in zip(step.tool_uses, step.tool_results, strict=True):
        services.stores.audit.record(
            call_entry(meta, block, "not_run", result["content"], "not_needed", step.created_at)
        )
    services.stores.turns.put_step(meta.turn_id, step)


def call_model(request: CallModelInput, services: TurnServices) -> CallModelOutput:
    """Call the model; store its response; decide what next: its tool calls (with or without approval), or,
    when it is final, make it the turn's reply."""
    turn, previous = request.turn, request.next
    meta = services.stores.turns.get_meta(turn.turn_id)
    policy = policy_of(meta.kind)  # a chat's turn, or a background job's (its task, its limits, no chat)
    steps = services.stores.turns.steps(turn.turn_id)
    if (stop := policy.before_call(meta, steps, services)) is not None:
        return CallModelOutput(**decision_fields(stop))
    history = policy.history(meta, services)
    registry, max_steps = policy.tools(meta, services), policy.max_steps(services)
    if previous.final and steps and steps[-1].tool_uses and not steps[-1].tool_results:
        close_unanswered(steps[-1], meta, services, max_steps)
    rounds = [step for step in steps if step.tool_results]
    fallback = meta.fallback
    offline = fallback or isinstance(meta.kind, RulesCommand)
    web = services.settings.model.web if not offline else WebAccess()
    tools: list[ToolDefinition] = [
        *registry.api_tools(),
        *web.server_tools(),
    ]  # server tools last: the cached prefix is stable
    per_turn = [
        *policy.sections(meta, max_steps),
        *(
            []
            if meta.timezone_set or meta.conversation.in_business  # a contact cannot set the owner's zone
            else [default_zone_note(meta.timezone, meta.scope.in_group)]
        ),
        *([GROUP_NOTE] if meta.scope.in_group else []),
        *memory_sections(meta, "this group" if meta.scope.in_group else "the user"),
        *([limit_note(max_steps)] if previous.final else []),
    ]
    local_now = services.clock().astimezone(ZoneInfo(meta.timezone))
    files = turn_files(history, services, offline)
    prompt = build_prompt(
        registry.summaries(),
        local_now,
        history,
        rounds,
        per_turn,
        files,
        persona=services.prompt.group_persona if meta.scope.in_group else services.prompt.persona,
        skills=services.prompt.skills.prompt_section if services.prompt.skills is not None else "",
        cache_history=meta.history_cached,
        web=(web.search, web.fetch),
    )
    if not rounds and policy.holds_chat:
        remember_stable_prefix(meta, head_tokens(tools, prompt.system), services)
    model_request = ModelRequest(
        model=services.settings.model.name,
        max_tokens=services.settings.model.max_tokens,
        system=prompt.system,
        messages=prompt.messages,
        tools=tools,
        tool_choice={"type": "none"} if previous.final and tools else None,
    )
    if rounds and policy.shows_progress:  # the first call's typing indicator went out with LoadContext
        show_typing(services.outbound, turn.conversation)
    drafts = draft_stream(
        services.outbound.drafts if policy.shows_progress else None,
        turn.conversation,
        turn.turn_id,
        services.settings.delivery.draft_interval_seconds,
    )
    try:
        response = (services.models.rules() if offline else services.models.chat()).complete(
            model_request, drafts
        )
    except ModelRateLimitedError as error:
        return CallModelOutput(
            **decision_fields(wait_for_rate_limit(error, previous)), stop_reason="rate_limited"
        )
    used = call_usage(response.model, response.usage)  # the call's tokens and cost, priced once
    if not offline:
        count_usage(meta, len(rounds), used, services)
    usage = response.usage
    logger.info(
        "model answered",
        extra={
            "model": response.model,
            "stop_reason": response.stop_reason,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "final": previous.final,
        },
    )
    step = ModelStep(
        step=len(rounds),
        content=response.content,
        stop_reason=response.stop_reason,
        model=response.model,
        message_id=services.new_id(),
        created_at=iso_utc(services.clock()),
        tokens=0 if offline else used.tokens,
        cost_nano_usd=0 if offline else used.cost_nano_usd,
    )
    services.stores.turns.put_step(turn.turn_id, step)
    instead = policy.after_call(meta, [*rounds, step], services)
    output = CallModelOutput(
        **{
            **decision_fields(previous),
            "route": "reply",
            "step": step.step,
            "wait_seconds": 0,
            "approval_id": None,
        },
        stop_reason=response.stop_reason,
        tool_calls=len(step.tool_uses),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
    )
    if instead is not None:  # the turn's policy routes it (a secretary's draft waits for the owner's tap)
        return output.model_copy(update=decision_fields(instead))
    if response.stop_reason == "tool_use" and step.tool_uses and tools and not previous.final:
        if step.step >= max_steps:  # one more call, without tools, reports what was done
            return output.model_copy(update={"route": "model", "final": True})
        route = "tools_with_approval" if needs_approval(step, registry) else "tools"
        return output.model_copy(update={"route": route})
    text = with_sources(final_text(step), [block for done in [*steps, step] for block in done.content])
    services.stores.turns.put_reply(
        turn.turn_id,
        Reply(
            text=with_notices(
                meta.notices, f"{FALLBACK_NOTE}\n\n{text}" if fallback else text, meta.footnotes
            ),
            source="fallback" if fallback else "model",
            message_id=step.message_id,
            created_at=step.created_at,
            extra=reconnect_buttons(meta, [*rounds, step], services.stores.accounts),
        ),
    )
    return output


def remember_stable_prefix(meta: TurnMeta, tokens: int, services: TurnServices) -> None:
    """Keep the size of the prompt's tools and system prompt on the chat's record when it changed (the
    persona, the tools or the code did): the next turn's LoadContext decides with it whether prompt caching
    can pay (`stepwise.prompt.caching`)."""
    if tokens == meta.stable_prefix_tokens:
        return
    try:
        services.stores.chats.set_stable_prefix_tokens(meta.conversation, tokens)
    except Exception as error:  # an estimate for the next turn's window: never worth failing this turn
        logger.warning("stable prefix size not kept", extra={"error": str(error)})


def decision_fields(decision: Next) -> dict[str, object]:
    """A decision's own fields (a caller may pass a richer `CallModelOutput` as the previous decision)."""
    return decision.model_dump(include=set(Next.model_fields))


def needs_approval(step: ModelStep, tools: ToolRegistry) -> bool:
    """Whether any of the step's calls waits for the user's approval (RunTools asks then): a call of a tool
    that always asks, or one whose arguments make it ask (a check-in). Arguments that do not parse ask
    nothing: RunTools answers them with the error."""
    for call in step.tool_uses:
        tool = tools.get(call["name"])
        if tool is None or not tool.may_ask:
            continue
        if tool.needs_approval:
            return True

        try:
            _tool, args = tools.parse(call["name"], call["input"])
        except ToolError:
            continue
        if tool.asks_approval(args):
            return True
    return False


def turn_files(
    history: Sequence[StoredMessage], services: TurnServices, offline: bool
) -> dict[str, bytes | None]:
    """The bytes of the files this call shows the model; none for the offline rules model (which cannot
    look at them), where no file source is configured, or when no message of the window has a file."""
    if offline or services.outbound.files is None or all(message.attachment is None for message in history):
        return {}

    return fetch_files(history, services.outbound.files(), services.settings.limits.media)


def final_text(step: ModelStep) -> str:
    """The text the user gets for a final response, never empty."""
    if step.text:
        return step.text
    return REFUSAL_ANSWER if step.stop_reason == "refusal" else EMPTY_ANSWER
