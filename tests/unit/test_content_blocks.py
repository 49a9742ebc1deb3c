"""The loop's typed content blocks (`stepwise.model.blocks`): what is stored reads back unchanged, blocks of
kinds the types do not name pass through, and the Messages client keeps only blocks that match them."""

from __future__ import annotations

import json

from support.canned_messages import canned_model, json_answer, message

from stepwise.history.models import StoredMessage
from stepwise.model.types import ModelRequest
from stepwise.prompt.messages import build_messages
from stepwise.turn_records.models import ModelStep

# A model step as DynamoDB holds it (`data`, written by `ModelStep.model_dump_json()` before the blocks were
# typed): cited text, a web search kept as the API sent it (its fields in the API's order, one the types do
# not name), a tool call, and a block of a kind the types do not name at all.
STORED_STEP = (
    '{"step":0,"content":['
    '{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"weather"},'
    '"caller":{"type":"direct"}},'
    '{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result",'
    '"url":"https://example.org/a","title":"A","encrypted_content":"e1","page_age":null}]},'
    '{"type":"text","text":"Sunny.","citations":[{"type":"web_search_result_location",'
    '"url":"https://example.org/a","title":"A","cited_text":"sun","encrypted_index":"i1"}]},'
    '{"type":"thinking","thinking":"hmm","signature":"sig"},'
    '{"type":"tool_use","id":"toolu_1","name":"list_tasks","input":{}}],'
    '"stop_reason":"tool_use","model":"claude-haiku-4-5","message_id":"m1","created_at":"2026-11-22T09:30:00Z",'
    '"tool_results":[{"type":"tool_result","tool_use_id":"toolu_1","content":"No tasks.","is_error":false}],'
    '"partial_results":{"toolu_1":{"type":"tool_result","tool_use_id":"toolu_1","content":"No tasks.",'
    '"is_error":false}},'
    '"approval_id":null,"approval_asks":0,"tokens":120,"cost_nano_usd":3000}'
)


def test_a_stored_model_step_reads_and_is_written_back_byte_for_byte() -> None:
    step = ModelStep.model_validate_json(STORED_STEP)
    assert step.model_dump_json() == STORED_STEP
    assert [call["name"] for call in step.tool_uses] == ["list_tasks"]
    assert step.text == "Sunny."
    assert step.partial_results["toolu_1"]["content"] == "No tasks."


def test_blocks_of_kinds_the_types_do_not_name_go_back_to_the_model_unchanged() -> None:
    step = ModelStep.model_validate_json(STORED_STEP)
    history = [
        StoredMessage(id="u1", chat_id=1, role="user", content="weather?", created_at="2026-11-22T09:29:00Z")
    ]
    messages = build_messages(history, [step], breakpoints=False)
    assert messages[1] == {"role": "assistant", "content": json.loads(STORED_STEP)["content"]}
    assert messages[2] == {"role": "user", "content": json.loads(STORED_STEP)["tool_results"]}


def test_the_client_keeps_no_tool_call_without_an_id_and_a_name() -> None:
    # Given an answer whose second call came without an id (no API sends one; the types need one)
    blocks = [
        {"type": "tool_use", "id": "toolu_1", "name": "list_tasks", "input": {}},
        {"type": "tool_use", "name": "list_tasks", "input": {}},
        {"type": "tool_use", "id": "toolu_3", "name": None, "input": {}},
    ]
    model, _, _ = canned_model(json_answer(message(blocks, "tool_use")))
    # When the client reads it
    request = ModelRequest(
        model="claude-haiku-4-5",
        max_tokens=100,
        system=[{"type": "text", "text": "system"}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "tasks?"}]}],
    )
    response = model.complete(request)
    # Then only the whole call is kept, like any block a later request could not send back
    assert response.content == [blocks[0]]
