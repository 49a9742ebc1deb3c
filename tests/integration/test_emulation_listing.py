"""The emulation's own view of executions holds while moto is still starting one."""

from __future__ import annotations

from moto.stepfunctions.parser.models import stepfunctions_parser_backends
from support.stack import Stack

from stepwise_local import updates
from stepwise_local.anthropic_server import text
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
