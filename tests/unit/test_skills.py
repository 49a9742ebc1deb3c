"""Skills: reading and validating skill folders, the prompt's list, the use_skill tool and /skills."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest
import skills_ref
from support.turn_fakes import ScriptedModel, drive_turn, text_response, turn_start

from stepwise.model.types import ModelResponse
from stepwise.prompt.system import build_system_prompt
from stepwise.services import Models, Prompt, Tools, TurnServices
from stepwise.skills.catalog import SHIPPED_SKILLS_DIR, SkillCatalog
from stepwise.skills.loader import MAX_BODY_CHARS, MAX_RESOURCE_CHARS
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import ToolContext, ToolRegistry, ToolResult
from stepwise.tools.skill_tools import skill_tools
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = ToolContext(Scope(Conversation(7), 1), turn_id="t1", call_id="t1:0:use", now="2026-11-22T09:00:00Z")


def skill(root: Path, folder: str, text: str, **resources: str) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    for name, content in resources.items():
        (path / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (path / name.replace("__", "/")).write_text(content, encoding="utf-8")
    return path


def front(name: str, description: str = "Does a thing. Use when asked.", body: str = "Step 1.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def run(registry: ToolRegistry, **arguments: object) -> ToolResult:
    tool, args = registry.parse("use_skill", arguments)
    return registry.run(CONTEXT, tool, args)


# ------------------------------------------------------------------------------- the shipped skills
def test_the_shipped_skills_are_the_repository_folder_and_valid_for_the_reference_library() -> None:
    assert SHIPPED_SKILLS_DIR.resolve() == (ROOT / "skills").resolve()
    catalog = SkillCatalog()
    assert len(catalog.skills) >= 3
    assert {"weekly-review", "trip-planning", "message-to-tasks"} <= set(catalog.skills)
    for folder in sorted((ROOT / "skills").iterdir()):
        assert skills_ref.validate(folder) == [], folder.name
        reference = skills_ref.read_properties(folder)
        ours = catalog.skills[folder.name]
        assert (ours.name, ours.description) == (reference.name, reference.description)


def test_the_shipped_skills_cost_a_few_hundred_prompt_tokens_not_their_bodies() -> None:
    catalog = SkillCatalog()
    section = catalog.prompt_section
    assert len(section) / 4 < 150 * len(catalog.skills)  # names and descriptions only
    for found in catalog.skills.values():
        assert found.body not in section and found.body.splitlines()[-1] not in section


# ------------------------------------------------------------------------------- invalid skills
INVALID = {
    "no front matter": (
        "plain",
        "# Just a title\nNo front matter.\n",
        "does not start with YAML front matter",
    ),
    "unclosed front matter": ("open", "---\nname: open\ndescription: x\n", "does not start with YAML"),
    "not YAML": ("broken", "---\nname: [broken\ndescription: x\n---\nbody\n", "not valid YAML"),
    "a list": ("listy", "---\n- name\n---\nbody\n", "not a YAML mapping"),
    "no name": ("nameless", "---\ndescription: x\n---\nbody\n", "has no name"),
    "no description": ("terse", "---\nname: terse\n---\nbody\n", "has no description"),
    "upper case": ("Shout", front("Shout"), "is not 1-64 lowercase letters"),
    "underscore": ("snake_case", front("snake_case"), "is not 1-64 lowercase letters"),
    "leading hyphen": ("-lead", front("-lead"), "is not 1-64 lowercase letters"),
    "double hyphen": ("two--hyphens", front("two--hyphens"), "is not 1-64 lowercase letters"),
    "too long a name": ("a" * 65, front("a" * 65), "is not 1-64 lowercase letters"),
    "not the folder": ("folder", front("other"), "is not the folder's name"),
    "long description": ("wordy", front("wordy", "x" * 1025), "more than 1,024"),
    "unknown field": (
        "extra",
        "---\nname: extra\ndescription: x\nversion: 2\n---\nb\n",
        "unknown front matter",
    ),
    "long body": ("novel", front("novel", body="y" * (MAX_BODY_CHARS + 1)), "the body has 6,001 characters"),
    "no SKILL.md": ("empty", "", "no SKILL.md"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_an_invalid_skill_is_skipped_with_one_log_line_naming_its_folder_and_problem(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    folder, text, problem = INVALID[case]
    path = skill(tmp_path, folder, text)
    if not text:
        (path / "SKILL.md").unlink()
    skill(tmp_path, "good-one", front("good-one"))
    with caplog.at_level(logging.WARNING):
        catalog = SkillCatalog(tmp_path)
        assert list(catalog.skills) == ["good-one"]
        assert list(catalog.skills) == ["good-one"]  # read once: no second log line
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"skill folder {folder!r} skipped: ") and problem in lines[0], lines[0]
    assert skills_ref.validate(path) != [] or case in ("long body", "no SKILL.md"), "the reference agrees"


def test_optional_fields_of_the_format_are_accepted(tmp_path: Path) -> None:
    text = (
        "---\nname: full\ndescription: All the fields.\nlicense: Apache-2.0\ncompatibility: Needs tasks\n"
        "metadata:\n  author: ada\n  version: '1.0'\nallowed-tools: list_tasks add_task\n---\nDo it.\n"
    )
    path = skill(tmp_path, "full", text)
    assert skills_ref.validate(path) == []
    assert SkillCatalog(tmp_path).skills["full"].body == "Do it."


def test_a_missing_folder_is_no_skills_and_no_tool(tmp_path: Path) -> None:
    catalog = SkillCatalog(tmp_path / "nowhere")
    assert catalog.skills == {} and catalog.prompt_section == ""
    registry = build_registry(
        tasks=InMemoryTaskRepository(InMemoryToolCallLedger()),
        ledger=InMemoryToolCallLedger(),
        skills=catalog,
    )
    assert registry.get("use_skill") is None


# ------------------------------------------------------------------------------- the prompt section
def test_the_prompt_lists_names_and_descriptions_sorted_and_the_same_bytes_every_time(tmp_path: Path) -> None:
    skill(tmp_path, "zebra", front("zebra", "Last one.", body="SECRET ZEBRA BODY"))
    skill(tmp_path, "alpha", front("alpha", "First one.", body="SECRET ALPHA BODY"))
    section = SkillCatalog(tmp_path).prompt_section
    assert section.index("- alpha: First one.") < section.index("- zebra: Last one.")
    assert "SECRET" not in section
    first = build_system_prompt([], skills=section)
    assert first == build_system_prompt([], skills=SkillCatalog(tmp_path).prompt_section)
    assert first[0]["text"].endswith(section) and first[0]["cache_control"] == {"type": "ephemeral"}


# ------------------------------------------------------------------------------- the use_skill tool
@pytest.fixture
def skills_registry(tmp_path: Path) -> ToolRegistry:
    skill(
        tmp_path,
        "packing",
        front("packing", body="Read list.md first."),
        **{"list.md": "- passport", "notes__deep.txt": "deeper", ".hidden": "no"},
    )
    (tmp_path / "secret.txt").write_text("outside the skill", encoding="utf-8")
    (tmp_path / "packing" / "escape.md").symlink_to(tmp_path / "secret.txt")
    ledger = InMemoryToolCallLedger()
    return build_registry(tasks=InMemoryTaskRepository(ledger), ledger=ledger, skills=SkillCatalog(tmp_path))


def test_use_skill_is_a_read_only_tool_that_returns_the_body_and_lists_the_resources(
    skills_registry: ToolRegistry,
) -> None:
    tool = skills_registry.get("use_skill")
    assert tool is not None and tool.read_only and not tool.writes and not tool.needs_approval
    result = run(skills_registry, name="packing")
    assert not result.is_error
    assert result.content.startswith("[skill packing]\nRead list.md first.")
    assert result.content.endswith(
        "Resources (read one with use_skill and its path): list.md, notes/deep.txt"
    )
    assert result.structured == {
        "name": "packing",
        "resource": None,
        "text": "Read list.md first.",
        "resources": ["list.md", "notes/deep.txt"],
    }
    deep = run(skills_registry, name="packing", resource="notes/deep.txt")
    assert deep.content == "[packing/notes/deep.txt]\ndeeper" and deep.structured is not None


@pytest.mark.parametrize(
    "resource",
    ["../secret.txt", "escape.md", ".hidden", "/etc/passwd", "SKILL.md", "notes/../list.md", "nope"],
)
def test_a_resource_outside_the_listed_files_is_refused(skills_registry: ToolRegistry, resource: str) -> None:
    result = run(skills_registry, name="packing", resource=resource)
    assert result.is_error
    assert result.content == f"packing has no resource {resource!r} (its resources: list.md, notes/deep.txt)"


def test_an_unknown_skill_is_an_error_that_lists_the_skills(skills_registry: ToolRegistry) -> None:
    result = run(skills_registry, name="cooking")
    assert result.is_error and result.content == "There is no skill 'cooking'. The skills are: packing."


def test_a_resource_too_large_or_not_text_is_refused(tmp_path: Path) -> None:
    skill(tmp_path, "big", front("big"), **{"huge.md": "z" * (MAX_RESOURCE_CHARS + 1), "ok.md": "fine"})
    (tmp_path / "big" / "image.bin").write_bytes(b"\xff\xfe\x00")
    ledger = InMemoryToolCallLedger()
    registry = build_registry(
        tasks=InMemoryTaskRepository(ledger), ledger=ledger, skills=SkillCatalog(tmp_path)
    )
    assert (
        run(registry, name="big", resource="huge.md").content == "'huge.md' is longer than 7,000 characters"
    )
    assert run(registry, name="big", resource="image.bin").content == "'image.bin' is not UTF-8 text"
    assert run(registry, name="big", resource="ok.md").content == "[big/ok.md]\nfine"


# ------------------------------------------------------------------------------- through a turn
def test_a_turn_offers_the_skills_in_the_cached_system_prompt_and_runs_use_skill(
    services: TurnServices, model: ScriptedModel, registry: ToolRegistry
) -> None:
    catalog = SkillCatalog()
    services = dataclasses.replace(services, prompt=Prompt(skills=catalog))
    with_skills = registry.with_tools(skill_tools(catalog))
    services.tools = Tools(built_in=lambda: with_skills)
    use = ModelResponse(
        content=[
            {"type": "tool_use", "id": "toolu_1", "name": "use_skill", "input": {"name": "weekly-review"}}
        ],
        stop_reason="tool_use",
        model="m",
    )
    model.responses += [use, text_response("Let's go")]
    drive_turn(services, turn_start(services, "can we do my weekly review?"))
    first, second = model.requests
    assert first.system == second.system and catalog.prompt_section in first.system[0]["text"]
    assert "use_skill" in [tool["name"] for tool in first.tools]
    (result,) = [b for b in second.messages[-1]["content"] if b.get("type") == "tool_result"]
    assert result["content"].startswith("[skill weekly-review]\n# Weekly review")


def test_the_skills_command_lists_the_skills_without_a_model_call(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram, tmp_path: Path
) -> None:
    drive_turn(services, turn_start(services, "/skills", update_id=1))
    assert telegram.texts(7) == ["No skills are installed in this deployment."]
    skill(tmp_path, "packing", front("packing", "Pack a bag.\n  Use before a trip."))
    with_skills = dataclasses.replace(services, prompt=Prompt(skills=SkillCatalog(tmp_path)))
    drive_turn(with_skills, turn_start(with_skills, "/skills", update_id=2))
    assert telegram.texts(7)[-1] == (
        "Skills I can use (1); ask in your own words and I open the one that fits:\n"
        "• packing: Pack a bag. Use before a trip."  # Telegram formatting makes the dash a bullet
    )
    assert model.requests == []


def test_offline_the_skills_command_says_first_that_skills_need_claude_or_a_compatible_endpoint(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram, tmp_path: Path
) -> None:
    # Given a deployment without a Messages API (the offline rules model) and one skill installed
    skill(tmp_path, "packing", front("packing", "Pack a bag."))
    offline = dataclasses.replace(
        services,
        prompt=Prompt(skills=SkillCatalog(tmp_path)),
        models=Models(services.models.chat, rules_only=True),
    )
    # When the user sends /skills
    drive_turn(offline, turn_start(offline, "/skills", update_id=1))
    # Then the answer says plainly that skills need Claude or a compatible endpoint, then lists what is there
    assert telegram.texts(7) == [
        "Skills need Claude or a compatible endpoint (ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL for a "
        "compatible one): the offline rules model I run on now can't use them. Installed (1):\n"
        "• packing: Pack a bag."
    ]
    assert model.requests == []
