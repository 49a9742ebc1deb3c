"""RetakeChat state: a turn back from its approval wait holds the chat again (ChatBusyError while busy)."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts import TurnInput
from stepwise.states.sequence import retake_chat

handler = state_handler(TurnInput, retake_chat, Logger())
