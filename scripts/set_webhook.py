"""`make webhook`: point Telegram at the deployed webhook, with the secret token and the update types handled,
register the command menu (setMyCommands) from the command table, and make the bot's menu button open the
Mini App (setChatMenuButton with a `web_app` button: the stack's AppUrl).

Reads the WebhookUrl output of the CloudFormation stack and the bot token and webhook secret from SSM (the
same parameters the functions read), unless TELEGRAM_BOT_TOKEN / TELEGRAM_WEBHOOK_SECRET are set. Anything
missing (credentials, region, the stack, a parameter) or refused by Telegram is one line on stderr and exit
status 1, not a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from stepwise.commands.table import menu
from stepwise.telegram.client import BotApiClient
from stepwise.telegram.errors import TelegramError
from stepwise.webhook import HANDLED_UPDATES


class SetupError(Exception):
    """Why the webhook could not be set, in one line."""


def stack_output(stack: str, key: str) -> str:
    try:
        stacks = boto3.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    except ClientError as error:
        if "does not exist" in str(error):
            raise SetupError(f"there is no stack {stack!r} in this region: run make deploy first") from None
        raise
    for output in stacks[0].get("Outputs", []):
        if output["OutputKey"] == key:
            return str(output["OutputValue"])
    raise SetupError(f"stack {stack} has no output {key}: has it been deployed?")


def secret(env_var: str, parameter: str) -> str:
    value = os.environ.get(env_var)
    if value:
        return value
    try:
        return str(
            boto3.client("ssm").get_parameter(Name=parameter, WithDecryption=True)["Parameter"]["Value"]
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ParameterNotFound":
            raise SetupError(
                f"SSM parameter {parameter} does not exist: set {env_var} or create it"
            ) from None
        raise


MENU_BUTTON_TEXT = "Stepwise"


def set_up(args: argparse.Namespace) -> str:
    """setWebhook, setMyCommands and setChatMenuButton; returns what the user is told."""
    url = stack_output(args.stack, "WebhookUrl")
    app_url = stack_output(args.stack, "AppUrl")
    client = BotApiClient(
        secret("TELEGRAM_BOT_TOKEN", args.token_parameter),
        os.environ.get("TELEGRAM_API_BASE_URL", "https://api.telegram.org"),
    )
    client.set_webhook(url, secret("TELEGRAM_WEBHOOK_SECRET", args.secret_parameter), list(HANDLED_UPDATES))
    commands = menu()
    client.call("setMyCommands", {"commands": commands})
    button = {"type": "web_app", "text": MENU_BUTTON_TEXT, "web_app": {"url": app_url}}
    client.call("setChatMenuButton", {"menu_button": button})
    names = " ".join(f"/{c['command']}" for c in commands)
    delivered = (
        f"Telegram now delivers {', '.join(HANDLED_UPDATES)} updates to {url}; command menu: {names}; "
        f"the menu button opens the Mini App at {app_url}"
    )
    return f"{delivered}\n{group_reading(client.get_me())}"


def group_reading(me: dict[str, object]) -> str:
    """Whether the bot can read every group message (getMe's `can_read_all_group_messages`), and what that
    means for groups (docs/groups.md)."""
    name = f"@{me.get('username', 'the bot')}"
    if me.get("can_read_all_group_messages") is True:
        return (
            f"Groups: {name} can read all group messages (privacy mode off, or an admin); it answers those "
            "addressed to it (GROUP_REPLIES=mentions) or every member's (GROUP_REPLIES=all)."
        )
    return (
        f"Groups: {name} cannot read all group messages (privacy mode on): it gets commands and replies to "
        "its messages; for @mentions turn privacy mode off (@BotFather → /setprivacy → Disable, then add "
        "the bot to the group again) or give it admin rights. See docs/groups.md."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="stepwise")
    parser.add_argument("--token-parameter", default="/stepwise/telegram-bot-token")
    parser.add_argument("--secret-parameter", default="/stepwise/telegram-webhook-secret")
    args = parser.parse_args(argv)
    try:
        print(set_up(args), file=sys.stderr)
    except NoRegionError:
        return fail("no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or a region in your AWS profile)")
    except NoCredentialsError:
        return fail("no AWS credentials: configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID)")
    except SetupError as error:
        return fail(str(error))
    except ClientError as error:
        return fail(f"AWS refused: {error}")
    except BotoCoreError as error:
        return fail(f"AWS could not be reached: {error}")
    except TelegramError as error:
        return fail(str(error))
    return 0


def fail(reason: str) -> int:
    print(f"make webhook: {reason}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
