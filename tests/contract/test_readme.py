"""The README is the front door and the documentation tells the truth.

The README stays short and starts with the two commands; every topic has its page in `docs/`, linked from the
README or the docs index; every relative link (file and `#anchor`) of the README and the docs pages resolves;
every `make` target they name exists; and the configuration page lists every setting and every environment
variable the template sets. The link and target checkers are tested on a folder of their own, so a broken link
is known to fail the check.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from support.tools import ROOT

from stepwise.config import all_settings_models
from stepwise_local.template import Template

README_PATH = ROOT / "README.md"
DOCS = ROOT / "docs"
README = README_PATH.read_text()
MAKEFILE = (ROOT / "Makefile").read_text()
MAX_README_LINES = 250

# One page per topic (issue 13): the topics the README hands over, and the larger ones split off.
TOPIC_PAGES = {
    "how a message flows": "message-flow.md",
    "reliability and ordering": "reliability.md",
    "tools and approvals": "tools-and-approvals.md",
    "outside MCP servers": "mcp-client.md",
    "security": "security.md",
    "memory": "memory.md",
    "reminders": "reminders.md",
    "streaming": "streaming.md",
    "commands": "commands.md",
    "configuration": "configuration.md",
    "deploy": "deploy.md",
    "local mode": "local-mode.md",
    "tests": "tests.md",
    "troubleshooting": "troubleshooting.md",
    "photos and documents": "photos-and-documents.md",
    "spend cap and usage": "spend-cap-and-usage.md",
    "persona": "persona.md",
    "skills": "skills.md",
    "background jobs": "jobs.md",
    "voice notes": "voice.md",
    "prompt caching": "prompt-caching.md",
    "cold starts and performance": "performance.md",
    "the fallback": "fallback.md",
}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`(?:[^`\n]|\n(?![ \t]*\n))+`")  # may wrap, not across paragraphs
LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAKE_TARGET = re.compile(r"(?<![\w-])make\s+([a-z][\w-]*)")


# ------------------------------------------------------------------------------------------------ checkers
def markdown_pages() -> list[Path]:
    """The README and every page of docs/."""
    return [README_PATH, *sorted(DOCS.glob("*.md"))]


def without_code(text: str) -> str:
    """The text outside fenced code blocks and inline code spans (where brackets are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lowercased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors by its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file (a repeated heading gets -1, -2… as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for _, heading in HEADING.findall(FENCE.sub("", path.read_text())):
        anchor = github_anchor(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    """The link targets of a Markdown file that point inside the repository (no scheme)."""
    return [target for target in LINK.findall(without_code(path.read_text())) if not SCHEME.match(target)]


def link_target(page: Path, target: str) -> tuple[Path, str]:
    """The file a relative link points to and its anchor ("" for none)."""
    location, _, anchor = target.partition("#")
    file = (page.parent / unquote(location)).resolve() if location else page.resolve()
    return file, unquote(anchor)


def shown(page: Path) -> str:
    """A page's path as the repository names it (its name alone outside the repository)."""
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def broken_links(pages: list[Path]) -> list[str]:
    """`page: target (why)` for every relative link to a missing file or a missing heading."""
    broken = []
    for page in pages:
        for target in relative_links(page):
            file, anchor = link_target(page, target)
            if not file.exists():
                broken.append(f"{shown(page)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{shown(page)}: {target} (no heading #{anchor} in {file.name})")
    return broken


def make_targets_named(text: str) -> set[str]:
    """The targets of `make <target>` in code: inline code spans and fenced code blocks."""
    code = "\n".join(INLINE_CODE.findall(text) + [block.group(0) for block in FENCE.finditer(text)])
    return set(MAKE_TARGET.findall(code))


def makefile_targets(makefile: str) -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*)[ \t]*:(?!=)", makefile, re.M))


def linked_pages(page: Path) -> set[Path]:
    """The files a page links to."""
    return {link_target(page, target)[0] for target in relative_links(page)}


def table_of(text: str) -> str:
    """The rows of the Markdown tables in a text."""
    return "\n".join(line for line in text.splitlines() if line.startswith("|"))


# ------------------------------------------------------------------------------------------ the README
def test_the_readme_is_the_front_door_of_at_most_250_lines() -> None:
    lines = len(README.splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move details to docs/"


def test_the_readme_starts_with_the_two_commands() -> None:
    opening = README.index("```")
    assert README[:opening].count("\n") < 12, "the first code block is the first thing a newcomer sees"
    first_block = README.split("```", 2)[1]
    assert "make chat" in first_block and "make test" in first_block


# -------------------------------------------------------------------------------------------- the pages
@pytest.mark.parametrize("topic", sorted(TOPIC_PAGES))
def test_every_topic_has_its_page_linked_from_the_readme_or_the_docs_index(topic: str) -> None:
    page = DOCS / TOPIC_PAGES[topic]
    assert page.exists(), f"docs/{page.name} ({topic}) is missing"
    assert page.read_text().startswith("# "), f"docs/{page.name} starts with its title"
    linked = linked_pages(README_PATH) | linked_pages(DOCS / "README.md")
    assert page.resolve() in linked, f"docs/{page.name} is linked from neither README.md nor docs/README.md"


def test_every_docs_page_is_in_the_index() -> None:
    index = linked_pages(DOCS / "README.md")
    orphans = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p.resolve() not in index]
    assert orphans == []


def test_every_relative_link_reaches_a_file_and_a_heading() -> None:
    assert broken_links(markdown_pages()) == []


def test_every_make_target_the_docs_name_exists() -> None:
    targets = makefile_targets(MAKEFILE)
    named = {shown(page): make_targets_named(page.read_text()) for page in markdown_pages()}
    assert {"chat", "test"} <= named["README.md"]
    unknown = {name: sorted(found - targets) for name, found in named.items() if found - targets}
    assert unknown == {}


def test_every_setting_is_documented_in_the_configuration_table() -> None:
    table = table_of((DOCS / "configuration.md").read_text())
    names = [name.upper() for model in all_settings_models() for name in model.model_fields]
    missing = [name for name in names if f"`{name}" not in table]
    assert missing == []


def test_every_environment_variable_of_the_template_is_in_the_configuration_table() -> None:
    table = table_of((DOCS / "configuration.md").read_text())
    variables = {name for spec in Template().functions().values() for name in spec.environment}
    assert variables, "the template sets environment variables"
    assert sorted(name for name in variables if f"`{name}`" not in table) == []


# ------------------------------------------------------------------------------------ the checkers fail
def test_the_anchor_of_a_heading_is_githubs() -> None:
    assert github_anchor("Ordering: one turn at a time per chat") == "ordering-one-turn-at-a-time-per-chat"
    assert github_anchor("`make chat` and /clock") == "make-chat-and-clock"
    assert github_anchor("Tools — and approvals") == "tools--and-approvals"
    assert github_anchor("MAX_TOOL_STEPS, in [brief](x.md)") == "max_tool_steps-in-brief"


def test_the_link_checker_finds_missing_files_and_headings(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text(
        "# B\n\n## Good heading\n\n## Good heading\n\n```\n## Not one\n```\n"
    )
    page = tmp_path / "a.md"
    page.write_text(
        "# A\n\n## Local part\n\n"
        "[ok](docs/b.md) [ok](docs/b.md#good-heading) [ok](docs/b.md#good-heading-1) [ok](#local-part)\n"
        "[ok](https://example.com/missing.md) [ok](docs/)\n"
        "`[in code](missing-in-code.md)`\n\n```\n[in a block](missing-in-block.md)\n```\n"
        "[bad](docs/missing.md) [bad](docs/b.md#no-such-heading) [bad](#nowhere) [bad](docs/b.md#not-one)\n"
    )
    assert broken_links([page]) == [
        "a.md: docs/missing.md (no such file)",
        "a.md: docs/b.md#no-such-heading (no heading #no-such-heading in b.md)",
        "a.md: #nowhere (no heading #nowhere in a.md)",
        "a.md: docs/b.md#not-one (no heading #not-one in b.md)",
    ]


def test_the_make_target_checker_reads_code_only() -> None:
    text = (
        "Run `make chat` or `make\nbench`, then:\n\n"
        "```sh\n$ X=1 make nosuch\nmake test   # all\n```\n\n"
        "we make do\n"
    )
    assert make_targets_named(text) == {"bench", "chat", "nosuch", "test"}
    assert makefile_targets("VENV := .venv\nchat: $(BIN)\n\t@x\nbuild-it:\n") == {"chat", "build-it"}


def test_every_feature_in_the_readme_links_to_its_docs_page() -> None:
    section = README.split("## What it does", 1)[1].split("\n## ", 1)[0]
    bullets = re.findall(r"^- \*\*(.+?)\*\*(.*?)(?=^- |\Z)", section, re.M | re.S)
    assert len(bullets) >= 10
    for name, body in bullets:
        pages = [target for target in LINK.findall(body) if target.startswith("docs/")]
        assert pages, f"the README's feature “{name}” links to no page in docs/"
