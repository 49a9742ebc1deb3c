"""The audit log: every tool call, who asked, what it did, and the approval decision."""

from stepwise.audit.log import AuditEntry, AuditLog

__all__ = ["AuditEntry", "AuditLog"]
