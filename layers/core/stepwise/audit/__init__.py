"""The audit log: every tool call, who asked, what it did, and the approval decision."""
