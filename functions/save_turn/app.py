"""SaveTurn state: store the assistant's message with the tool calls of its turn."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import TurnInput
from stepwise.states.save_turn import save_turn

handler = state_handler(TurnInput, save_turn, Logger())
