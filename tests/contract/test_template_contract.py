"""template.yaml, the state machine and the code agree with each other."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from support.tools import ROOT

from stepwise.config import all_settings_models
from stepwise_local.template import LAYER_ENTRY, Template

TEMPLATE = Template()
ASL_TEXT = (ROOT / "statemachine" / "turn.asl.json").read_text()
STATE_MACHINE = TEMPLATE.resources["TurnStateMachine"]["Properties"]


def test_every_asl_placeholder_has_a_substitution_and_every_substitution_is_used() -> None:
    placeholders = set(re.findall(r"\$\{(\w+)\}", ASL_TEXT))
    assert placeholders == set(STATE_MACHINE["DefinitionSubstitutions"])


def test_the_state_machine_may_invoke_exactly_the_functions_it_uses() -> None:
    used = {value["Fn::GetAtt"][0] for value in STATE_MACHINE["DefinitionSubstitutions"].values()}
    invocable = {policy["LambdaInvokePolicy"]["FunctionName"]["Ref"] for policy in STATE_MACHINE["Policies"]}
    assert used == invocable


def test_every_task_declares_retry_catch_or_end_and_a_timeout() -> None:
    states = json.loads(ASL_TEXT)["States"]
    for name, state in states.items():
        if state["Type"] != "Task":
            continue
        assert "TimeoutSeconds" in state or "TimeoutSecondsPath" in state, name
        assert state.get("Retry"), name
        assert state.get("Catch") or state.get("End"), name


def test_the_workflow_is_standard_and_uses_jsonpath() -> None:
    assert STATE_MACHINE["Type"] == "STANDARD"
    assert json.loads(ASL_TEXT).get("QueryLanguage", "JSONPath") == "JSONPath"


def test_every_function_enters_through_the_layer_and_has_a_thin_app_handler() -> None:
    entry_module, _, entry_attribute = LAYER_ENTRY.rpartition(".")
    entry = ROOT / "layers" / "core" / Path(*entry_module.split(".")).with_suffix(".py")
    assert entry.is_file() and f"\n    {entry_attribute}: " in entry.read_text()
    for spec in TEMPLATE.functions().values():
        assert spec.handler == LAYER_ENTRY and spec.code_handler == "app.handler"
        source = (spec.code_dir / "app.py").read_text()
        tree = ast.parse(source)
        defined = [
            node
            for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name == "handler")
            or (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "handler" for t in node.targets))
        ]
        assert defined, f"{spec.logical_id} has no handler"
        assert "boto3" not in source and "requests" not in source, (
            f"{spec.logical_id} talks to AWS/HTTP itself"
        )


def test_every_environment_variable_in_the_template_is_a_known_setting() -> None:
    known = {name.upper() for model in all_settings_models() for name in model.model_fields}
    for spec in TEMPLATE.functions().values():
        for variable in spec.environment:
            assert variable.startswith(("POWERTOOLS_", "PYDANTIC_")) or variable in known, (
                f"{spec.logical_id}: {variable}"
            )


def test_the_webhook_is_a_post_route_on_the_http_api() -> None:
    events = TEMPLATE.resources["WebhookFunction"]["Properties"]["Events"]
    assert events["Telegram"]["Type"] == "HttpApi"
    assert events["Telegram"]["Properties"]["Method"] == "POST"


def test_tables_are_on_demand_and_turn_records_expire() -> None:
    tables = {t.logical_id: t for t in TEMPLATE.tables()}
    assert all(t.create_args["BillingMode"] == "PAY_PER_REQUEST" for t in tables.values())
    assert tables["TurnsTable"].ttl_attribute == "expires_at"
    assert tables["MessagesTable"].ttl_attribute is None, "history is never expired"


def test_the_vector_index_matches_the_embeddings_and_keeps_text_unfilterable() -> None:
    index = TEMPLATE.resources["MemoryIndex"]["Properties"]
    assert TEMPLATE.resources["MemoryVectorBucket"]["Type"] == "AWS::S3Vectors::VectorBucket"
    assert (index["DataType"], index["DistanceMetric"]) == ("float32", "cosine")
    env = TEMPLATE.doc["Globals"]["Function"]["Environment"]["Variables"]
    assert str(index["Dimension"]) == env["EMBEDDING_DIMENSIONS"]
    assert index["IndexName"] == env["VECTOR_INDEX_NAME"]
    assert index["MetadataConfiguration"]["NonFilterableMetadataKeys"] == ["text"]


def test_memory_permissions_are_scoped_to_the_index_and_the_titan_model() -> None:
    for name in ("LoadContextFunction", "RunToolsFunction", "SummarizeFunction"):
        statements = [
            s
            for p in TEMPLATE.resources[name]["Properties"]["Policies"]
            if isinstance(p, dict)
            for s in p.get("Statement", [])
        ]
        vectors = [s for s in statements if "s3vectors:" in str(s["Action"])]
        assert vectors and all(s["Resource"] == {"Fn::GetAtt": ["MemoryIndex", "IndexArn"]} for s in vectors)
        (bedrock,) = [s for s in statements if s["Action"] == "bedrock:InvokeModel"]
        assert bedrock["Resource"]["Fn::Sub"].endswith("foundation-model/amazon.titan-embed-text-v2:0")


def test_the_summarizer_runs_on_a_schedule_and_finds_due_chats_through_a_sparse_index() -> None:
    (event,) = TEMPLATE.resources["SummarizeFunction"]["Properties"]["Events"].values()
    assert event["Type"] == "ScheduleV2"
    chats = TEMPLATE.resources["ChatsTable"]["Properties"]
    (index,) = chats["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "SummaryDue"
    assert index["KeySchema"][0]["AttributeName"] == "summary_due"


def test_only_the_functions_that_run_tools_use_the_tool_call_ledger_and_its_records_expire() -> None:
    ledger = {t.logical_id: t for t in TEMPLATE.tables()}["ToolCallsTable"]
    assert ledger.create_args["KeySchema"] == [{"AttributeName": "call_id", "KeyType": "HASH"}]
    assert ledger.ttl_attribute == "expires_at"
    ref = {"Ref": "ToolCallsTable"}
    for name, resource in TEMPLATE.of_type("AWS::Serverless::Function").items():
        props = resource["Properties"]
        env = props.get("Environment", {}).get("Variables", {})
        policies = sorted(
            kind
            for policy in props.get("Policies", [])
            if isinstance(policy, dict)
            for kind, arguments in policy.items()
            if arguments == {"TableName": ref}
        )
        if name in ("RunToolsFunction", "McpFunction", "AppFunction"):  # the turn's, MCP clients', the page's
            assert env["TOOL_CALLS_TABLE"] == ref
            assert policies == ["DynamoDBReadPolicy", "DynamoDBWritePolicy"]
        else:
            assert "TOOL_CALLS_TABLE" not in env and policies == [], name


def test_the_webhook_may_invoke_exactly_the_functions_it_warms_up() -> None:
    # moto does not enforce IAM, and the emulation cannot tell a warm-up's Invoke from the state machine's:
    # the webhook's warm-up targets and its LambdaInvokePolicy statements must name the same functions.
    webhook = TEMPLATE.resources["WebhookFunction"]["Properties"]
    variables = webhook["Environment"]["Variables"]
    warmed = {
        variables[name]["Ref"]
        for name in ("CALL_MODEL_FUNCTION", "FINISH_TURN_FUNCTION", "RUN_TOOLS_FUNCTION")
    }
    invocable = {
        policy["LambdaInvokePolicy"]["FunctionName"]["Ref"]
        for policy in webhook["Policies"]
        if isinstance(policy, dict) and "LambdaInvokePolicy" in policy
    }
    assert warmed == invocable == {"CallModelFunction", "FinishTurnFunction", "RunToolsFunction"}
    assert "WarmupAfterQuietSeconds" in TEMPLATE.doc["Parameters"]


def test_every_function_turns_pydantic_plugins_off_as_the_cold_start_benchmarks_assume() -> None:
    # Given the environment the cold-start benchmarks give every function, as the template should
    source = (ROOT / "benchmarks" / "cold_start.py").read_text()
    (assignment,) = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "DEPLOYED_ENVIRONMENT"
    ]
    assumed = ast.literal_eval(assignment.value)
    # Then the template's Globals set exactly those values (plugin discovery reads every package's metadata)
    variables = TEMPLATE.doc["Globals"]["Function"]["Environment"]["Variables"]
    assert assumed == {"PYDANTIC_DISABLE_PLUGINS": "__all__"}
    assert {name: variables.get(name) for name in assumed} == assumed
