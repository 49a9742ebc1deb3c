"""Approvals: a dangerous tool call waits for the user's tap on Approve or Deny (see `lifecycle`)."""
