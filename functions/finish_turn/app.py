"""FinishTurn state: the turn's messages are done; free the chat and start the next turn if messages wait."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import TurnInput
from stepwise.states.sequence import finish_turn

handler = state_handler(TurnInput, finish_turn, Logger())
