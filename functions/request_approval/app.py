"""RequestApproval state (waitForTaskToken): send Approve / Deny buttons and store the token."""

from aws_lambda_powertools import Logger

from stepwise.lambda_support import state_handler
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.request_approval import request_approval

handler = state_handler(RequestApprovalInput, request_approval, Logger())
