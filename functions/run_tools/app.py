"""RunTools state (also RunToolsOrAskApproval and RunApprovedTools): run the step's tool calls; the ones
that need approval wait for the user."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.run_tools import run_tools

# The models a tool round's first call uses (their validators are built on first use): a warm-up builds them.
FIRST_CALL_MODELS = (
    "stepwise.turn_records.models:TurnMeta",
    "stepwise.turn_records.models:ModelStep",
    "stepwise.ledger.models:ToolCallRecord",
    "stepwise.tools.registry:ToolResult",
    "stepwise.audit.log:AuditEntry",
    "stepwise.states.contracts.base:Next",
)

# A warm-up also builds the tools' catalog (and their stores) and their arguments' validators (with their
# schemas for the API), which the first call would otherwise build.
handler = state_handler(
    RunToolsInput,
    run_tools,
    Logger(),
    prepare=lambda services: services.tools.registry.api_tools(),
    models=FIRST_CALL_MODELS,
)
