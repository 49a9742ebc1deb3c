"""RunTools state (also RunToolsOrAskApproval and RunApprovedTools): run the step's tool calls; the ones
that need approval wait for the user."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.run_tools import run_tools

# A warm-up also builds the tools' catalog (and their stores), which the first call would otherwise build.
handler = state_handler(RunToolsInput, run_tools, Logger(), prepare=lambda services: services.tools)
