"""How the docs' piped `make chat` examples are found and compared (tests/support/docs_examples.py), on pages
of its own: only piped commands in code blocks are examples, dates, times and byte counts may differ, `…`
stands for any lines, and any other difference fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.docs_examples import examples, matches

PAGE = """# A page

`printf 'hello\\n' | make chat` in prose is no example.

```
$ HISTORY_LIMIT=500 make chat
make chat: HISTORY_LIMIT must be at most 200 (got 500)
```

```
$ printf 'remind me in 1 minute to stretch\\n/clock +2m\\n' | make chat
you> remind me in 1 minute to stretch
stepwise> Reminder #1 set on Mon 23 Nov 2026 at 14:33 (UTC): stretch
you> /clock +2m
(clock: Mon 23 Nov 2026 14:34:05 UTC, 2m ahead of the real time)
$ echo hello | .venv/bin/python -m stepwise_local.chat
…
stepwise> 🔊 spoken answer (17,256 bytes, Ogg Opus): .chat_voice/reply-1001-3.ogg
```
"""


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "page.md"
    path.write_text(PAGE)
    return path


def test_only_piped_chat_commands_in_code_blocks_are_examples(page: Path) -> None:
    found = examples([page], page.parent)
    assert [(e.source, e.command) for e in found] == [
        ("page.md:11", "printf 'remind me in 1 minute to stretch\\n/clock +2m\\n' | make chat"),
        ("page.md:16", "echo hello | .venv/bin/python -m stepwise_local.chat"),
    ]
    assert found[0].output[-1].startswith("(clock: ") and found[1].output[0] == "…"


def test_dates_times_and_byte_counts_may_differ(page: Path) -> None:
    reminder, _voice = examples([page], page.parent)
    output = (
        "you> remind me in 1 minute to stretch\n"
        "stepwise> Reminder #1 set on Wed 2 Dec 2026 at 9:05 (UTC): stretch\n"
        "you> /clock +2m\n"
        "(clock: Wed 2 Dec 2026 09:06:59 UTC, 2m ahead of the real time)\n"
    )
    assert matches(reminder.output, output)


@pytest.mark.parametrize(
    "changed",
    [
        ("#1 set", "#2 set"),  # a number that is no date, time or size
        ("(UTC)", "(WET)"),
        ("stretch\n", "stretch now\n"),
        ("you> /clock +2m\n", ""),  # a line missing
        ("ahead of the real time)\n", "ahead of the real time)\nstepwise> more\n"),  # a line too many
    ],
)
def test_any_other_difference_fails(page: Path, changed: tuple[str, str]) -> None:
    reminder, _voice = examples([page], page.parent)
    output = "\n".join(reminder.output) + "\n"
    assert matches(reminder.output, output)
    assert not matches(reminder.output, output.replace(*changed, 1))


def test_an_ellipsis_line_stands_for_any_lines_even_none(page: Path) -> None:
    _reminder, voice = examples([page], page.parent)
    spoken = "stepwise> 🔊 spoken answer (9,001 bytes, Ogg Opus): .chat_voice/reply-1001-3.ogg\n"
    assert matches(voice.output, spoken)
    assert matches(voice.output, "you> /voice on\nstepwise> Spoken answers are on.\n" + spoken)
    assert not matches(voice.output, spoken + "you> more\n")
    assert not matches(voice.output, spoken.replace("reply-1001-3", "reply-1001-4"))
