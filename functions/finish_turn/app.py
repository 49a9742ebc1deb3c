"""FinishTurn state (also FailTurn and FinishTurnUndelivered): send the reply, store it, free the chat and
start the next turn if messages wait."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.finish_turn import finish_turn

# The models a plain turn's first call uses (their validators are built on first use): a warm-up builds them.
FIRST_CALL_MODELS = (
    "stepwise.turn_records.models:TurnMeta",
    "stepwise.turn_records.models:ModelStep",
    "stepwise.turn_records.models:Reply",
    "stepwise.history.models:StoredMessage",
    "stepwise.inbox.models:QueuedMessage",
    "stepwise.chats.store:ChatRecord",
    "stepwise.states.contracts.finish_turn:FinishTurnOutput",
)

handler = state_handler(FinishTurnInput, finish_turn, Logger(), models=FIRST_CALL_MODELS)
