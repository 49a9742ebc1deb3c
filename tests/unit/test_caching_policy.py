"""The per-model caching policy: the history is laid out for prompt caching only when caching can pay."""

from __future__ import annotations

from typing import Any

import pytest
from support.turn_fakes import (
    ScriptedModel,
    conversation_texts,
    drive_turn,
    text_response,
    turn_settings,
    turn_start,
)

from stepwise.history.models import StoredMessage
from stepwise.media.models import Attachment
from stepwise.model.types import ModelRequest
from stepwise.prompt.caching import (
    CACHING_MARGIN,
    UNKNOWN_MODEL_MIN_CACHEABLE_TOKENS,
    caching_can_pay,
    estimate_tokens,
    head_tokens,
    history_tokens,
    min_cacheable_tokens,
)
from stepwise.prompt.system import EPHEMERAL, is_turn_context
from stepwise.services import TurnServices
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise_local.anthropic_server import prefix_units

HAIKU, SONNET = "claude-haiku-4-5", "claude-sonnet-4-5"


# ---------------------------------------------------------------------------------------------- per model
@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-haiku-4-5", 4096),
        ("claude-haiku-4-5-20251001", 4096),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", 4096),
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-sonnet-4-6", 1024),
        ("claude-opus-4-5", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-opus-4-1-20250805", 1024),
        ("claude-opus-4-20250514", 1024),
        ("claude-sonnet-4-0", 1024),
        ("claude-3-7-sonnet-latest", 1024),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-3-haiku-20240307", 2048),
    ],
)
def test_each_model_family_has_its_documented_minimum(model: str, minimum: int) -> None:
    assert min_cacheable_tokens(model) == minimum


@pytest.mark.parametrize("model", ["claude-test", "claude-haiku-5", "claude-opus-4-7", "gpt-4o", ""])
def test_an_unknown_model_gets_the_highest_known_minimum(model: str) -> None:
    assert min_cacheable_tokens(model) == UNKNOWN_MODEL_MIN_CACHEABLE_TOKENS == 4096


def test_caching_can_pay_once_head_and_history_reach_the_models_minimum() -> None:
    assert not caching_can_pay(HAIKU, 2738, 1357)
    assert caching_can_pay(HAIKU, 2738, 1358)
    assert caching_can_pay(SONNET, 1000, 24) and not caching_can_pay(SONNET, 1000, 23)
    assert caching_can_pay(HAIKU, 4096, 0), "a head past the minimum is enough on its own"
    assert not caching_can_pay("claude-test", 3000, 1000), "unknown model: 4,096 like Haiku"
    assert caching_can_pay(HAIKU, 0, 0), "a head not measured yet (a chat's first call) counts as reaching it"


def test_estimates_count_characters_over_four_of_the_json_without_cache_control() -> None:
    block = {"type": "text", "text": "x" * 100}
    assert estimate_tokens(block) == 32  # {"text":"xxx…","type":"text"}: 125 characters
    assert estimate_tokens({**block, "cache_control": dict(EPHEMERAL)}) == 32
    assert estimate_tokens({"type": "text", "text": "xy"}) == 7  # 27 characters, rounded up


def message(n: int, role: str, text: str, attachment: Attachment | None = None) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}",
        chat_id=7,
        role=role,  # type: ignore[arg-type]
        content=text,
        created_at=f"2026-11-22T09:00:{n:02d}.000Z",
        attachment=attachment,
    )


def test_history_is_counted_as_the_prompt_shows_it() -> None:
    photo = Attachment(kind="photo", file_id="f1", mime_type="image/jpeg")
    window = [
        message(0, "assistant", "left out: the list starts with the user"),
        message(1, "user", "hello"),
        message(2, "assistant", "hi"),
        message(3, "user", "look", photo),
    ]
    expected = sum(
        estimate_tokens({"type": "text", "text": text}) for text in ("hello", "hi", "[photo: look]")
    )
    assert history_tokens(window) == expected


# ---------------------------------------------------------------------------------------------- the turn
def play(
    services: TurnServices, model: ScriptedModel, turns: int, text: str = "q"
) -> tuple[list[int], list[bool]]:
    """Play whole turns; returns each window's size and whether its request marked the history for caching."""
    sizes, marked = [], []
    for n in range(1, turns + 1):
        model.responses.append(text_response(f"a{n}"))
        start = turn_start(services, f"{text}{n}", update_id=n, created_at=f"2026-11-22T09:{n:02d}:00.000Z")
        drive_turn(services, start)
        meta = services.stores.turns.get_meta(start.turn.turn_id)
        sizes.append(len(services.stores.messages.between(Conversation(7), meta.first_key, meta.last_key)))
        marked.append(marks_history(model.requests[-1]))
        assert meta.history_cached == marked[-1]
    return sizes, marked


def marks_history(request: ModelRequest) -> bool:
    return any("cache_control" in block for m in request.messages for block in m["content"])


def test_on_haiku_a_prefix_that_cannot_reach_4096_tokens_slides_by_one_without_breakpoints(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model=HAIKU, history_limit=4)
    sizes, marked = play(services, model, 8)
    assert sizes == [1, 3, 4, 4, 4, 4, 4, 4], "no margin: no history billed beyond the limit"
    assert marked == [True] + [False] * 7, "breakpoints only before the head was measured"
    for request in model.requests:
        assert "cache_control" in request.system[-1], (
            "the system prompt keeps its breakpoint (it costs nothing)"
        )
        assert is_turn_context(request.messages[-1]["content"][-1]), "the context still ends the prompt"


def test_on_sonnet_the_same_chat_moves_in_blocks_with_breakpoints(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model=SONNET, history_limit=4)
    sizes, marked = play(services, model, 9)
    assert CACHING_MARGIN == 10
    assert sizes == [1, 3, 5, 7, 9, 11, 13, 4, 6]
    assert all(marked)
    newest = model.requests[-1].messages
    assert "cache_control" in newest[-1]["content"][-2], "the newest message, before the context"
    assert "cache_control" in newest[-3]["content"][-1], "where the previous turn put its own"


def test_on_haiku_a_long_head_is_cached_from_the_start(services: TurnServices, model: ScriptedModel) -> None:
    services.settings = turn_settings(anthropic_model=HAIKU, history_limit=4)
    services.prompt.persona = "## Character\n" + "Be kind and brief. " * 900  # about 4,300 tokens
    sizes, marked = play(services, model, 9)
    assert sizes == [1, 3, 5, 7, 9, 11, 13, 4, 6] and all(marked)


def test_on_haiku_the_window_starts_moving_in_blocks_once_the_history_can_reach_the_minimum(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model=HAIKU, history_limit=4)
    head = measured_head(services, model)
    services.prompt.persona = "x" * ((4096 - 150 - head) * 4 - 2)  # the head about 150 tokens short of 4,096
    sizes, marked = play(
        services, model, 16, text="a question of about twenty-five tokens, give or take " * 2
    )
    assert marked == [True, False, False] + [True] * 13
    # slides while even its largest window falls short; then the block grows from where the sliding window
    # started, and when it moves it keeps the 7 newest messages, the fewest that reach 4,096 tokens
    assert sizes == [1, 3, 4, 6, 8, 10, 12, 14, 7, 9, 11, 13, 7, 9, 11, 13]
    prefixes = [cacheable_tokens(request) for request in model.requests[1:]]  # past the measuring chat
    assert prefixes[2] < 4096 <= min(prefixes[8], prefixes[12]), "short while sliding, cached from each move"
    assert all(p >= 4096 for p in prefixes[4:])


def cacheable_tokens(request: ModelRequest) -> int:
    """The request's prompt up to its newest user message, as the fake Messages API counts it."""
    body = {"tools": request.tools, "system": request.system, "messages": request.messages}
    units = prefix_units(body)
    assert is_turn_context(request.messages[-1]["content"][-1])
    return sum(unit.tokens for unit in units[:-1])


def measured_head(services: TurnServices, model: ScriptedModel) -> int:
    """The head (tools and system) CallModel measures with the current persona, from another chat."""
    model.responses.append(text_response("ok"))
    drive_turn(services, turn_start(services, "measure", chat_id=8, update_id=98))
    chat = services.stores.chats.get(Conversation(8))
    assert chat is not None and chat.stable_prefix_tokens > 0
    return chat.stable_prefix_tokens


def test_an_unknown_model_is_treated_as_needing_4096_tokens(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model="claude-test", history_limit=4)
    sizes, marked = play(services, model, 6)
    assert sizes == [1, 3, 4, 4, 4, 4] and marked == [True] + [False] * 5


@pytest.mark.parametrize("model_name", [HAIKU, SONNET, "claude-test"])
def test_history_margin_set_keeps_the_block_window_and_breakpoints_on_every_model(
    services: TurnServices, model: ScriptedModel, model_name: str
) -> None:
    services.settings = turn_settings(anthropic_model=model_name, history_limit=4, history_margin=4)
    sizes, marked = play(services, model, 7)
    assert sizes == [1, 3, 5, 7, 4, 6, 8] and all(marked)


def test_call_model_keeps_the_measured_head_on_the_chat_record_and_writes_it_only_when_it_changes(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model=HAIKU)
    writes: list[int] = []
    original = services.stores.chats.set_stable_prefix_tokens

    def counting(chat_id: int, tokens: int) -> None:
        writes.append(tokens)
        original(chat_id, tokens)

    services.stores.chats.set_stable_prefix_tokens = counting  # type: ignore[method-assign]
    play(services, model, 3)
    request = model.requests[0]
    fake_count = sum(u.tokens for u in prefix_units({"tools": request.tools, "system": request.system}))
    assert writes == [fake_count], "measured once, as the fake Messages API counts tools and system"
    assert head_tokens(request.tools or [], request.system) == fake_count
    services.prompt.persona = "## Character\nShort."
    play_more(services, model, 4)
    assert len(writes) == 2 and writes[1] > fake_count
    chat = services.stores.chats.get(Conversation(7))
    assert chat is not None and chat.stable_prefix_tokens == writes[1]


def play_more(services: TurnServices, model: ScriptedModel, update_id: int) -> None:
    model.responses.append(text_response("more"))
    start = turn_start(
        services, "more", update_id=update_id, created_at=f"2026-11-22T09:{update_id:02d}:00.000Z"
    )
    drive_turn(services, start)


def test_the_history_estimate_is_what_the_fake_messages_api_counts_before_the_context(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model=SONNET, history_limit=20)
    play(services, model, 4, text="how are things? ")
    request = model.requests[-1]
    meta = services.stores.turns.get_meta("turn-4")
    window = services.stores.messages.between(Conversation(7), meta.first_key, meta.last_key)
    body: dict[str, Any] = {"messages": request.messages}
    units = prefix_units(body)[1:]  # the first unit stands for tool_choice
    assert history_tokens(window) == sum(u.tokens for u in units[:-1]), "all but the context block"
    assert conversation_texts(request.messages)[-1] == "how are things? 4"


@pytest.mark.parametrize("model_name", [HAIKU, SONNET])
def test_a_retried_load_context_fixes_the_same_window_and_layout(
    services: TurnServices, model: ScriptedModel, model_name: str
) -> None:
    services.settings = turn_settings(anthropic_model=model_name, history_limit=4)
    play(services, model, 6)
    start = turn_start(services, "q7", update_id=7, created_at="2026-11-22T09:07:00.000Z")
    load_context(start, services)
    first = services.stores.turns.get_meta(start.turn.turn_id)
    load_context(start, services)
    again = services.stores.turns.get_meta(start.turn.turn_id)
    assert (again.first_key, again.last_key, again.history_cached) == (
        first.first_key,
        first.last_key,
        first.history_cached,
    )
