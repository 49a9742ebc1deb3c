"""moto 5.2.5's EventBridge Scheduler as the emulation uses it: its gaps closed (each marked `moto gap`), and
every create and update reported to the LocalScheduler, which fires the schedules (moto never does)."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from moto.scheduler.exceptions import ValidationException
from moto.scheduler.models import EventBridgeSchedulerBackend
from moto.scheduler.responses import EventBridgeSchedulerResponse

from stepwise_local import schedule_expression
from stepwise_local.scheduler import LocalScheduler


def patches(scheduler: LocalScheduler) -> list[Any]:
    """The mock.patch objects to enter for the emulation's lifetime."""
    create = EventBridgeSchedulerBackend.create_schedule
    update = EventBridgeSchedulerResponse.update_schedule

    def create_schedule(backend: EventBridgeSchedulerBackend, **kwargs: Any) -> Any:
        _validate(kwargs["schedule_expression"], kwargs["schedule_expression_timezone"])
        # moto gap: a GroupName that does not exist is a KeyError (a 500), not ResourceNotFoundException.
        backend.get_schedule_group(kwargs["group_name"])
        schedule = create(backend, **kwargs)
        scheduler.created(schedule.arn)
        return schedule

    def update_schedule(response: EventBridgeSchedulerResponse) -> str:
        _validate(
            response._get_param("ScheduleExpression"), response._get_param("ScheduleExpressionTimezone")
        )
        body = update(response)
        schedule = response.scheduler_backend.get_schedule(
            response._get_param("GroupName"), response.uri.split("?")[0].split("/")[-1]
        )
        # moto gap: UpdateSchedule ignores ActionAfterCompletion and leaves an omitted State unset; AWS
        # replaces the whole schedule, and an omitted State means ENABLED.
        schedule.action_after_completion = response._get_param("ActionAfterCompletion")
        schedule.state = schedule.state or "ENABLED"
        scheduler.updated(json.loads(body)["ScheduleArn"])
        return body

    return [
        mock.patch.object(EventBridgeSchedulerBackend, "create_schedule", create_schedule),
        mock.patch.object(EventBridgeSchedulerResponse, "update_schedule", update_schedule),
    ]


def _validate(expression: str | None, timezone: str | None) -> None:
    """moto gap: schedule expressions and time zones are not checked; Scheduler rejects invalid ones. So
    does the emulation, and also the valid cron features it cannot fire (L, W, #)."""
    try:
        schedule_expression.parse(expression or "", timezone)
    except ValueError as error:
        raise ValidationException(f"Invalid Schedule Expression {expression!r}: {error}") from error
