"""Reminder schedules in EventBridge Scheduler: one schedule per reminder, in the stack's schedule group.

When a schedule fires, Scheduler invokes the FireReminder function with the reminder's ids and the
occurrence's time (the `<aws.scheduler.scheduled-time>` context attribute), which names the turn it starts:
a schedule delivered twice still gives one message.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

if TYPE_CHECKING:
    from stepwise.reminders.models import Reminder

# Scheduler retries a failed invocation of the target for up to an hour; a reminder later than that is stale.
RETRY_POLICY = {"MaximumEventAgeInSeconds": 3600, "MaximumRetryAttempts": 20}


def fire_input(reminder: Reminder) -> str:
    """The target's Input: the reminder's ids and the occurrence's time, filled in by Scheduler."""
    return json.dumps(
        {
            "user_id": reminder.user_id,
            "chat_id": reminder.chat_id,
            "reminder_id": reminder.reminder_id,
            "scheduled_time": "<aws.scheduler.scheduled-time>",
        }
    )


class EventBridgeSchedules:
    """The Schedules port on EventBridge Scheduler."""

    def __init__(self, client: Any, group: str, target_arn: str, role_arn: str) -> None:
        self._client = client
        self._group = group
        self._target_arn = target_arn
        self._role_arn = role_arn

    def create(self, reminder: Reminder) -> None:
        try:
            self._client.create_schedule(
                Name=reminder.schedule_name,
                GroupName=self._group,
                Description=f"Stepwise reminder #{reminder.reminder_id} of user {reminder.user_id}",
                ScheduleExpression=reminder.expression,
                ScheduleExpressionTimezone=reminder.timezone,
                FlexibleTimeWindow={"Mode": "OFF"},
                Target={
                    "Arn": self._target_arn,
                    "RoleArn": self._role_arn,
                    "Input": fire_input(reminder),
                    "RetryPolicy": RETRY_POLICY,
                },
                ActionAfterCompletion="DELETE" if reminder.one_time else "NONE",
                State="ENABLED",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConflictException":  # created by an earlier attempt
                raise

    def delete(self, name: str) -> None:
        try:
            self._client.delete_schedule(Name=name, GroupName=self._group)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
