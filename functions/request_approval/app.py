"""RequestApproval state (waitForTaskToken): send Approve / Deny buttons and store the token."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.request_approval import request_approval

# The models an approval's first call uses (their validators are built on first use): a warm-up builds them.
FIRST_CALL_MODELS = (
    "stepwise.approvals.models:ApprovalRequest",
    "stepwise.inbox.models:QueuedMessage",
    "stepwise.telegram.keyboard:InlineKeyboardMarkup",
    "stepwise.states.contracts.request_approval:RequestApprovalOutput",
)

handler = state_handler(RequestApprovalInput, request_approval, Logger(), models=FIRST_CALL_MODELS)
