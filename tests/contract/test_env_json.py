"""events/env.json works with `sam local invoke --env-vars`: SAM only overrides variables the template
declares for the function, so each one named there must be declared, and its values must fit the events."""

from __future__ import annotations

import json
import re

from support.tools import ROOT

from stepwise_local.template import Template

ENV = json.loads((ROOT / "events" / "env.json").read_text())
FUNCTIONS = Template().functions()
SECRET_HEADER = "x-telegram-bot-api-secret-token"


def test_env_json_names_only_functions_and_variables_the_template_declares() -> None:
    assert ENV, "env.json is empty"
    for function, variables in ENV.items():
        assert function in FUNCTIONS, f"{function} is not a function of template.yaml"
        undeclared = set(variables) - set(FUNCTIONS[function].environment)
        assert not undeclared, f"{function}: sam local invoke would ignore {sorted(undeclared)}"
        assert all(isinstance(value, str) for value in variables.values())


def test_the_sample_events_carry_env_jsons_webhook_secret() -> None:
    secret = ENV["WebhookFunction"]["TELEGRAM_WEBHOOK_SECRET"]
    events = sorted((ROOT / "events").glob("webhook-*.json"))
    assert events
    for path in events:
        headers = json.loads(path.read_text())["headers"]
        assert headers.get(SECRET_HEADER) == secret, path.name


def test_env_jsons_state_machine_arn_names_the_stacks_turn_state_machine_in_the_events_account() -> None:
    arn = ENV["WebhookFunction"]["STATE_MACHINE_ARN"]
    match = re.fullmatch(r"arn:aws:states:([a-z0-9-]+):(\d{12}):stateMachine:(.+)-turn", arn)
    assert match, arn
    context = json.loads((ROOT / "events" / "webhook-text-message.json").read_text())["requestContext"]
    assert match[2] == context["accountId"]
    assert f".{match[1]}." in context["domainName"]
    assert "-turn" in FUNCTIONS["WebhookFunction"].environment["STATE_MACHINE_ARN"]


def test_the_sample_senders_are_allowed_except_the_one_that_shows_the_allowlist() -> None:
    allowed = set(ENV["WebhookFunction"]["ALLOWED_USER_IDS"].split(","))
    text = json.loads(json.loads((ROOT / "events" / "webhook-text-message.json").read_text())["body"])
    stranger = json.loads(json.loads((ROOT / "events" / "webhook-not-allowlisted.json").read_text())["body"])
    assert str(text["message"]["from"]["id"]) in allowed
    assert str(stranger["message"]["from"]["id"]) not in allowed
