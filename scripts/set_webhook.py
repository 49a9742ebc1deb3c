"""`make webhook`: point Telegram at the deployed webhook, with the secret token and the update types handled.

Reads the WebhookUrl output of the CloudFormation stack and the bot token and webhook secret from SSM (the
same parameters the functions read), unless TELEGRAM_BOT_TOKEN / TELEGRAM_WEBHOOK_SECRET are set.
"""

from __future__ import annotations

import argparse
import os
import sys

import boto3

from stepwise.telegram.client import BotApiClient
from stepwise.webhook import HANDLED_UPDATES


def stack_output(stack: str, key: str) -> str:
    outputs = boto3.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0].get("Outputs", [])
    for output in outputs:
        if output["OutputKey"] == key:
            return str(output["OutputValue"])
    raise SystemExit(f"stack {stack} has no output {key}: has it been deployed?")


def secret(env_var: str, parameter: str) -> str:
    value = os.environ.get(env_var)
    if value:
        return value
    return str(boto3.client("ssm").get_parameter(Name=parameter, WithDecryption=True)["Parameter"]["Value"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="stepwise")
    parser.add_argument("--token-parameter", default="/stepwise/telegram-bot-token")
    parser.add_argument("--secret-parameter", default="/stepwise/telegram-webhook-secret")
    args = parser.parse_args(argv)
    url = stack_output(args.stack, "WebhookUrl")
    client = BotApiClient(
        secret("TELEGRAM_BOT_TOKEN", args.token_parameter),
        os.environ.get("TELEGRAM_API_BASE_URL", "https://api.telegram.org"),
    )
    client.set_webhook(url, secret("TELEGRAM_WEBHOOK_SECRET", args.secret_parameter), list(HANDLED_UPDATES))
    print(f"Telegram now delivers {', '.join(HANDLED_UPDATES)} updates to {url}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
