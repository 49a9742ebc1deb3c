"""LoadContext state: store the waiting messages, fix the history window, decide the kind of turn."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.load_context import load_context

handler = state_handler(LoadContextInput, load_context, Logger())
