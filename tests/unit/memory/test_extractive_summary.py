"""The offline rolling summary reads as a short list: what the user said that matters, and what was done."""

from __future__ import annotations

import itertools
from typing import Any

from stepwise.history.models import StoredMessage
from stepwise.memory.extractive import MAX_BULLETS, MAX_STATEMENT_CHARS
from stepwise.memory.summarizer import MAX_SUMMARY_CHARS, ExtractiveSummarizer

_ids = itertools.count(1)


def said(text: str) -> StoredMessage:
    n = next(_ids)
    return StoredMessage(
        id=f"u{n}", chat_id=1, role="user", content=text, created_at=f"2026-11-23T10:{n:02d}"
    )


def answered(text: str, *calls: dict[str, Any]) -> StoredMessage:
    n = next(_ids)
    return StoredMessage(
        id=f"a{n}",
        chat_id=1,
        role="assistant",
        content=text,
        created_at=f"2026-11-23T10:{n:02d}",
        tool_calls=list(calls),
    )


def call(name: str, result: str, is_error: bool = False, **args: Any) -> dict[str, Any]:
    return {"id": "t", "name": name, "input": args, "is_error": is_error, "result": result}


def test_the_summary_lists_the_users_statements_and_what_was_done_without_small_talk_or_questions() -> None:
    conversation = [
        said("hi"),
        answered("Hello! I'm Stepwise…"),
        said("My sister Anna lives in Lisbon"),
        answered("I'm offline, so I didn't understand that."),
        said("what's the weather like?"),
        answered("I'm offline…"),
        said("add buy milk"),
        answered("Added task #1: buy milk", call("add_task", "Added task #1: buy milk", title="buy milk")),
        said("what's on my list"),
        answered("1 task: #1 [ ] buy milk", call("list_tasks", "1 task:\n#1 [ ] buy milk", status="all")),
        said("done 7"),
        answered(
            "⚠️ There's no task #7",
            call("complete_task", "There is no task #7 on the user's list.", True, task_id=7),
        ),
        said("remember that I take my coffee black"),
        answered(
            "Remembered",
            call("remember", "Remembered (fact-x1): I take my coffee black", fact="I take my coffee black"),
        ),
        said("thanks!"),
        answered("You're welcome!"),
        said("I'm moving to Porto in June\nand I start a new job there"),
    ]
    assert ExtractiveSummarizer().summarize("", conversation) == (
        "- Said: My sister Anna lives in Lisbon\n"
        "- Said: I'm moving to Porto in June and I start a new job there\n"
        "- Done: Added task #1: buy milk; Remembered (fact-x1): I take my coffee black"
    )


def test_the_previous_summary_comes_first_and_repeats_are_left_out() -> None:
    previous = "- Said: My sister Anna lives in Lisbon"
    summary = ExtractiveSummarizer().summarize(
        previous, [said("My sister Anna lives in Lisbon"), said("I love hiking in the hills")]
    )
    assert summary == "- Said: My sister Anna lives in Lisbon\n- Said: I love hiking in the hills"


def test_a_summary_in_the_older_format_is_carried_over_as_bullets() -> None:
    summary = ExtractiveSummarizer().summarize(
        "The user said: I like tea a lot", [said("My cat is called Miso")]
    )
    assert summary == "- Said: I like tea a lot\n- Said: My cat is called Miso"


def test_the_summary_stays_short_and_keeps_the_newest() -> None:
    many = [said(f"fact number {n} about my life " + "and more detail " * 30) for n in range(60)]
    summary = ExtractiveSummarizer().summarize("", many)
    lines = summary.splitlines()
    assert len(summary) <= MAX_SUMMARY_CHARS and len(lines) <= MAX_BULLETS
    assert lines[-1].startswith("- Said: fact number 59 ") and all(
        len(line) <= MAX_STATEMENT_CHARS + 8 for line in lines
    )
    assert lines[-1].endswith("…")


def test_nothing_worth_keeping_leaves_the_previous_summary_as_it_was() -> None:
    assert ExtractiveSummarizer().summarize(
        "- Said: I live in Porto", [said("ok"), said("how are you?")]
    ) == ("- Said: I live in Porto")
    assert ExtractiveSummarizer().summarize("", [said("hello")]) == ""
