"""What each kind of turn costs on AWS, and the CPU the project's own code spends on it.

Plays turns of each kind through the webhook on the local emulation (the real state machine, warm function
containers, a fake Messages API that answers at once, the fake Bot API, INFO logs as deployed) and counts:
billed state transitions (every state entered, from the execution history), Lambda invocations, DynamoDB
request units (from the SDK's requests), Telegram requests, and the API Gateway request(s). It prices them at
us-east-1 list prices, AWS only (the model's tokens are not included; the Lambda time spent waiting for the
model is, at an assumed MODEL_SECONDS per call). The CPU is the thread CPU time of the functions' handlers
(core, SDK clients, logging) minus the time spent inside the emulated AWS services; it is printed in
milliseconds and as a ratio to a fixed reference workload measured in the same run (machines differ).

Run: make bench (or .venv/bin/python benchmarks/turn_cost.py). With --oauth-server the servers list names one
OAuth server (docs/accounts.md) that the bench's person never connected: their turns must cost the same.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import statistics
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

import boto3  # noqa: E402
from moto.core.botocore_stubber import BotocoreStubber  # noqa: E402

from stepwise.aws.http_transport import HttpTransport  # noqa: E402
from stepwise.telegram.conversation import Conversation  # noqa: E402
from stepwise_local import updates  # noqa: E402
from stepwise_local.anthropic_server import FakeAnthropic, text, tool_use  # noqa: E402
from stepwise_local.emulation import Emulation, LocalConfig  # noqa: E402
from stepwise_local.telegram_server import FakeBotApi  # noqa: E402
from stepwise_local.template import Template  # noqa: E402

# us-east-1 list prices (2026-11).
PRICE = {
    "transition": 0.000025,  # Step Functions Standard, per state transition
    "lambda_request": 0.2e-6,
    "gb_second": 1.66667e-5,  # Lambda x86_64 (arm64: GB_SECOND_ARM64)
    "wru": 0.625e-6,  # DynamoDB on-demand write request unit
    "rru": 0.125e-6,  # DynamoDB on-demand read request unit
    "http_api": 1.0e-6,  # API Gateway HTTP API, per request
}
GB_SECOND_ARM64 = 1.33334e-5
# Assumed latencies for the Lambda time estimate (billed duration = own CPU + waiting).
AWS_REQUEST_SECONDS, TELEGRAM_SECONDS, MODEL_SECONDS = 0.008, 0.05, 1.0
MESSAGES_PATH = "/v1/messages"  # a model call's request: its time is MODEL_SECONDS, not a Telegram request's
# A voice note: modelled, not measured (no AWS here). LoadContext waits for Amazon Transcribe's batch job
# (TRANSCRIBE_WAIT_SECONDS for a note of VOICE_NOTE_SECONDS); Transcribe bills $0.024 a minute (15 s minimum);
# S3 bills the note's PUT and Transcribe's PUT of its transcript, and the two GETs (deletes are free).
VOICE_NOTE_SECONDS, TRANSCRIBE_WAIT_SECONDS = 15, 10.0
TRANSCRIBE_PER_MINUTE, S3_PUT, S3_GET = 0.024, 0.005e-3, 0.0004e-3
USER, RUNS, WARMUP = 6161, int(os.environ.get("BENCH_RUNS", "10")), 2
TARGETS = {"plain turn": (5, 0.15, 60.0), "one tool round": (8, None, None), "approval": (12, None, None)}


@dataclass
class Invocation:
    function: str
    cpu: float = 0.0  # seconds of the handler's own thread CPU
    emulated: float = 0.0  # seconds of that spent inside the emulated AWS services
    aws_requests: int = 0
    telegram_requests: int = 0  # the Bot API's (priced at TELEGRAM_SECONDS each)
    model_requests: int = 0  # the Messages API's (their time is the model's: MODEL_SECONDS per call)
    units: Counter[str] = field(default_factory=Counter)
    requests: Counter[str] = field(default_factory=Counter)  # "Table.Operation" of each DynamoDB request
    waited: float = 0.0  # modelled seconds of waiting besides the requests (a Transcribe job)
    voice_notes: int = 0  # notes it transcribed (priced at Transcribe's and S3's rates)


class Meter:
    """Measures every function invocation of the emulation (run on moto's execution threads)."""

    def __init__(self, memory_mb: dict[str, int], gb_second: float) -> None:
        self.memory_mb = memory_mb
        self.gb_second = gb_second
        self.invocations: list[Invocation] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def current(self) -> Invocation | None:
        return getattr(self._local, "invocation", None)

    def install(self) -> list[Any]:
        meter = self
        original_invoke = Emulation.invoke
        original_stub = BotocoreStubber.__call__
        original_send = HttpTransport.request

        def invoke(emulation: Emulation, logical_id: str, event: Any) -> Any:
            record = Invocation(logical_id)
            meter._local.invocation = record
            start = time.thread_time()
            try:
                return original_invoke(emulation, logical_id, event)
            finally:
                record.cpu = time.thread_time() - start
                meter._local.invocation = None
                with meter._lock:
                    meter.invocations.append(record)

        def stub(self: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            record = meter.current()
            if record is None:
                return original_stub(self, event_name, request, **kwargs)
            start = time.thread_time()
            try:
                return original_stub(self, event_name, request, **kwargs)
            finally:
                record.emulated += time.thread_time() - start
                record.aws_requests += 1

        def send(self: HttpTransport, method: str, url: str, **kwargs: Any) -> Any:
            record = meter.current()
            if record is not None and urlsplit(url).path.endswith(MESSAGES_PATH):
                record.model_requests += 1
            elif record is not None:
                record.telegram_requests += 1
            return original_send(self, method, url, **kwargs)

        Emulation.invoke = invoke  # type: ignore[method-assign]
        BotocoreStubber.__call__ = stub  # type: ignore[method-assign]
        HttpTransport.request = send  # type: ignore[method-assign]
        return [original_invoke, original_stub, original_send]

    def count_dynamodb(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        """botocore before-call hook: the request units of one DynamoDB request (items of this app are small:
        one unit per read, one per started KB written, double in a transaction)."""
        record = self.current()
        if record is None:
            return
        body = json.loads(params.get("body") or b"{}")
        operation = model.name
        table = body.get("TableName") or ",".join(
            sorted({next(iter(i.values())).get("TableName", "?") for i in body.get("TransactItems", [])})
        )
        record.requests[f"{table.split('-')[-1]}.{operation}"] += 1
        if operation in ("GetItem", "Query", "Scan", "BatchGetItem"):
            # an eventually consistent read of up to 4 KB is half a unit; a strongly consistent one a unit
            record.units["rru"] += 1 if body.get("ConsistentRead") else 0.5
        elif operation == "TransactWriteItems":
            for item in body.get("TransactItems", []):
                record.units["wru"] += 2 * write_units(next(iter(item.values())))
        elif operation in ("PutItem", "UpdateItem", "DeleteItem"):
            record.units["wru"] += write_units(body)

    def turn_cost(
        self, invocations: list[Invocation], transitions: int, api_requests: int, gb_second: float = 0.0
    ) -> dict[str, float]:
        """Dollars of one turn by service (Lambda at `gb_second`, else at the template's architecture's)."""
        gb_second = gb_second or self.gb_second
        lambda_cost = 0.0
        for call in invocations:
            seconds = (call.cpu - call.emulated) + AWS_REQUEST_SECONDS * call.aws_requests
            seconds += TELEGRAM_SECONDS * call.telegram_requests
            if call.function == "CallModelFunction":
                seconds += MODEL_SECONDS
            seconds += call.waited
            billed_ms = math.ceil(seconds * 1000)
            lambda_cost += PRICE["lambda_request"]
            lambda_cost += billed_ms / 1000 * self.memory_mb[call.function] / 1024 * gb_second
        units: Counter[str] = sum((call.units for call in invocations), Counter())
        notes = sum(call.voice_notes for call in invocations)
        transcribe = notes * (
            max(15, VOICE_NOTE_SECONDS) / 60 * TRANSCRIBE_PER_MINUTE + 2 * S3_PUT + 2 * S3_GET
        )
        return {
            "Step Functions": transitions * PRICE["transition"],
            "Lambda": lambda_cost,
            "DynamoDB": units["wru"] * PRICE["wru"] + units["rru"] * PRICE["rru"],
            "API Gateway": api_requests * PRICE["http_api"],
            "Transcribe+S3": transcribe,
        }


def write_units(request: dict[str, Any]) -> int:
    item = request.get("Item") or request.get("Key") or {}
    size = len(json.dumps(item)) + len(json.dumps(request.get("ExpressionAttributeValues", {})))
    return max(1, math.ceil(size / 1024))


def reference_seconds() -> float:
    """A fixed CPU workload (JSON and pydantic work of the kind a turn does), measured in this run."""
    from pydantic import BaseModel

    class Row(BaseModel):
        id: str
        role: str
        content: str
        created_at: str

    rows = [{"id": f"m{n}", "role": "user", "content": "x" * 200, "created_at": "2026"} for n in range(50)]
    start = time.thread_time()
    for _ in range(20):
        json.loads(json.dumps([Row.model_validate(row).model_dump() for row in rows]))
    return time.thread_time() - start


@contextlib.contextmanager
def bench_stack(
    meter: Meter, user: int, parameters: dict[str, str] | None = None, env: dict[str, str] | None = None
) -> Iterator[tuple[Emulation, FakeBotApi, FakeAnthropic]]:
    """The emulation with warm containers, the fake Bot API and Messages API, and the meter counting
    DynamoDB's request units. The functions log at INFO as deployed (that CPU is counted); the lines
    themselves go nowhere."""
    with (
        Path(os.devnull).open("w") as sink,
        contextlib.redirect_stdout(sink),
        warnings.catch_warnings(),
        FakeBotApi("123456:bench") as telegram,
        FakeAnthropic() as anthropic,
    ):
        warnings.simplefilter("ignore")
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token="123456:bench",  # noqa: S106 (a fake token for the local Bot API)
            anthropic_api_key=anthropic.api_key,
            anthropic_base_url=anthropic.base_url,
            parameters={"AllowedUserIds": str(user), **(parameters or {})},
            warm_containers=True,
            env=env or {},
        )
        with Emulation(config) as emulation:
            boto3._get_default_session().events.register("before-call.dynamodb", meter.count_dynamodb)
            yield emulation, telegram, anthropic


def press_approve(emulation: Emulation, telegram: FakeBotApi, user: int) -> None:
    """Wait for the approval request's buttons in the user's chat and press Approve."""
    deadline = time.monotonic() + 30
    while not any(m.get("reply_markup") for m in telegram.messages(user)[-1:]):
        if time.monotonic() > deadline:
            raise SystemExit("no approval buttons within 30 s: the approval turn did not ask")
        time.sleep(0.002)
    message = telegram.messages(user)[-1]
    data = message["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
    chat = {"id": user, "type": "private"}
    emulation.post_update(
        updates.callback_query(user, data, {"message_id": message["message_id"], "date": 0, "chat": chat})
    )


def main() -> None:
    template = Template()
    memory = {logical_id: spec.memory_size for logical_id, spec in template.functions().items()}
    architecture = template.doc["Parameters"]["Architecture"]["Default"]
    meter = Meter(memory, GB_SECOND_ARM64 if architecture == "arm64" else PRICE["gb_second"])
    meter.install()
    reference = statistics.median(reference_seconds() for _ in range(7))
    # Voice notes through Amazon Transcribe (moto, patched to write its transcript), as deployed.
    with bench_stack(meter, USER, env={"VOICE_TRANSCRIBER": "transcribe"}) as (
        emulation,
        telegram,
        anthropic,
    ):
        if "--oauth-server" in sys.argv:  # never contacted: nobody connects it
            emulation.put_parameter(
                OAUTH_SERVERS, json.dumps([{"name": "notes", "url": OAUTH_URL, "auth": "oauth"}])
            )
            emulation.config.env["MCP_SERVERS_PARAMETER"] = OAUTH_SERVERS

        def play(kind: str) -> tuple[list[Invocation], int, int]:
            before_calls, before_runs = (
                len(meter.invocations),
                {e["name"] for e in emulation.executions()},
            )
            thread = topic[0] if kind == TOPIC else None
            where = Conversation(USER, thread)
            update = updates.text_message(USER, PROMPTS[kind], topic=thread)
            if kind in (GROUP, GROUP_QUIET):
                where = Conversation(updates.GROUP_CHAT_ID)
                update = updates.group_message(USER, PROMPTS[kind])
            if kind == SECRETARY:  # a contact writes to the bench's person, who taps Send
                where = Conversation(CONTACT, account=USER)
                telegram.contact_wrote(BENCH_CONNECTION, CONTACT)
                update = updates.business_message(
                    CONTACT, PROMPTS[kind], connection_id=BENCH_CONNECTION, first_name="Ann"
                )
                anthropic.script(text("Sure, 1pm."))
            if kind == VOICE:
                file_id = telegram.add_file(VOICE_BYTES, f"voice/bench-{before_calls}.oga")
                update = updates.voice_message(USER, file_id=file_id, duration=VOICE_NOTE_SECONDS)
                anthropic.script(text("Sure."))
            if kind == "one tool round":
                anthropic.script(tool_use(("add_task", {"title": "bench"})), text("Added."))
            elif kind == "approval":  # the task play_setup has just added
                anthropic.script(tool_use(("delete_task", {"task_id": added[0]})), text("Deleted."))
            elif kind == JOB:
                anthropic.default = job_answers
            api_requests = 1
            emulation.post_update(update)
            if kind == GROUP_QUIET:  # nothing starts: the webhook's invocation is all it costs
                return meter.invocations[before_calls:], 0, api_requests
            if kind in ("approval", SECRETARY):  # Approve; Send (the first button too)
                press_approve(emulation, telegram, USER)
                api_requests += 1
            emulation.wait_for_update(where, update["update_id"])
            if kind == JOB:  # the job runs on its own: wait for its report to be answered
                deadline = time.monotonic() + 30
                while "is done" not in (telegram.messages(USER) or [{"text": ""}])[-1]["text"]:
                    if time.monotonic() > deadline:
                        raise SystemExit("no job report within 30 s")
                    time.sleep(0.002)
                anthropic.reset()
            emulation.wait_idle(where)
            runs = [e["name"] for e in emulation.executions() if e["name"] not in before_runs]
            transitions = sum(
                1 for name in runs for e in emulation.history(name) if e["type"].endswith("StateEntered")
            )
            invocations = meter.invocations[before_calls:]
            if kind == VOICE:
                loaded = next(call for call in invocations if call.function == "LoadContextFunction")
                loaded.waited, loaded.voice_notes = TRANSCRIBE_WAIT_SECONDS, 1
            return invocations, transitions, api_requests

        emulation.post_update(updates.business_connection(USER, connection_id=BENCH_CONNECTION))
        telegram.add_business_connection(BENCH_CONNECTION, USER)
        rows = []
        added = [0]  # task ids are counted per user: the newest task's id
        topic = [telegram.add_topic(USER, "Bench")]  # a topic its user named (no renaming)
        for kind in PROMPTS:
            samples = []
            for run in range(WARMUP + RUNS):
                if kind == "approval":  # a task to delete
                    play_setup(emulation, anthropic)
                    added[0] += 1
                elif kind in ("one tool round", JOB):
                    added[0] += 1
                invocations, transitions, api_requests = play(kind)
                if run >= WARMUP:
                    samples.append((invocations, transitions, api_requests))
            rows.append((kind, samples))
    print(f"Lambda on {architecture} (the template's default), ${meter.gb_second * 1e6:.2f} per million GB-s")
    if "--oauth-server" in sys.argv:
        print("the servers list names one OAuth server, which the bench's person never connected")
    print_report(meter, rows, reference)
    if "--detail" in sys.argv:
        print_requests(rows)


OAUTH_SERVERS, OAUTH_URL = "/stepwise/mcp/bench-servers", "https://notes.example/mcp"
SECRETARY = "a contact's message (secretary, Send)"
BENCH_CONNECTION, CONTACT = "bc-bench", 7_300_001
JOB = "job (1 round)"
VOICE = "voice note (15 s)"
VOICE_BYTES = b"OggS" + bytes(range(256)) * 90  # moto's Transcribe does not listen; the bytes only travel
TOPIC = "plain, in a topic"  # a topic its user named: no renaming
GROUP = "plain, in a group"  # a member's message that mentions the bot
GROUP_QUIET = "group, not addressed"  # a member's message that does not: no turn
PROMPTS = {
    "plain turn": "hello",
    TOPIC: "hello",
    GROUP: "@stepwise_bot hello",
    GROUP_QUIET: "anyone for dinner tonight?",
    "one tool round": "add a task",
    "approval": "delete task 1",
    "command (/tasks)": "/tasks",
    # The parent turn (spawn_job), the job's own execution (one tool round) and the chat turn of its report.
    JOB: "in the background: add a task",
    # A 15-second voice note answered by the model (Amazon Transcribe on moto; its wait is modelled).
    VOICE: "",
    # A contact's message to the bench's person's business account: a suggestion, then Send (issue 42).
    SECRETARY: "lunch tomorrow?",
}


def job_answers(request: dict[str, Any]) -> Any:
    """The fake model's answers for the job kind: the parent turn starts a job and says so; the job adds a
    task and reports (by who asks: the two run at the same time)."""
    asked = json.dumps(request["messages"])
    content = request["messages"][-1]["content"]
    answered = isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)
    if "## Background job" in asked:
        return text("Added.") if answered else tool_use(("add_task", {"title": "bench"}))
    if answered:
        return text("Started a job.")
    return tool_use(("spawn_job", {"task": "Add a task 'bench'.", "title": "Bench"}))


def play_setup(emulation: Emulation, anthropic: FakeAnthropic) -> None:
    """Add task #1 for the approval turn to delete (through a turn of its own, not measured)."""
    anthropic.script(tool_use(("add_task", {"title": "to delete"})), text("Added."))
    update = updates.text_message(USER, "add a task to delete")
    emulation.post_update(update)
    emulation.wait_for_update(USER, update["update_id"])
    emulation.wait_idle(USER)


def print_requests(rows: list[tuple[str, list[Any]]]) -> None:
    """With --detail: each function's requests in one turn of each kind: the Bot API's and the model's, and
    DynamoDB's."""
    for kind, samples in rows:
        print(f"\n{kind}: requests by function")
        for call in samples[-1][0]:
            listed = ", ".join(f"{name} x{count}" for name, count in sorted(call.requests.items()))
            units = f"{call.units['wru']} WRU {call.units['rru']} RRU"
            cpu = f"{(call.cpu - call.emulated) * 1000:.1f} ms"
            http = f"{call.telegram_requests} Bot API, {call.model_requests} model"
            print(f"  {call.function:<26}{cpu:>9}  {http:<19}{units:<16}{listed}")


def print_report(meter: Meter, rows: list[tuple[str, list[Any]]], reference: float) -> None:
    print(
        f"AWS cost per 1,000 turns (us-east-1 list prices; model tokens excluded; {RUNS} turns of each kind)"
    )
    print(
        f"{'kind of turn':<18}{'transitions':>12}{'Lambda calls':>13}{'DynamoDB RU':>12}"
        f"{'Step Fn':>9}{'Lambda':>9}{'DynamoDB':>9}{'API GW':>8}{'Transcr.':>9}{'total':>9}{'on x86_64':>11}"
    )
    cpu_rows = []
    for kind, samples in rows:
        invocations, transitions, _ = samples[-1]
        units: Counter[str] = sum((call.units for call in invocations), Counter())
        costs = [meter.turn_cost(*sample) for sample in samples]
        median = {key: statistics.median(c[key] for c in costs) * 1000 for key in costs[0]}
        total = sum(median.values())
        on_x86 = statistics.median(sum(meter.turn_cost(*s, PRICE["gb_second"]).values()) for s in samples)
        print(
            f"{kind:<18}{transitions:>12}{len(invocations):>13}{units['wru'] + units['rru']:>12}"
            f"{median['Step Functions']:>9.4f}{median['Lambda']:>9.4f}{median['DynamoDB']:>9.4f}"
            f"{median['API Gateway']:>8.4f}{median['Transcribe+S3']:>9.4f}{total:>9.4f}{on_x86 * 1000:>11.4f}"
        )
        cpu = [sum(call.cpu - call.emulated for call in sample[0]) for sample in samples]
        cpu_rows.append((kind, statistics.median(cpu), max(cpu), {c.function for c in invocations}))
    print(
        f"  assumptions for Lambda time: own CPU + {AWS_REQUEST_SECONDS * 1000:.0f} ms per AWS request + "
        f"{TELEGRAM_SECONDS * 1000:.0f} ms per Telegram request + {MODEL_SECONDS:.1f} s per model call"
    )
    print(
        f"  a voice note (modelled): {TRANSCRIBE_WAIT_SECONDS:.0f} s of LoadContext waiting for Transcribe, "
        f"{VOICE_NOTE_SECONDS} s billed at ${TRANSCRIBE_PER_MINUTE} a minute, 2 S3 PUTs and 2 GETs"
    )
    print(
        f"\nthe project's own CPU per warm turn (reference workload: {reference * 1000:.1f} ms in this run)"
    )
    print(f"{'kind of turn':<18}{'median':>10}{'worst':>10}{'x reference':>13}")
    for kind, median_cpu, worst, _ in cpu_rows:
        print(f"{kind:<18}{median_cpu * 1000:>8.1f} ms{worst * 1000:>7.1f} ms{median_cpu / reference:>13.2f}")
    for kind, (max_transitions, max_dollars, max_ms) in TARGETS.items():
        samples = dict(rows)[kind]
        transitions = samples[-1][1]
        line = f"target {kind}: at most {max_transitions} transitions (measured {transitions})"
        if max_dollars is not None:
            total = statistics.median(sum(meter.turn_cost(*s).values()) for s in samples) * 1000
            line += f", at most ${max_dollars:.2f} per 1,000 (measured ${total:.4f})"
        if max_ms is not None:
            median_cpu = next(row[1] for row in cpu_rows if row[0] == kind)
            line += f", at most {max_ms:.0f} ms CPU (measured {median_cpu * 1000:.1f} ms)"
        print(line)


if __name__ == "__main__":
    main()
