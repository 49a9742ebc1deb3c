"""EventBridge Scheduler, fired locally: moto stores the schedules; this fires them on the emulation's clock.

Each pass (`fire_due`) reads every schedule through the Scheduler API, works out which are due at the
clock's now and invokes each one's target: the in-process Lambda whose ARN is the target's Arn, with the
target's Input after the substitution of Scheduler's context attributes (`<aws.scheduler.schedule-arn>`,
`<aws.scheduler.scheduled-time>`, `<aws.scheduler.execution-id>`, `<aws.scheduler.attempt-number>`).

- A one-time schedule (`at(...)`) fires once when its time has come, even if that was before it was
  created; with ActionAfterCompletion DELETE it is deleted after it fired.
- A recurring schedule (`cron(...)`, `rate(...)`) fires each occurrence once, within its StartDate and
  EndDate. When several occurrences went by since the last pass (the clock jumped forward), only the most
  recent one fires: like a daemon waking up, it does not replay what it missed. With ActionAfterCompletion
  DELETE, a schedule whose EndDate has passed is deleted after its last occurrence (none without EndDate).
- A DISABLED schedule does not fire; a recurring one that is enabled again fires from then on.
- A target that raises is logged and invoked again, with the next attempt number and a new execution id, on
  each following pass until it has been tried `MAX_ATTEMPTS` times (fewer if the target's RetryPolicy allows
  fewer retries): Scheduler's retry policy, without its back-off.
- Scheduler delivers at least once: `redeliver` hands a delivery to its target again, unchanged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from stepwise_local import schedule_expression

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_INSTANT = timedelta(microseconds=1)


@dataclass(frozen=True)
class Fired:
    """One delivery of a schedule's occurrence to its target (`error` is set when the target raised)."""

    schedule_arn: str
    group: str
    name: str
    scheduled_time: datetime
    target_arn: str
    function: str | None  # the template's logical id of the target, None if it is not an emulated function
    event: Any  # what the target received: the Input, context attributes substituted, parsed
    execution_id: str
    attempt: int = 1
    redelivered: bool = False
    error: str | None = None


@dataclass
class _Tracked:
    """What the emulation knows about one schedule beyond moto's record."""

    created: datetime  # on the emulation's clock
    scanned_to: datetime  # occurrences up to here were fired or skipped
    done: bool = False  # a one-time schedule that fired


@dataclass
class _Retry:
    delivery: Fired
    detail: dict[str, Any]
    attempts: int
    delete_after: bool


@dataclass
class LocalScheduler:
    """Fires due schedules: `fire_due()` once, or `start()` a thread that does every `interval` seconds."""

    client: Any  # a boto3 "scheduler" client (inside the emulation, moto answers it)
    clock: Callable[[], datetime]
    invoke: Callable[[str, Any], Any]  # (logical id, event): runs a function's handler in-process
    functions: Mapping[str, Any]  # the emulated functions, by logical id
    on_fired: Callable[[Fired], None] | None = None  # told of each delivery, from the thread that made it
    fired: list[Fired] = field(default_factory=list)
    _tracked: dict[str, _Tracked] = field(default_factory=dict)
    _retries: list[_Retry] = field(default_factory=list)
    _pass_lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    # ------------------------------------------------------------------ what the API calls tell it
    def created(self, arn: str) -> None:
        """A schedule was created (or created again under its name) now."""
        now = _second(self.clock())
        self._tracked[arn] = _Tracked(created=now, scanned_to=now - _INSTANT)

    def updated(self, arn: str) -> None:
        """A schedule was updated now: it starts over, keeping its creation time (the base of its rate)."""
        now = _second(self.clock())
        tracked = self._tracked.get(arn)
        self._tracked[arn] = _Tracked(tracked.created if tracked else now, now - _INSTANT)

    # ------------------------------------------------------------------ firing
    def fire_due(self, prefix: str = "") -> list[Fired]:
        """One pass: retry failed deliveries, then fire every schedule due now; returns the deliveries.
        With `prefix`, only the schedules whose names start with it (the others wait for a later pass)."""
        with self._pass_lock:
            now = self.clock()
            deliveries = [self._retry(retry) for retry in self._take_retries(prefix)]
            for detail in self._schedules():
                if not detail["Name"].startswith(prefix):
                    continue
                try:
                    deliveries.extend(self._fire_if_due(detail, now))
                except Exception:
                    logger.exception("cannot fire schedule %s", detail.get("Arn"))
            return deliveries

    def redeliver(self, delivery: Fired) -> Fired:
        """Deliver the same occurrence again, as Scheduler (at least once) sometimes does."""
        with self._pass_lock:
            return self._call(replace(delivery, redelivered=True, error=None))

    def _schedules(self) -> list[dict[str, Any]]:
        details = []
        for page in self.client.get_paginator("list_schedules").paginate():
            for summary in page["Schedules"]:
                try:
                    details.append(
                        self.client.get_schedule(Name=summary["Name"], GroupName=summary["GroupName"])
                    )
                except self.client.exceptions.ResourceNotFoundException:
                    continue  # deleted meanwhile
        return details

    def _fire_if_due(self, detail: dict[str, Any], now: datetime) -> list[Fired]:
        tracked = self._tracking(detail)
        expression = schedule_expression.parse(
            detail["ScheduleExpression"], detail.get("ScheduleExpressionTimezone")
        )
        if detail.get("State") == "DISABLED":
            tracked.scanned_to = max(tracked.scanned_to, now)
            return []
        if expression.one_time:
            occurrence = None if tracked.done else expression.latest(EARLIEST, now, now)
            if occurrence is None:
                return []
            tracked.done, last = True, True
        else:
            start, end = detail.get("StartDate"), detail.get("EndDate")
            after = max(tracked.scanned_to, start - _INSTANT) if start else tracked.scanned_to
            until = min(now, end) if end else now
            base = _second(start or tracked.created)
            occurrence = expression.latest(after, until, base) if until > after else None
            tracked.scanned_to = max(tracked.scanned_to, now)
            if occurrence is None:
                if end is not None and now >= end:
                    self._complete(detail)
                return []
            last = end is not None and expression.latest(occurrence, end, base) is None
        return [self._deliver(detail, occurrence, last and detail.get("ActionAfterCompletion") == "DELETE")]

    def _tracking(self, detail: dict[str, Any]) -> _Tracked:
        tracked = self._tracked.get(detail["Arn"])
        if tracked is None:  # not created through the emulation's moto: count from moto's creation time
            created = _second(detail["CreationDate"])
            tracked = self._tracked[detail["Arn"]] = _Tracked(created, created - _INSTANT)
        return tracked

    def _deliver(self, detail: dict[str, Any], occurrence: datetime, delete_after: bool) -> Fired:
        target = detail["Target"]
        delivery = self._call(
            Fired(
                schedule_arn=detail["Arn"],
                group=detail["GroupName"],
                name=detail["Name"],
                scheduled_time=occurrence,
                target_arn=target["Arn"],
                function=self._function(target["Arn"]),
                event=None,
                execution_id="",
            ),
            detail,
        )
        attempts = min(MAX_ATTEMPTS, 1 + int(target.get("RetryPolicy", {}).get("MaximumRetryAttempts", 185)))
        if delivery.error and delivery.function and attempts > 1:
            self._retries.append(_Retry(delivery, detail, attempts, delete_after))
        elif delete_after:
            self._complete(detail)
        return delivery

    def _retry(self, retry: _Retry) -> Fired:
        delivery = self._call(
            replace(retry.delivery, attempt=retry.delivery.attempt + 1, error=None), retry.detail
        )
        if delivery.error and delivery.attempt < retry.attempts:
            self._retries.append(replace(retry, delivery=delivery))
        elif retry.delete_after:
            self._complete(retry.detail)
        return delivery

    def _take_retries(self, prefix: str) -> list[_Retry]:
        retries = [retry for retry in self._retries if retry.delivery.name.startswith(prefix)]
        self._retries = [retry for retry in self._retries if not retry.delivery.name.startswith(prefix)]
        return retries

    def _call(self, delivery: Fired, detail: dict[str, Any] | None = None) -> Fired:
        """Invoke the target; with `detail`, as a new attempt (new execution id, Input substituted again)."""
        if detail is not None:
            execution_id = uuid.uuid4().hex[:16]
            text = _substitute(detail["Target"].get("Input") or "{}", delivery, execution_id)
            delivery = replace(delivery, execution_id=execution_id, event=_parsed(text))
        if delivery.function is None:
            logger.error(
                "schedule %s: target %s is not an emulated function", delivery.name, delivery.target_arn
            )
            delivery = replace(delivery, error="TargetNotEmulated")
        else:
            try:
                self.invoke(delivery.function, delivery.event)
                logger.info("schedule %s fired %s (%s)", delivery.name, delivery.function, delivery.event)
            except Exception as error:
                logger.warning(
                    "schedule %s: target %s failed", delivery.name, delivery.function, exc_info=True
                )
                delivery = replace(
                    delivery, error=f"{getattr(error, 'error_type', type(error).__name__)}: {error}"
                )
        self.fired.append(delivery)
        if self.on_fired is not None:
            self.on_fired(delivery)
        return delivery

    def _function(self, arn: str) -> str | None:
        parts = arn.split(":")
        if len(parts) >= 7 and parts[2] == "lambda" and parts[5] == "function" and parts[6] in self.functions:
            return parts[6]
        return None

    def _complete(self, detail: dict[str, Any]) -> None:
        """ActionAfterCompletion DELETE: the schedule is deleted after its last invocation, unless the target
        replaced it meanwhile (on AWS the deletion comes before an asynchronously invoked Lambda runs)."""
        if detail.get("ActionAfterCompletion") != "DELETE":
            return
        name, group = detail["Name"], detail["GroupName"]
        with contextlib.suppress(self.client.exceptions.ResourceNotFoundException):
            if self.client.get_schedule(Name=name, GroupName=group)["CreationDate"] != detail["CreationDate"]:
                return  # created again under the same name
            self.client.delete_schedule(Name=name, GroupName=group)
        self._tracked.pop(detail["Arn"], None)

    # ------------------------------------------------------------------ the background thread
    def start(self, interval: float = 1.0) -> None:
        """Fire due schedules every `interval` seconds (wall clock) until `stop()`."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, args=(interval,), name="local-scheduler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=30)
        self._thread = None

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.fire_due()
            except Exception:
                logger.exception("the local scheduler's pass failed")


def scheduled_time_text(moment: datetime) -> str:
    """`<aws.scheduler.scheduled-time>`: ISO 8601 in UTC to the second, e.g. 2026-11-23T17:00:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _second(moment: datetime) -> datetime:
    """Scheduler's times are whole seconds (and UTC)."""
    return moment.astimezone(UTC).replace(microsecond=0)


def _substitute(text: str, delivery: Fired, execution_id: str) -> str:
    for keyword, value in (
        ("schedule-arn", delivery.schedule_arn),
        ("scheduled-time", scheduled_time_text(delivery.scheduled_time)),
        ("execution-id", execution_id),
        ("attempt-number", str(delivery.attempt)),
    ):
        text = text.replace(f"<aws.scheduler.{keyword}>", value)
    return text


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
