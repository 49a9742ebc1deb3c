"""Approvals: a dangerous tool call waits for the user's tap on Approve or Deny."""

from stepwise.approvals.models import ApprovalCall, ApprovalRequest, ApprovalStatus
from stepwise.approvals.store import ApprovalStore

__all__ = ["ApprovalCall", "ApprovalRequest", "ApprovalStatus", "ApprovalStore"]
