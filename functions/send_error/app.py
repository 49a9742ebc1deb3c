"""SendError state: the model failed after its retries; tell the user and end the turn cleanly."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import SendErrorInput
from stepwise.states.deliver import deliver_error

handler = state_handler(SendErrorInput, deliver_error, Logger())
