"""The piped `make chat` examples of the README and docs/*.md: each command as printed, the output it shows,
and how the chat's output is held against it (see docs/tests.md).

An example is a line `$ <command>` in a fenced code block whose command pipes into the chat (`| make chat`,
or `| ... python -m stepwise_local.chat`); the lines after it, up to the next `$ ` line or the end of the
block, are its output. Output is compared line by line after a few varying parts are replaced, on both
sides, by placeholders: dates (`Mon 23 Nov 2026`, `2026-11-24`), times of day (`14:33`, `14:34:05`) and
byte counts (`17,256 bytes`). A line holding only `…` stands for any number of lines (none included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
PIPED_CHAT = re.compile(r"\|\s*(?:make chat|\S*python\S* -m stepwise_local\.chat)(?:\s|$)")
ELISION = "…"
WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
VARYING = (
    (re.compile(rf"\b{WEEKDAY} \d{{1,2}} {MONTH} \d{{4}}\b"), "<date>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"), "<time>"),
    (re.compile(r"\b\d[\d,]* bytes\b"), "<n> bytes"),
)


@dataclass(frozen=True)
class Example:
    """One piped command of the docs and the output they show for it."""

    source: str  # where it is printed: "README.md:27"
    command: str  # the command line, without its "$ "
    output: tuple[str, ...]


def examples(paths: Iterable[Path], root: Path) -> list[Example]:
    """Every piped chat example in these Markdown files, in order."""
    found: list[Example] = []
    for path in paths:
        in_block, current = False, None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            ends = FENCE.match(line) is not None or (in_block and line.startswith("$ "))
            if ends and current is not None:
                found.append(current)
                current = None
            if FENCE.match(line):
                in_block = not in_block
            elif in_block and line.startswith("$ ") and PIPED_CHAT.search(line):
                current = Example(f"{path.relative_to(root)}:{number}", line[2:], ())
            elif current is not None:
                current = Example(current.source, current.command, (*current.output, line))
    return found


def normalized(line: str) -> str:
    """A line with its varying parts (dates, times, byte counts) replaced by placeholders."""
    for pattern, placeholder in VARYING:
        line = pattern.sub(placeholder, line)
    return line


def matches(expected: Iterable[str], output: str) -> bool:
    """Whether the output shows the expected lines, normalized, with `…` lines standing for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line.strip() == ELISION else re.escape(normalized(line)) + r"\n"
        for line in expected
    )
    shown = "".join(normalized(line) + "\n" for line in output.splitlines())
    return re.fullmatch(pattern, shown) is not None
