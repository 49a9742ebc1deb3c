"""FinishTurn state (also FailTurn and FinishTurnUndelivered): send the reply, store it, free the chat and
start the next turn if messages wait."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.finish_turn import finish_turn

handler = state_handler(FinishTurnInput, finish_turn, Logger())
