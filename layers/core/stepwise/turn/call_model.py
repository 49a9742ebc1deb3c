"""CallModel: one model call over the history window and this turn's tool rounds."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.model.types import ModelRequest
from stepwise.prompt.messages import build_messages
from stepwise.prompt.system import build_system_prompt
from stepwise.turn.contracts import CallModelInput, CallModelOutput
from stepwise.turn.load_context import show_typing
from stepwise.turn.services import TurnServices
from stepwise.turns.models import ModelStep, Reply

logger = Logger(child=True)

EMPTY_ANSWER = "I don't have an answer to that — could you rephrase it?"
REFUSAL_ANSWER = "I can't help with that one."


def call_model(request: CallModelInput, services: TurnServices) -> CallModelOutput:
    """Call the model; store its response; when it is final, make it the turn's reply."""
    turn = request.turn
    meta = services.turns.get_meta(turn.turn_id)
    history = services.messages.between(turn.chat_id, meta.first_key, meta.last_key)
    rounds = [step for step in services.turns.steps(turn.turn_id) if step.tool_results]
    offer_tools = bool(services.tools) and not request.final
    model_request = ModelRequest(
        model=services.model_name,
        max_tokens=services.max_tokens,
        system=build_system_prompt(services.tools if offer_tools else [], services.clock()),
        messages=build_messages(history, rounds),
    )
    show_typing(services, turn.chat_id)
    response = services.model().complete(model_request)
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
        },
    )
    step = ModelStep(
        step=len(rounds),
        content=response.content,
        stop_reason=response.stop_reason,
        model=response.model,
        message_id=services.new_id(),
        created_at=iso_utc(services.clock()),
    )
    services.turns.put_step(turn.turn_id, step)
    wants_tools = offer_tools and response.stop_reason == "tool_use" and bool(response.tool_uses)
    if not wants_tools:
        services.turns.put_reply(
            turn.turn_id,
            Reply(
                text=final_text(step), source="model", message_id=step.message_id, created_at=step.created_at
            ),
        )
    return CallModelOutput(
        stop_reason="tool_use" if wants_tools else "end_turn",
        step=step.step,
        tool_calls=len(response.tool_uses),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
    )


def final_text(step: ModelStep) -> str:
    """The text the user gets for a final response, never empty."""
    if step.text:
        return step.text
    return REFUSAL_ANSWER if step.stop_reason == "refusal" else EMPTY_ANSWER
