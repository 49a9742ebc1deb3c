"""What the template's SAM policy templates let each function do in DynamoDB, and the requests they do not.

The action lists are those of SAM's policy templates (`samtranslator/policy_templates_data/
policy_templates.json`); `tests/contract/test_sam_policies.py` checks that they still are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stepwise_local.template import Template

SAM_DYNAMODB_POLICIES: dict[str, frozenset[str]] = {
    "DynamoDBReadPolicy": frozenset(
        {
            "dynamodb:GetItem",
            "dynamodb:Scan",
            "dynamodb:Query",
            "dynamodb:BatchGetItem",
            "dynamodb:DescribeTable",
        }
    ),
    "DynamoDBWritePolicy": frozenset({"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem"}),
    "DynamoDBCrudPolicy": frozenset(
        {
            "dynamodb:GetItem",
            "dynamodb:DeleteItem",
            "dynamodb:PutItem",
            "dynamodb:Scan",
            "dynamodb:Query",
            "dynamodb:UpdateItem",
            "dynamodb:BatchWriteItem",
            "dynamodb:BatchGetItem",
            "dynamodb:DescribeTable",
            "dynamodb:ConditionCheckItem",
        }
    ),
}


SAM_OTHER_POLICIES: dict[str, frozenset[str]] = {
    "SSMParameterWithSlashPrefixReadPolicy": frozenset(
        {"ssm:DescribeParameters", "ssm:GetParameters", "ssm:GetParameter", "ssm:GetParametersByPath"}
    ),
    "StepFunctionsExecutionPolicy": frozenset({"states:StartExecution"}),
    "LambdaInvokePolicy": frozenset({"lambda:InvokeFunction"}),
}


def other_actions(template: Template, function: str) -> set[str]:
    """The actions other than DynamoDB's that the function's policies grant (on whatever resource): those of
    the SAM policy templates above and of inline statements."""
    granted: set[str] = set()
    for policy in template.resources[function]["Properties"].get("Policies", []):
        if not isinstance(policy, dict):
            continue
        for name, body in policy.items():
            granted |= SAM_OTHER_POLICIES.get(name, frozenset())
            if name == "Statement":
                for statement in body if isinstance(body, list) else [body]:
                    if statement.get("Effect") == "Allow":
                        action = statement["Action"]
                        granted |= set(action if isinstance(action, list) else [action])
    return granted


def other_violations(template: Template, used: Iterable[tuple[str, str]]) -> list[str]:
    """`function: action` for each (function, action) outside DynamoDB no policy of the function grants."""
    return [f"{f}: {action}" for f, action in sorted(set(used)) if action not in other_actions(template, f)]


def allowed_actions(template: Template, function: str) -> dict[str, set[str]]:
    """Table (logical id) -> the DynamoDB actions the function's policy templates allow on it (its indexes
    included: SAM's templates grant `table/<name>/index/*` too)."""
    allowed: dict[str, set[str]] = {}
    for policy in template.resources[function]["Properties"].get("Policies", []):
        if not isinstance(policy, dict):
            continue
        for name, parameters in policy.items():
            actions = SAM_DYNAMODB_POLICIES.get(name)
            if actions is None:
                continue
            table = _ref(parameters["TableName"])
            allowed.setdefault(table, set()).update(actions)
    return allowed


def violations(template: Template, used: Iterable[tuple[str, str, str]]) -> list[str]:
    """`function: action on table` for each (function, table, action) no policy of the function allows."""
    found = []
    for function, table, action in sorted(set(used)):
        if action not in allowed_actions(template, function).get(table, set()):
            found.append(f"{function}: {action} on {table}")
    return found


def _ref(value: Any) -> str:
    if isinstance(value, dict) and "Ref" in value:
        return str(value["Ref"])
    raise AssertionError(f"a DynamoDB policy's TableName is not a !Ref to a table: {value!r}")
