"""The offline model's one phrasing for background jobs: "in the background: <task>" starts a job whose task
is the rest of the message (docs/jobs.md)."""

from __future__ import annotations

import re

from stepwise.offline.calls import ToolCall

BACKGROUND = re.compile(
    r"^\s*(?:please\s+)?(?:in\s+the\s+background|as\s+a\s+background\s+job|background\s+job)"
    r"\s*[:,\-\u2013\u2014]\s*(.+)$",
    re.IGNORECASE | re.DOTALL,
)
TITLE_WORDS = 6
TITLE_CHARS = 60


def job_intent(text: str) -> list[ToolCall] | None:
    """spawn_job for "in the background: …", with the first words of the task as its title; else None."""
    found = BACKGROUND.match(text)
    if found is None:
        return None
    task = found.group(1).strip()[:4000]
    if not task:
        return None
    return [("spawn_job", {"task": task, "title": job_title(task)})]


def job_title(task: str) -> str:
    """A short title from the task's first words."""
    words = task.split()
    title = " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
