"""LoadContext state: store the user's message, fix the history window, show "typing"."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import TurnStart
from stepwise.states.load_context import load_context

handler = state_handler(TurnStart, load_context, Logger())
