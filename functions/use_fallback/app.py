"""UseFallback state: may the offline rules model take over the turn after the model failed?"""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.fallback import FallbackInput
from stepwise.states.fallback import use_fallback

handler = state_handler(FallbackInput, use_fallback, Logger())
