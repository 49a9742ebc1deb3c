"""The emulation's own view of executions: it holds while moto is still starting one, and a turn waiting for a
tap is at rest."""

from __future__ import annotations

from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from support.stack import Stack

from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use
from stepwise_local.emulation import FAKE_AWS_ENV

ACCOUNT = "123456789012"  # moto's default account, the emulation's


def test_an_execution_listed_before_its_worker_gave_it_a_status_lists_as_running(stack: Stack) -> None:
    # Given a turn that ran
    user = stack.new_user()
    stack.anthropic.script(text("Hi."))
    update = updates.text_message(user, "hello")
    stack.emulation.post_update(update)
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)
    backend = stepfunctions_parser_backends[ACCOUNT][FAKE_AWS_ENV["AWS_REGION"]]
    (execution,) = [e for e in backend._get_executions() if f"chat{user}-" in e.exec_arn]
    kept = execution.exec_status
    # When moto has listed it but its worker has not yet said it runs (the moment after StartExecution)
    execution.exec_status = None
    try:
        listed = [e for e in stack.emulation.executions() if e["name"].startswith(f"chat{user}-")]
    finally:
        execution.exec_status = kept
    # Then listing works, and shows it running
    assert [e["status"] for e in listed] == ["RUNNING"]


def test_a_turn_waiting_for_a_tap_is_at_rest_and_leaving_the_stack_does_not_wait_for_it(stack: Stack) -> None:
    # Given a turn whose tool waits for an approval
    user = stack.new_user()
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Done as you decided."))
    DynamoTaskRepository(stack.emulation.table("TasksTable")).add(user, "buy milk", "", "2026-11-22T10:00Z")
    name = stack.send(user, "delete the milk task")
    message = stack.buttons(user)
    # Then, once the approval's function has returned (its message may show a moment before), the turn runs
    # at rest in the approval's callback: the stack's exit (make chat's Ctrl-D) does not wait for it
    assert stack.emulation.until(lambda: stack.emulation.waits_for_token(name), timeout=20)
    assert stack.emulation.describe(name)["status"] == "RUNNING"
    # And once pressed it works again until it ends
    stack.press(user, message, "Deny")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert not stack.emulation.waits_for_token(name)
