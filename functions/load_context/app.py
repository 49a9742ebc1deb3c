"""LoadContext state: store the waiting messages, fix the history window, decide the kind of turn."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.load_context import load_context

# The models a plain turn's first call uses (their validators are built on first use): a warm-up builds them.
FIRST_CALL_MODELS = (
    "stepwise.turn_records.models:TurnMeta",
    "stepwise.history.models:StoredMessage",
    "stepwise.inbox.models:QueuedMessage",
    "stepwise.chats.store:ChatRecord",
    "stepwise.states.contracts.base:Next",
)

handler = state_handler(LoadContextInput, load_context, Logger(), models=FIRST_CALL_MODELS)
