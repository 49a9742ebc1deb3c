"""SendReply state: deliver the turn's reply (split, HTML with a plain-text fallback)."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import TurnInput
from stepwise.states.deliver import deliver_reply_state

handler = state_handler(TurnInput, deliver_reply_state, Logger())
