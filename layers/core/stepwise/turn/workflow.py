"""Starting turns: the port, and its Step Functions adapter (execution names make a retried start a no-op)."""

from __future__ import annotations

import json
from typing import Any, Protocol

from botocore.exceptions import ClientError


class TurnStarter(Protocol):
    """Starts one durable turn per name."""

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        """Start the turn; False when a turn of that name exists already (a duplicate)."""
        ...


class StepFunctionsStarter:
    """TurnStarter on StartExecution of a Standard state machine."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self._arn = state_machine_arn

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        try:
            self._client.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(payload))
        except ClientError as error:
            if error.response["Error"]["Code"] == "ExecutionAlreadyExists":
                return False
            raise
        return True


class TurnResumer(Protocol):
    """Resumes a turn waiting on a task token."""

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        """Deliver the output; False when the token is no longer valid (timed out, already used)."""
        ...


class StepFunctionsResumer:
    """TurnResumer on SendTaskSuccess."""

    STALE_TOKEN_ERRORS = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})

    def __init__(self, client: Any) -> None:
        self._client = client

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        try:
            self._client.send_task_success(taskToken=task_token, output=json.dumps(output))
        except ClientError as error:
            if error.response["Error"]["Code"] in self.STALE_TOKEN_ERRORS:
                return False
            raise
        return True


class TurnStopper(Protocol):
    """Stops a running execution (a background job the user stops)."""

    def stop(self, name: str, cause: str) -> bool:
        """Stop the execution; False when it is not running (it ended, or never started)."""
        ...


class StepFunctionsStopper:
    """TurnStopper on StopExecution of the turns' state machine."""

    def __init__(self, client: Any, state_machine_arn: str) -> None:
        self._client = client
        self._execution_prefix = state_machine_arn.replace(":stateMachine:", ":execution:") + ":"

    def stop(self, name: str, cause: str) -> bool:
        arn = self._execution_prefix + name
        try:
            status = self._client.describe_execution(executionArn=arn)["status"]
            if status != "RUNNING":
                return False
            self._client.stop_execution(executionArn=arn, cause=cause[:32768])
        except ClientError as error:
            if error.response["Error"]["Code"] in ("ExecutionDoesNotExist", "ValidationException"):
                return False
            raise
        return True
