"""Reminders and scheduled check-ins: records, timing, the schedule port and what happens when one fires."""
