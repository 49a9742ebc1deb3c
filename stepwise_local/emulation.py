"""The local AWS emulation: moto executes the real state machine; its Lambda tasks run the real handlers
in-process, each with the environment template.yaml gives it; tables and secrets come from the template.

moto 5.2.5 needs a few patches for this (each marked `moto gap` below). Used by `make chat` and the tests.
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
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO
from unittest import mock

import boto3
import moto.stepfunctions.parser.asl.component.common.retry.retrier_decl as moto_retrier
from aws_lambda_powertools.utilities import parameters
from moto import mock_aws
from moto.awslambda.exceptions import UnknownFunctionException
from moto.awslambda_simple.models import LambdaSimpleBackend

from stepwise_local.template import REGION, REPO_ROOT, FunctionSpec, Template

LAYER_DIR = REPO_ROOT / "layers" / "core"
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
SECRET_PARAMETERS = {
    "bot_token": "TelegramBotTokenParameter",
    "webhook_secret": "TelegramWebhookSecretParameter",
    "anthropic_api_key": "AnthropicApiKeyParameter",
}


def _serialized(factory: Callable[..., Any], lock: threading.RLock) -> Callable[..., Any]:
    def create(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return factory(*args, **kwargs)

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
    env: dict[str, str] = field(default_factory=dict)
    retry_time_scale: float = 0.001
    log_stream: TextIO | None = None


@dataclass
class Invocation:
    """One Lambda invocation the emulation routed."""

    function: str
    event: Any
    error: str | None = None


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

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Emulation:
        if str(LAYER_DIR) not in sys.path:
            sys.path.insert(0, str(LAYER_DIR))
        stack = self._stack
        stack.enter_context(mock.patch.dict(os.environ, FAKE_AWS_ENV))
        # boto3's default session is not thread-safe while clients are created, and here moto's execution
        # threads, the handlers and the caller all create them: serialize creation (use is thread-safe).
        creation_lock = threading.RLock()
        stack.enter_context(mock.patch.object(boto3, "client", _serialized(boto3.client, creation_lock)))
        stack.enter_context(mock.patch.object(boto3, "resource", _serialized(boto3.resource, creation_lock)))
        # moto gap: Lambda invocations are routed to the in-process handlers, with the real error envelope
        # (x-amz-function-error + errorType/errorMessage) so that the ASL's Retry and Catch can match errors.
        stack.enter_context(mock.patch.object(LambdaSimpleBackend, "invoke", self._moto_invoke()))
        # moto gap: Retry intervals really sleep; scale them so tests stay fast.
        scale = self.config.retry_time_scale
        stack.enter_context(
            mock.patch.object(
                moto_retrier, "time", types.SimpleNamespace(sleep=lambda seconds: time.sleep(seconds * scale))
            )
        )
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
        from stepwise.memory.local import reset_local_index

        reset_local_index()
        try:
            self._stepfunctions = boto3.client("stepfunctions")
            self._dynamodb = boto3.resource("dynamodb")
            self._create_tables()
            self._create_secrets()
            self._create_state_machine()
            self._load_handlers()
        except BaseException:
            stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._wait_all_settled()
        self._stack.close()

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

    def _create_secrets(self) -> None:
        ssm = boto3.client("ssm")
        for attribute, parameter in SECRET_PARAMETERS.items():
            value = getattr(self.config, attribute)
            if value and parameter in self.template.parameters:
                ssm.put_parameter(Name=self.template.parameters[parameter], Value=value, Type="SecureString")

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

            runtime.reset()
            try:
                yield
            finally:
                runtime.reset()

    def _load_handlers(self) -> None:
        for logical_id, spec in self.functions.items():
            module_name, attribute = spec.handler.rsplit(".", 1)
            path = spec.code_dir / f"{module_name}.py"
            module_spec = importlib.util.spec_from_file_location(f"stepwise_function_{logical_id}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            with self._lock, self._environment(spec):
                module_spec.loader.exec_module(module)
            self._handlers[logical_id] = getattr(module, attribute)
        if self.config.log_stream is not None:
            service = next(iter(self.functions.values())).environment.get(
                "POWERTOOLS_SERVICE_NAME", "service"
            )
            for handler in logging.getLogger(service).handlers:
                if isinstance(handler, logging.StreamHandler):
                    handler.setStream(self.config.log_stream)

    # ------------------------------------------------------------------ invoking functions
    def invoke(self, logical_id: str, event: Any) -> Any:
        """Run one function's handler in-process with its environment (one invocation at a time)."""
        spec = self.functions[logical_id]
        context = types.SimpleNamespace(
            function_name=logical_id,
            function_version="$LATEST",
            invoked_function_arn=spec.arn,
            memory_limit_in_mb=256,
            aws_request_id=str(uuid.uuid4()),
            log_group_name="/stepwise/local",
            log_stream_name=logical_id,
            get_remaining_time_in_millis=lambda: spec.timeout * 1000,
        )
        record = Invocation(logical_id, event)
        self.invocations.append(record)
        with self._lock, self._environment(spec):
            try:
                return self._handlers[logical_id](event, context)
            except Exception as error:
                record.error = type(error).__name__
                raise

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
            try:
                return json.dumps(emulation.invoke(name, json.loads(body or "{}"))).encode()
            except Exception as error:
                response_headers["x-amz-function-error"] = "Unhandled"
                return json.dumps(
                    {
                        "errorType": type(error).__name__,
                        "errorMessage": str(error),
                        "stackTrace": traceback.format_tb(error.__traceback__),
                    }
                ).encode()

        return invoke

    # ------------------------------------------------------------------ the webhook, as API Gateway calls it
    @property
    def webhook_function(self) -> str:
        return self.template.function_with_event("HttpApi")

    def post_update(self, update: dict[str, Any] | str, secret: str | None = "") -> dict[str, Any]:
        """POST an update to the webhook. secret "" sends the configured one; None sends no header."""
        headers = {"content-type": "application/json", "user-agent": "TelegramBot (like TwitterBot)"}
        if secret is not None:
            headers["x-telegram-bot-api-secret-token"] = secret or self.config.webhook_secret
        body = update if isinstance(update, str) else json.dumps(update)
        result: dict[str, Any] = self.invoke(self.webhook_function, http_api_event(body, headers))
        return result

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
        deadline = time.monotonic() + timeout
        while True:
            description = self.describe(name)
            if description["status"] != "RUNNING":
                return description
            if time.monotonic() > deadline:
                raise TimeoutError(f"execution {name} still running after {timeout}s")
            time.sleep(0.01)

    def _wait_all_settled(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if not any(e["status"] == "RUNNING" for e in self.executions()):
                    return
            except Exception:  # the stack may be half set up
                return
            time.sleep(0.02)

    def run_summarizer(self, force: bool = False) -> dict[str, Any]:
        """Invoke the scheduled summarizer now, with the event its schedule sends."""
        result: dict[str, Any] = self.invoke(
            self.template.function_with_event("ScheduleV2"), {"force": force}
        )
        return result

    def table(self, logical_id: str) -> Any:
        """A boto3 Table resource for one of the template's tables."""
        return self._dynamodb.Table(logical_id)


def http_api_event(body: str, headers: dict[str, str], path: str = "/webhook") -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as it reaches the webhook function."""
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": f"POST {path}",
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
            "routeKey": f"POST {path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
            "http": {
                "method": "POST",
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
        },
    }
