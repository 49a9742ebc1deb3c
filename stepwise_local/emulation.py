"""The local AWS emulation: moto executes the real state machine; its Lambda tasks run the real handlers
in-process, each with the environment template.yaml gives it; tables, secrets and schedule groups come from
the template. EventBridge Scheduler schedules the functions create fire on the emulation's clock (the host's
plus an offset that `advance_clock` moves; see stepwise_local.scheduler).

moto 5.2.5 needs a few patches for this (each marked `moto gap`, below and in stepwise_local.moto_scheduler).
Used by `make chat` and the tests.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import threading
import time
import traceback
import types
import urllib.request
import uuid
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO, TypeVar
from unittest import mock

import boto3
import moto.stepfunctions.parser.asl.component.common.retry.retrier_decl as moto_retrier
from aws_lambda_powertools.utilities import parameters
from botocore.awsrequest import AWSResponse
from moto import mock_aws
from moto.awslambda.exceptions import LambdaClientError, UnknownFunctionException
from moto.awslambda_simple.models import LambdaSimpleBackend
from moto.dynamodb.responses import DynamoHandler
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
from moto.stepfunctions.parser.asl.eval.environment import Environment as AslEnvironment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramStopped
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

from stepwise_local import moto_scheduler, moto_speedups
from stepwise_local.containers import Containers
from stepwise_local.moto_polly import ogg_opus_speech
from stepwise_local.moto_transcribe import patch_transcribe_output
from stepwise_local.scheduler import Fired, LocalScheduler
from stepwise_local.template import REGION, REPO_ROOT, FunctionSpec, Template

LAYER_DIR = REPO_ROOT / "layers" / "core"
DEFAULT_TRANSCRIPT = "hello from amazon transcribe"  # what moto's Transcribe hears unless told
FAKE_AWS_ENV = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
# A Lambda sees only its template environment; of the host's, the emulation keeps just these.
HOST_ENV_KEPT = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "PYTEST_CURRENT_TEST",
)
T = TypeVar("T")
SECRET_PARAMETERS = {
    "bot_token": "TelegramBotTokenParameter",
    "webhook_secret": "TelegramWebhookSecretParameter",
    "anthropic_api_key": "AnthropicApiKeyParameter",
}


class _Clients:
    """boto3.client and boto3.resource while the emulation runs. boto3's default session is not thread-safe
    while clients are made, and here moto's execution threads, the handlers and the caller all make them:
    making is serialized (use is thread-safe). A client a function asks for with plain arguments only
    (`boto3.client("dynamodb")`, on its own thread, while `share_with` says so) is made once and handed to
    every function after it: each Lambda invocation here builds a new runtime, and making its clients again
    was a tenth to a quarter of an integration test's time. What a function adds to its client (the plain
    values' handlers of `aws.dynamo_tables`, registered under fixed ids) is the same for every function;
    the tests' and moto's own clients are never shared."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.share_with: Callable[[], bool] = lambda: False
        self._made: dict[tuple[Any, ...], Any] = {}

    def wrap(self, factory: Callable[..., Any], *, shared: bool) -> Callable[..., Any]:
        def create(*args: Any, **kwargs: Any) -> Any:
            plain = shared and all(isinstance(v, str) for v in (*args, *kwargs.values()))
            key = (factory, args, tuple(sorted(kwargs.items())))
            with self.lock:
                if not (plain and self.share_with()):
                    return factory(*args, **kwargs)
                if key not in self._made:
                    self._made[key] = factory(*args, **kwargs)
                return self._made[key]

        return create


@dataclass
class LocalConfig:
    """How the emulated stack is wired to its local peers."""

    telegram_base_url: str
    bot_token: str = "123456:local-bot-token"
    webhook_secret: str = "local-webhook-secret"
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    ssm_parameters: dict[str, str] = field(default_factory=dict)  # more SSM parameters (MCP servers, tokens)
    env: dict[str, str] = field(default_factory=dict)
    retry_time_scale: float = 0.001
    log_stream: TextIO | None = None
    # A thread fires due schedules every `schedule_poll_seconds` (make chat); tests call fire_due_schedules.
    fire_schedules: bool = False
    schedule_poll_seconds: float = 1.0
    on_fired: Callable[[Fired], None] | None = None  # told of each delivery the local scheduler makes
    # Keep each function's runtime (settings, clients, adapters) between its invocations, as a warm Lambda
    # container does (benchmarks). Off by default: tests change settings between turns.
    warm_containers: bool = False
    # What moto's Amazon Transcribe jobs hear in a note's bytes (tests with VOICE_TRANSCRIBER=transcribe).
    transcripts: Callable[[bytes], str] | None = None
    # Containers (cold starts): how long an idle one is kept, on the emulation's clock; how long a warm-up's
    # init goes on after its handler returned (real seconds: a slow warm-up); warm-up invocations that fail.
    container_idle_seconds: float = 600.0
    warmup_init_seconds: float = 0.0
    fail_warmups: bool = False


def _speak_offline(text: str) -> bytes:
    """Ogg Opus of `text`, spoken by eSpeak NG (what the emulated Polly answers with)."""
    from stepwise.voice.local_tts import EspeakSpeaker

    return EspeakSpeaker().synthesize(text).ogg_opus


def _stop_interrupting_callbacks() -> Callable[..., None]:
    original = AslEnvironment.set_stop

    def set_stop(env: Any, stop_date: Any, cause: str | None, error: str | None) -> None:
        original(env, stop_date=stop_date, cause=cause, error=error)
        for endpoint in list(env.callback_pool_manager._pool.values()):
            endpoint.interrupt_all()

    return set_stop


def _error_unless_stopped() -> Callable[..., None]:
    original = AslEnvironment.set_error

    def set_error(env: Any, error: Any) -> None:
        if not isinstance(env.program_state(), ProgramStopped):
            original(env, error)

    return set_error


class LambdaCrash(Exception):
    """An injected crash of a Lambda invocation, reported as Lambda reports a dead runtime."""

    def __init__(self, function: str, when: str) -> None:
        super().__init__(f"injected crash of {function} {when} its handler ran")
        self.error_type = "Runtime.ExitError"


@dataclass
class Invocation:
    """One Lambda invocation the emulation routed."""

    function: str
    event: Any
    error: str | None = None
    cold: bool = False  # it started a container of its own (see stepwise_local.containers)
    warmup: bool = False  # the webhook's warm-up event


WARMUP_KEY = "stepwise_warmup"  # stepwise.warmups.event's key (the emulation does not import the core)
HOLD_LIMIT_SECONDS = 60.0  # a held invocation goes on after this even if its test never let it
# Waits look again when the emulation's state changes (a DynamoDB write, an execution ending, a recovery done)
# and, for anything else, at least this often.
CHANGE_POLL_SECONDS = 0.1
DYNAMODB_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})


class Hold:
    """Invocations of one function kept waiting until released (`Emulation.holding`)."""

    def __init__(self, which: Callable[[Any], bool] | None = None) -> None:
        self._released = threading.Event()
        self._changed = threading.Condition()
        self.waiting = 0  # invocations that reached the hold so far
        self.which = which  # the invocations held, by their event (None: all)

    def wait_here(self) -> None:
        """Called by an invocation: wait until released (or until HOLD_LIMIT_SECONDS have passed)."""
        with self._changed:
            self.waiting += 1
            self._changed.notify_all()
        self._released.wait(HOLD_LIMIT_SECONDS)

    def wait_until_held(self, count: int = 1, timeout: float = 30.0) -> None:
        """Wait until `count` invocations are waiting here."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.waiting >= count, timeout):
                raise TimeoutError(f"{self.waiting} of {count} invocations reached the hold in {timeout}s")

    def release(self) -> None:
        self._released.set()


class Emulation:
    """`with Emulation(config) as emu:` a running local stack; see post_update, wait and table."""

    def __init__(self, config: LocalConfig, template: Template | None = None) -> None:
        self.config = config
        self.template = template or Template(parameters=config.parameters)
        self.functions = self.template.functions()
        self.invocations: list[Invocation] = []
        self._handlers: dict[str, Callable[[Any, Any], Any]] = {}
        self._lock = threading.Lock()
        self._stack = ExitStack()
        self.state_machine_arn = ""
        self._stepfunctions: Any = None
        self._dynamodb: Any = None
        self.recoveries: list[dict[str, Any]] = []
        self._crashes: dict[str, list[str]] = {}
        self._holds: dict[str, Hold] = {}  # functions whose invocations wait (tests order events)
        self._throttles: dict[tuple[str, str | None, str | None], int] = {}
        self._running: str | None = None  # the function being invoked (invocations run one at a time)
        self._running_thread: int | None = None  # the thread it runs on
        self.throttled: list[tuple[str, str, str]] = []  # (function, table, operation) of each injected error
        # (function, table, IAM action) of every DynamoDB request a function made: tests hold them against the
        # template's policies, which moto does not enforce.
        self.dynamodb_actions: set[tuple[str, str, str]] = set()
        self.dynamodb_requests: list[tuple[str, str]] = []  # (function, operation) of each, in order (counts)
        self.aws_actions: set[tuple[str, str]] = set()  # (function, IAM action) of its other AWS requests
        self._recovery_threads: list[threading.Thread] = []
        self._warm_runtimes: dict[str, Any] = {}  # with config.warm_containers: each function's runtime
        self._execution_chats: dict[str, int | None] = {}  # execution name: the chat it works for
        self._clock_offset = timedelta(0)
        self._changes = threading.Condition()  # notified by `_changed`; `until` waits on it
        self._change_count = 0
        self.containers = Containers(self.now, config.container_idle_seconds)
        self.scheduler = LocalScheduler(
            client=None,
            clock=self.now,
            invoke=self.invoke,
            functions=self.functions,
            on_fired=config.on_fired,
        )

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Emulation:
        if str(LAYER_DIR) not in sys.path:
            sys.path.insert(0, str(LAYER_DIR))
        stack = self._stack
        # Each invocation swaps the environment for its function's while other threads run (moto's, the fake
        # servers'): done on the C environment (setenv, unsetenv), that races any C code reading it without
        # the GIL, which can crash; so while the stack runs the environment is a Python copy, which Python
        # code reads as it reads os.environ (os.getenv, pydantic-settings, botocore, Powertools) and C code
        # never sees.
        stack.enter_context(mock.patch.object(os, "environ", dict(os.environ)))
        stack.enter_context(mock.patch.dict(os.environ, FAKE_AWS_ENV))
        clients = _Clients()
        stack.enter_context(mock.patch.object(boto3, "client", clients.wrap(boto3.client, shared=True)))
        # boto3's resources are not thread-safe: each caller gets its own
        stack.enter_context(mock.patch.object(boto3, "resource", clients.wrap(boto3.resource, shared=False)))
        # moto's DynamoDB backend is not thread-safe: a query copying an item while another thread writes it
        # fails ("dictionary changed size during iteration"). Handlers, moto's threads and the caller all call
        # it here, so its requests run one at a time, as each is atomic in DynamoDB; each write wakes `until`.
        stack.enter_context(mock.patch.object(DynamoHandler, "call_action", self._dynamodb_call_action()))
        # moto gap: Lambda invocations are routed to the in-process handlers, with the real error envelope
        # (x-amz-function-error + errorType/errorMessage) so that the ASL's Retry and Catch can match errors.
        stack.enter_context(mock.patch.object(LambdaSimpleBackend, "invoke", self._moto_invoke()))
        for patch in moto_scheduler.patches(self.scheduler):  # moto's Scheduler stores; the emulation fires
            stack.enter_context(patch)
        for patch in moto_speedups.patches():  # the ASL parsed once, not once per execution
            stack.enter_context(patch)
        # moto gap: no EventBridge events when an execution fails, times out or is aborted; the template's
        # EventBridgeRule (RecoverChat) gets the event AWS would send, from the execution's own thread.
        stack.enter_context(
            mock.patch.object(BaseExecutionWorkerCommunication, "terminated", self._moto_terminated())
        )
        # moto gap: Retry intervals really sleep; scale them so tests stay fast.
        scale = self.config.retry_time_scale
        stack.enter_context(
            mock.patch.object(
                moto_retrier, "time", types.SimpleNamespace(sleep=lambda seconds: time.sleep(seconds * scale))
            )
        )
        # moto gap: so do Wait states (the rate-limit wait); an execution that is stopped ends the wait.
        stack.enter_context(
            mock.patch.object(
                WaitFunction,
                "_wait_interval",
                lambda _self, env, wait_seconds: env.program_state_event.wait(max(0, wait_seconds) * scale),
            )
        )
        # moto gap: StopExecution does not end a waitForTaskToken wait (the execution stays RUNNING until the
        # wait times out); AWS ends it at once, as ABORTED. Stopping the program now also interrupts its
        # pending callbacks, and the error the interrupted wait raises no longer turns the stopped program
        # into a failed one.
        stack.enter_context(mock.patch.object(AslEnvironment, "set_stop", _stop_interrupting_callbacks()))
        stack.enter_context(mock.patch.object(AslEnvironment, "set_error", _error_unless_stopped()))
        stack.enter_context(
            mock_aws(
                config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}
            )
        )
        # moto logs every caught task failure at ERROR with a huge repr; the execution history has the facts.
        logging.getLogger("moto.stepfunctions.parser.asl.component.eval_component").setLevel(logging.CRITICAL)
        # Powertools caches SSM values per process, and the local memory index lives in the process: a Lambda
        # process never sees two stacks, but tests do.
        parameters.clear_caches()
        if str(LAYER_DIR) not in sys.path:
            sys.path.insert(0, str(LAYER_DIR))
        from stepwise_local.local_memory import reset_local_index  # the layer is on sys.path only now

        reset_local_index()
        from stepwise import runtime

        runtime.install_clock(self.now)  # the core's clock is the emulation's: /clock moves it
        stack.callback(runtime.install_clock, None)
        try:
            self._stepfunctions = boto3.client("stepfunctions")
            self._dynamodb = boto3.resource("dynamodb")
            self.scheduler.client = boto3.client("scheduler")
            # moto gap: a completed transcription job writes no transcript; the patch writes what
            # `config.transcripts` hears in the note, as Amazon Transcribe would.
            patch_transcribe_output(self.config.transcripts or (lambda _audio: DEFAULT_TRANSCRIPT))
            # moto gap: Polly's SynthesizeSpeech knows no ogg_opus; the patch speaks it with eSpeak NG.
            stack.enter_context(ogg_opus_speech(_speak_offline))
            self._create_tables()
            self._create_buckets()
            self._create_secrets()
            self._create_state_machine()
            self._create_schedule_groups()
            self._load_handlers()
            boto3._get_default_session().events.register("before-call.dynamodb", self._dynamodb_fault)
            boto3._get_default_session().events.register("before-call", self._note_aws_call)
            # from here on a client copies the hooks above when it is made: a function's may be shared
            clients.share_with = self._in_running_function
            if self.config.fire_schedules:
                self.scheduler.start(self.config.schedule_poll_seconds)
        except BaseException:
            self.scheduler.stop()
            stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.scheduler.stop()
        self._wait_all_settled()
        self._stack.close()

    # ------------------------------------------------------------------ waiting for a change
    def _changed(self) -> None:
        """Something a wait may be looking for may have happened: wake the waits."""
        with self._changes:
            self._change_count += 1
            self._changes.notify_all()

    def until(self, check: Callable[[], T | None], timeout: float) -> T | None:
        """Call `check` now and again each time the emulation's state changes (a DynamoDB write, an execution
        ending, a recovery done), and at least every CHANGE_POLL_SECONDS; returns its first result that is
        not None (nor False), or None when `timeout` seconds have passed. Polling in a tight loop instead
        would take the interpreter from the turn it waits for: each look is a few milliseconds of moto."""
        deadline = time.monotonic() + timeout
        while True:
            with self._changes:
                seen = self._change_count
            result = check()
            if result is not None and result is not False:
                return result
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with self._changes:
                if self._change_count == seen:
                    self._changes.wait(min(left, CHANGE_POLL_SECONDS))

    def _dynamodb_call_action(self) -> Callable[[DynamoHandler], Any]:
        original = DynamoHandler.call_action
        lock = threading.RLock()

        def call_action(handler: DynamoHandler) -> Any:
            with lock:
                result = original(handler)
            if handler._get_action() in DYNAMODB_WRITES:
                self._changed()
            return result

        return call_action

    # ------------------------------------------------------------------ the clock and EventBridge Scheduler
    def now(self) -> datetime:
        """The emulation's clock: the host's UTC time plus the offset `advance_clock` added."""
        return datetime.now(UTC) + self._clock_offset

    @property
    def clock_offset(self) -> timedelta:
        """How far the emulation's clock is ahead of the host's."""
        return self._clock_offset

    def advance_clock(self, delta: timedelta) -> datetime:
        """Move the emulation's clock forward (never back); returns the new now. Due schedules fire on the
        next pass: `fire_due_schedules()`, or within a second with the background thread."""
        if delta < timedelta(0):
            raise ValueError("the emulation's clock only moves forward")
        self._clock_offset += delta
        return self.now()

    def fire_due_schedules(self, prefix: str = "") -> list[Fired]:
        """One synchronous pass of the local EventBridge Scheduler: retries failed deliveries, then fires
        every schedule due now (see stepwise_local.scheduler); returns the deliveries it made. With
        `prefix`, only schedules whose names start with it (tests sharing a stack fire their own only)."""
        return self.scheduler.fire_due(prefix)

    def redeliver(self, delivery: Fired) -> Fired:
        """Deliver an occurrence to its target once more (Scheduler delivers at least once)."""
        return self.scheduler.redeliver(delivery)

    @property
    def fired(self) -> list[Fired]:
        """Every delivery the local scheduler made, oldest first."""
        return self.scheduler.fired

    # ------------------------------------------------------------------ setup from the template
    def _create_tables(self) -> None:
        client = self._dynamodb.meta.client
        for table in self.template.tables():
            client.create_table(**table.create_args)
            if table.ttl_attribute:
                client.update_time_to_live(
                    TableName=table.logical_id,
                    TimeToLiveSpecification={"AttributeName": table.ttl_attribute, "Enabled": True},
                )

    def _create_buckets(self) -> None:
        """The template's S3 buckets (the voice notes' bucket), named by their logical ids."""
        s3 = boto3.client("s3")
        for name in self.template.of_type("AWS::S3::Bucket"):
            s3.create_bucket(Bucket=name)

    def _create_schedule_groups(self) -> None:
        """The template's schedule groups (its AWS::Scheduler::Schedule resources are not emulated; the
        summarizer's ScheduleV2 event runs through run_summarizer)."""
        client = self.scheduler.client
        for name in self.template.schedule_groups():
            client.create_schedule_group(Name=name)

    def _create_secrets(self) -> None:
        ssm = boto3.client("ssm")
        for attribute, parameter in SECRET_PARAMETERS.items():
            value = getattr(self.config, attribute)
            if value and parameter in self.template.parameters:
                ssm.put_parameter(Name=self.template.parameters[parameter], Value=value, Type="SecureString")
        for name, value in self.config.ssm_parameters.items():
            self.put_parameter(name, value)

    def put_parameter(self, name: str, value: str) -> None:
        """Create or replace a SecureString SSM parameter; the functions see it at once (Powertools' cache of
        parameters is cleared, as a new container's would be empty)."""
        boto3.client("ssm").put_parameter(Name=name, Value=value, Type="SecureString", Overwrite=True)
        parameters.clear_caches()

    def _create_state_machine(self) -> None:
        (logical_id,) = self.template.of_type("AWS::Serverless::StateMachine")
        name, definition = self.template.state_machine(logical_id)
        self.state_machine_arn = self._stepfunctions.create_state_machine(
            name=name,
            definition=definition,
            roleArn="arn:aws:iam::123456789012:role/stepwise-local",
        )["stateMachineArn"]

    def function_env(self, spec: FunctionSpec) -> dict[str, str]:
        """The environment one function runs with: the template's, pointed at the local peers."""
        env = dict(spec.environment)
        env["TELEGRAM_API_BASE_URL"] = self.config.telegram_base_url
        env["POWERTOOLS_METRICS_DISABLED"] = "true"
        env["MEMORY_BACKEND"] = "local"  # moto emulates neither Bedrock embeddings nor S3 Vectors queries
        # Voice notes offline: PocketSphinx hears them, eSpeak NG speaks (moto has no Polly; tests that want
        # Amazon Transcribe on moto or the OpenAI-compatible API say so in `env`).
        env["VOICE_TRANSCRIBER"] = "local"
        env["VOICE_SPEAKER"] = "local"
        if self.config.anthropic_base_url:
            env["ANTHROPIC_BASE_URL"] = self.config.anthropic_base_url
        if not self.config.anthropic_api_key:
            env["ANTHROPIC_API_KEY_PARAMETER"] = ""  # no key: the offline model (or a keyless base URL)
        env.update(self.config.env)
        return env

    @contextmanager
    def _environment(self, spec: FunctionSpec) -> Iterator[None]:
        kept = {name: os.environ[name] for name in (*HOST_ENV_KEPT, *FAKE_AWS_ENV) if name in os.environ}
        with mock.patch.dict(os.environ, {**kept, **self.function_env(spec)}, clear=True):
            from stepwise import runtime  # imported under a function's environment, as in Lambda
            from stepwise_local.local_memory import local_memory

            runtime.install_memory_backend("local", local_memory)  # MEMORY_BACKEND=local, set above
            warm = self.config.warm_containers
            runtime.swap(self._warm_runtimes.pop(spec.logical_id, None) if warm else None)
            try:
                yield
            finally:
                kept = runtime.swap(None)
                if warm and kept is not None:
                    self._warm_runtimes[spec.logical_id] = kept

    def _load_handlers(self) -> None:
        """Import each function's code under its environment, as Lambda's init does, but for the functions
        only the HTTP API invokes: theirs is imported on their first request (the MCP endpoint's SDK is 0.8 s
        of a chat's start, and most chats never call it). Warm-ups reach only the functions loaded here."""
        for spec in self.functions.values():
            if not spec.http_api_only:
                with self._lock, self._environment(spec):
                    self._load_handler(spec)
        first = next(iter(self.functions.values()))
        service = first.environment.get("POWERTOOLS_SERVICE_NAME", "service")
        # Powertools sets its logger's level when a process first makes it, and a process here may have run
        # another stack before (a Lambda container never has): this stack's functions log at their own level.
        level = self.function_env(first).get("POWERTOOLS_LOG_LEVEL")
        if level:
            logging.getLogger(service).setLevel(level.upper())
        if self.config.log_stream is not None:
            for handler in logging.getLogger(service).handlers:
                if isinstance(handler, logging.StreamHandler):
                    handler.setStream(self.config.log_stream)

    def _load_handler(self, spec: FunctionSpec) -> Callable[[Any, Any], Any]:
        """The function's handler, its module imported the first time (hold the lock, in its environment)."""
        if spec.logical_id not in self._handlers:
            module_name, attribute = spec.code_handler.rsplit(".", 1)
            path = spec.code_dir / f"{module_name}.py"
            module_spec = importlib.util.spec_from_file_location(f"stepwise_function_{spec.logical_id}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            self._handlers[spec.logical_id] = getattr(module, attribute)
        return self._handlers[spec.logical_id]

    # ------------------------------------------------------------------ invoking functions
    def _context(self, logical_id: str) -> Any:
        """The Lambda context object of one invocation."""
        spec = self.functions[logical_id]
        return types.SimpleNamespace(
            function_name=logical_id,
            function_version="$LATEST",
            invoked_function_arn=spec.arn,
            memory_limit_in_mb=256,
            aws_request_id=str(uuid.uuid4()),
            log_group_name="/stepwise/local",
            log_stream_name=logical_id,
            get_remaining_time_in_millis=lambda: spec.timeout * 1000,
        )

    def invoke(self, logical_id: str, event: Any) -> Any:
        """Run one function's handler in-process with its environment (one invocation at a time)."""
        spec = self.functions[logical_id]
        context = self._context(logical_id)
        warmup = isinstance(event, dict) and event.get(WARMUP_KEY) is True
        hold = None if warmup else self._holds.get(logical_id)
        if hold is not None and (
            hold.which is None or hold.which(event)
        ):  # waits outside the one-at-a-time lock: other invocations go on meanwhile
            hold.wait_here()
        container, cold = self.containers.take(logical_id)
        record = Invocation(logical_id, event, cold=cold, warmup=warmup)
        self.invocations.append(record)
        if warmup:  # answered before any of the function's logic: no environment, no lock (it runs at once)
            try:
                return self._handlers[logical_id](event, context)
            finally:
                self.containers.give_back(container, self.config.warmup_init_seconds if cold else 0.0)
        with self._lock, self._environment(spec):
            self._running, self._running_thread = logical_id, threading.get_ident()
            if cold and logical_id == self.webhook_function:
                # Imported under the webhook's environment, as in Lambda (its logger takes LOG_LEVEL then).
                from stepwise.warmups.warmer import forget_container

                forget_container()  # a new container remembers no request (a module's state, in Lambda)
            try:
                self._maybe_crash(logical_id, "before")
                result = self._load_handler(spec)(event, context)
                self._maybe_crash(logical_id, "after")
                return result
            except Exception as error:
                record.error = getattr(error, "error_type", type(error).__name__)
                raise
            finally:
                self._running = None
                self.containers.give_back(container)

    def warm_up(self, logical_id: str) -> Any:
        """Send the function the webhook's warm-up event and let it prepare as in its Lambda container: in its
        environment, one invocation at a time, and (with `warm_containers`) its runtime kept for its next
        invocation, with what the preparation read. The webhook's own warm-ups answer outside the functions'
        environments (their threads run while the webhook's invocation holds the lock): they keep nothing."""
        spec = self.functions[logical_id]
        container, cold = self.containers.take(logical_id)
        self.invocations.append(Invocation(logical_id, {WARMUP_KEY: True}, cold=cold, warmup=True))
        try:
            with self._lock, self._environment(spec):
                return self._load_handler(spec)({WARMUP_KEY: True}, self._context(logical_id))
        finally:
            self.containers.give_back(container)

    def crash(self, logical_id: str, when: str, times: int = 1) -> None:
        """Make the next `times` invocations of a function die "before" its handler runs (no side effect)
        or "after" it ran (every side effect done, but no result): Lambda's Runtime.ExitError."""
        if logical_id not in self.functions or when not in ("before", "after"):
            raise ValueError(f"cannot crash {logical_id!r} {when!r}")
        self._crashes.setdefault(logical_id, []).extend([when] * times)

    @contextmanager
    def holding(self, logical_id: str, which: Callable[[Any], bool] | None = None) -> Iterator[Hold]:
        """Keep the function's invocations (warm-ups aside; with `which`, those whose event it accepts) from
        starting until the block ends: a test can then send updates while a turn is certainly still running,
        whatever this machine's speed."""
        if logical_id not in self.functions:
            raise ValueError(f"no function {logical_id!r} in the template")
        hold = self._holds[logical_id] = Hold(which)
        try:
            yield hold
        finally:
            del self._holds[logical_id]
            hold.release()

    def clear_crashes(self) -> None:
        """Forget crashes and throttling planned and not yet happened."""
        self._crashes.clear()
        self._throttles.clear()

    def throttle(
        self, table: str, times: int, *, function: str | None = None, operation: str | None = None
    ) -> None:
        """Make the next `times` DynamoDB requests on one of the template's tables (from one function, of one
        operation, if given) fail with ProvisionedThroughputExceededException, as they do once the SDK's own
        retries are used up."""
        if table not in {spec.logical_id for spec in self.template.tables()}:
            raise ValueError(f"no table {table!r} in the template")
        if function is not None and function not in self.functions:
            raise ValueError(f"no function {function!r} in the template")
        key = (table, function, operation)
        self._throttles[key] = self._throttles.get(key, 0) + times

    def _in_function(self) -> bool:
        """Whether a request comes from the running function: its own thread or one it started, not the test's
        (or the chat's) main thread reading the tables or firing schedules while a turn runs elsewhere."""
        return (
            threading.get_ident() == self._running_thread
            or threading.current_thread() is not threading.main_thread()
        )

    def _in_running_function(self) -> bool:
        """Whether the caller is the running function, on the thread it was invoked on."""
        return self._running is not None and threading.get_ident() == self._running_thread

    def _note_aws_call(self, model: Any, **_: Any) -> None:
        """botocore before-call hook: note the IAM action of each request a function makes to a service other
        than DynamoDB (DynamoDB's are noted per table, in `_dynamodb_fault`)."""
        service = model.service_model.signing_name
        # Lambda is invoked by the state machine (moto's execution threads), never by a function.
        if self._running is not None and service not in ("dynamodb", "lambda") and self._in_function():
            self.aws_actions.add((self._running, f"{service}:{model.name}"))

    def _dynamodb_fault(self, model: Any, params: dict[str, Any], **_: Any) -> Any:
        """botocore before-call hook: note what the running function asks of DynamoDB (`dynamodb_actions`),
        and answer a throttled request with DynamoDB's error, without sending it."""
        if self._running is None or not self._in_function():
            return None
        body = json.loads(params.get("body") or b"{}")
        self.dynamodb_requests.append((self._running, model.name))
        self.dynamodb_actions.update((self._running, *action) for action in iam_actions(model.name, body))
        if not self._throttles:
            return None
        tables = {body.get("TableName")} | {
            next(iter(item.values())).get("TableName") for item in body.get("TransactItems", [])
        }
        hit = next(
            (
                key
                for key, left in self._throttles.items()
                if left > 0
                and key[0] in tables
                and key[1] in (None, self._running)
                and key[2] in (None, model.name)
            ),
            None,
        )
        if hit is None:
            return None
        self._throttles[hit] -= 1
        self.throttled.append((self._running, hit[0], model.name))
        response = AWSResponse(params.get("url", ""), 400, {}, None)
        return response, {
            "Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Injected throttling"},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }

    def _maybe_crash(self, logical_id: str, when: str) -> None:
        planned = self._crashes.get(logical_id)
        if planned and planned[0] == when:
            planned.pop(0)
            raise LambdaCrash(logical_id, when)

    def _moto_invoke(self) -> Callable[..., bytes]:
        emulation = self

        def invoke(
            backend: Any,
            function_name: str,
            qualifier: Any,
            body: Any,
            headers: Any,
            response_headers: dict[str, str],
        ) -> bytes:
            name = function_name.split(":")[6] if function_name.startswith("arn:") else function_name
            if name not in emulation.functions:
                raise UnknownFunctionException(function_name)
            if emulation.config.fail_warmups and WARMUP_KEY in str(body):
                throttled = LambdaClientError("TooManyRequestsException", "Rate Exceeded.")
                throttled.code = 429
                raise throttled
            try:
                return json.dumps(emulation.invoke(name, json.loads(body or "{}"))).encode()
            except Exception as error:
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps(
                    {
                        "errorType": getattr(error, "error_type", type(error).__name__),
                        "errorMessage": str(error),
                        "stackTrace": traceback.format_tb(error.__traceback__),
                    }
                ).encode()

        return invoke

    def _moto_terminated(self) -> Callable[[Any], None]:
        emulation = self
        original = BaseExecutionWorkerCommunication.terminated

        def terminated(communication: Any) -> None:
            original(communication)
            execution = communication.execution
            status = execution.exec_status.value if execution.exec_status else ""
            if status in ("FAILED", "TIMED_OUT", "ABORTED"):
                emulation.execution_ended(execution, status)
            emulation._changed()

        return terminated

    def execution_ended(self, execution: Any, status: str) -> None:
        """Deliver a "Step Functions Execution Status Change" event to the rule's target, in the background
        (EventBridge is asynchronous), as AWS does for failed, timed-out and aborted executions."""
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": "123456789012",
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "region": FAKE_AWS_ENV["AWS_REGION"],
            "resources": [execution.exec_arn],
            "detail": {
                "executionArn": execution.exec_arn,
                "stateMachineArn": execution.state_machine.arn,
                "name": execution.name,
                "status": status,
                "input": json.dumps(execution.input_data),
            },
        }
        self.recoveries.append(event)

        def deliver() -> None:
            try:
                self.invoke(self.template.function_with_event("EventBridgeRule"), event)
            except Exception:  # EventBridge would retry; the emulation logs and goes on
                logging.getLogger(__name__).exception("recovery target failed")
            finally:
                self._changed()  # (the thread is still alive here: waits look again at most a poll later)

        thread = threading.Thread(target=deliver, name=f"recover-{execution.name}", daemon=True)
        self._recovery_threads.append(thread)
        thread.start()

    # ------------------------------------------------------------------ the webhook, as API Gateway calls it
    @property
    def webhook_function(self) -> str:
        return self.template.function_for_route("/webhook")

    def post_update(self, update: dict[str, Any] | str, secret: str | None = "") -> dict[str, Any]:
        """POST an update to the webhook. secret "" sends the configured one; None sends no header."""
        headers = {"content-type": "application/json", "user-agent": "TelegramBot (like TwitterBot)"}
        if secret is not None:
            headers["x-telegram-bot-api-secret-token"] = secret or self.config.webhook_secret
        body = update if isinstance(update, str) else json.dumps(update)
        result: dict[str, Any] = self.invoke(self.webhook_function, http_api_event(body, headers))
        self._run_answer_method(result)
        return result

    def _run_answer_method(self, answer: dict[str, Any]) -> None:
        """Do what Telegram does with a webhook answer that names a Bot API method: call it, on its own time
        (a thread: the sender of the update does not wait for it), and tell nobody how it went (the Bot API's
        "Making requests when getting updates")."""
        try:
            call = json.loads(answer.get("body") or "")
        except ValueError:
            return
        if isinstance(call, dict) and isinstance(call.get("method"), str):
            threading.Thread(target=self._call_bot_api, args=(call,), daemon=True).start()

    def _call_bot_api(self, call: dict[str, Any]) -> None:
        method = call.pop("method")
        url = f"{self.config.telegram_base_url}/bot{self.config.bot_token}/{method}"
        request = urllib.request.Request(  # noqa: S310 (the configured Bot API's URL)
            url, json.dumps(call).encode(), {"content-type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=5):  # noqa: S310
                pass
        except OSError:
            pass  # Telegram reports nothing about such a call either

    # ------------------------------------------------------------------ observing executions
    def execution_arn(self, name: str) -> str:
        return self.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"

    def describe(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self._stepfunctions.describe_execution(executionArn=self.execution_arn(name))
        return result

    def executions(self) -> list[dict[str, Any]]:
        paginator = self._stepfunctions.get_paginator("list_executions")
        pages = paginator.paginate(stateMachineArn=self.state_machine_arn)
        return [execution for page in pages for execution in page["executions"]]

    def history(self, name: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._stepfunctions.get_execution_history(
            executionArn=self.execution_arn(name), maxResults=1000
        )["events"]
        return result

    def wait(self, name: str, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the execution leaves RUNNING; returns describe_execution."""

        def ended() -> dict[str, Any] | None:
            description = self.describe(name)
            return description if description["status"] != "RUNNING" else None

        description = self.until(ended, timeout)
        if description is None:
            raise TimeoutError(f"execution {name} still running after {timeout}s")
        return description

    def turn_for_update(self, chat_id: Any, update_id: int) -> str | None:
        """The name of the turn that took (or answered) an update, from the inbox; None while it waits.
        `chat_id` names the conversation: a chat's id, or a `Conversation` (a topic's)."""
        table = self.table("InboxTable")
        key = _key(chat_id)
        for prefix in ("q", "d"):
            item = table.get_item(Key={"chat_id": key, "sk": f"{prefix}#{update_id:020d}"}).get("Item")
            if item and item.get("turn_id"):
                return str(item["turn_id"])
        return None

    def wait_until_taken(self, chat_id: Any, update_id: int, timeout: float = 30.0) -> str:
        """Wait until a turn takes this update (one turn at a time per chat); returns that turn's name."""
        name = self.until(lambda: self.turn_for_update(chat_id, update_id), timeout)
        if name is None:
            raise TimeoutError(f"no turn took update {update_id} of chat {chat_id} within {timeout}s")
        return name

    def wait_for_update(self, chat_id: Any, update_id: int, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the turn that takes this update has ended; returns its describe_execution."""
        deadline = time.monotonic() + timeout
        name = self.wait_until_taken(chat_id, update_id, timeout)
        return self.wait(name, timeout=max(0.1, deadline - time.monotonic()))

    def wait_idle(self, chat_id: Any, timeout: float = 30.0) -> None:
        """Wait until no turn holds the chat and none of its executions runs (messages that gave up starting
        turns of their own may still wait for the user's next message)."""
        chat_id = _key(chat_id)
        table = self.table("InboxTable")

        def idle() -> bool:
            # In this order: a recovery that ends after the first look has taken the lease by the second, and
            # a turn handing over has started the next turn before its own execution ends.
            recovering = any(t.is_alive() for t in self._recovery_threads)
            items = table.query(
                KeyConditionExpression="chat_id = :c", ExpressionAttributeValues={":c": int(chat_id)}
            )
            held = any("holder" in i for i in items["Items"])
            prefix = f"chat{_label(chat_id)}-"
            running = any(e["status"] == "RUNNING" for e in self.executions() if e["name"].startswith(prefix))
            return not recovering and not held and not running

        if not self.until(idle, timeout):
            raise TimeoutError(f"chat {chat_id} still busy after {timeout}s")

    def busy_executions(self, chat_id: Any, ignored: Collection[str] = ()) -> list[str]:
        """What still works for the chat, but for the executions named in `ignored` (those waiting for a tap,
        say): the executions of its turns and background jobs that run or hold the chat's lease, and the
        recoveries of failed ones (as `recover-<execution>`). [] when the chat is at rest."""
        chat_id = _key(chat_id)
        # In this order, as in wait_idle: a recovery that ends after the first look has taken the lease by the
        # second, and a turn handing over has started the next turn before its own execution ends.
        recovering = {
            t.name
            for t in self._recovery_threads
            if t.is_alive() and self._chat_of(t.name.removeprefix("recover-")) == chat_id
        }
        items = self.table("InboxTable").query(
            KeyConditionExpression="chat_id = :c", ExpressionAttributeValues={":c": int(chat_id)}
        )["Items"]
        holders = {str(item["holder"]) for item in items if "holder" in item}
        running = {
            e["name"]
            for e in self.executions()
            if e["status"] == "RUNNING" and self._chat_of(e["name"]) == chat_id
        }
        return sorted((recovering | holders | running) - set(ignored))

    def _chat_of(self, name: str) -> int | None:
        """The conversation an execution works for (its key: the chat's id, a topic's, or a contact's chat's
        in a business account), from its input (a turn's, or a background job's), read once."""
        if name not in self._execution_chats:
            turn = json.loads(self.describe(name)["input"]).get("turn", {})
            chat, topic, account = turn.get("chat_id"), turn.get("topic"), turn.get("account")
            self._execution_chats[name] = None if chat is None else _conversation_key(chat, topic, account)
        return self._execution_chats[name]

    def _wait_all_settled(self, timeout: float = 10.0) -> None:
        """Wait for the executions that are working to end; one waiting for a tap (its task token) is at rest
        and would wait for the whole timeout: leaving `make chat` with an approval shown took 10 s."""

        def settled() -> bool:
            try:
                running = [e["name"] for e in self.executions() if e["status"] == "RUNNING"]
                return all(self.waits_for_token(name) for name in running)
            except Exception:  # the stack may be half set up
                return True

        self.until(settled, timeout)

    def waits_for_token(self, name: str) -> bool:
        """Whether the execution is at rest in a task submitted for a callback (waitForTaskToken: a tap)."""
        events = self.history(name)
        return bool(events) and events[-1]["type"] == "TaskSubmitted"

    def run_summarizer(self, force: bool = False) -> dict[str, Any]:
        """Invoke the scheduled summarizer now, with the event its schedule sends."""
        result: dict[str, Any] = self.invoke(
            self.template.function_with_event("ScheduleV2"), {"force": force}
        )
        return result

    def table(self, logical_id: str) -> Any:
        """A boto3 Table resource for one of the template's tables."""
        return self._dynamodb.Table(logical_id)


TRANSACTION_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "Get": "GetItem"}


def iam_actions(operation: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (table, IAM action) pairs one DynamoDB request needs: a transaction needs each item's own action
    (`ConditionCheck` needs `dynamodb:ConditionCheckItem`), a batch its action on each table."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        pairs = []
        for item in body.get("TransactItems", []):
            ((kind, spec),) = item.items()
            action = TRANSACTION_ACTIONS.get(kind, f"{kind}Item")
            pairs.append((str(spec.get("TableName")), f"dynamodb:{action}"))
        return pairs
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(table, f"dynamodb:{operation}") for table in body.get("RequestItems", {})]
    return [(str(body.get("TableName")), f"dynamodb:{operation}")]


def http_api_event(
    body: str, headers: dict[str, str], path: str = "/webhook", method: str = "POST"
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as it reaches the webhook function (or /mcp's)."""
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": headers,
        "isBase64Encoded": False,
        "body": body,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "domainName": "local.execute-api.localhost",
            "domainPrefix": "local",
            "requestId": str(uuid.uuid4()),
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
        },
    }


def _key(chat: Any) -> int:
    """The inbox's key of a conversation given as a chat's id or a `Conversation` (the layer's modules are
    imported once the layer is on the path)."""
    if isinstance(chat, int):
        return chat
    from stepwise.aws.conversation_key import conversation_key

    return conversation_key(chat)


def _label(key: int) -> str:
    """How turn names spell the conversation stored under `key`."""
    from stepwise.aws.conversation_key import conversation_at

    return conversation_at(key).label()


def _conversation_key(chat_id: int, topic: int | None, account: int | None = None) -> int:
    from stepwise.aws.conversation_key import conversation_key
    from stepwise.telegram.conversation import Conversation

    return conversation_key(Conversation(chat_id, topic, account))
