"""A group's turns hold nobody's personal data (docs/groups.md): no owner's notes (USER.md) in the prompt,
commands about one person pointing to the private chat, and answers worded for the group. On in-memory
ports, no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.turn_fakes import (
    ScriptedModel,
    drive_turn,
    text_response,
    tool_use,
    turn_context_text,
    turn_start,
)

from stepwise.commands.table import COMMANDS, in_private, route
from stepwise.config import Settings
from stepwise.jobs.models import Job
from stepwise.prompt.persona import load_persona
from stepwise.runtime import Runtime
from stepwise.services import TurnServices
from stepwise_local.in_memory.jobs import InMemoryJobStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

GROUP, ANA = -100, 7
OWNER_NOTES = "- My name is Ada; my bank PIN hint is the cat's birthday."
GROUP_NOTES = "- This is the Silva family: Ada, Sam and the kids."


def persona_folder(tmp_path: Path) -> Path:
    (tmp_path / "SOUL.md").write_text("Warm and brief.", encoding="utf-8")
    (tmp_path / "USER.md").write_text(OWNER_NOTES, encoding="utf-8")
    (tmp_path / "GROUP.md").write_text(GROUP_NOTES, encoding="utf-8")
    (tmp_path / "AGENTS.md").write_text("Tools, not promises.", encoding="utf-8")
    return tmp_path


def in_group(services: TurnServices, text: str, update_id: int = 1) -> None:
    """A turn of Ana's message in the group."""
    start = turn_start(
        services,
        text,
        chat_id=GROUP,
        user_id=ANA,
        sender="Ana",
        update_id=update_id,
        created_at=f"2026-11-22T09:{update_id:02d}:00.000Z",
    )
    drive_turn(services, start)


def privately(services: TurnServices, text: str, update_id: int = 1) -> None:
    """A turn of Ana's message in her private chat."""
    drive_turn(services, turn_start(services, text, chat_id=ANA, update_id=update_id))


# ------------------------------------------------------------------------------------------ the persona
def test_a_groups_persona_has_the_group_notes_and_never_the_owners(tmp_path: Path) -> None:
    folder = persona_folder(tmp_path)
    private, group = load_persona(folder), load_persona(folder, group=True)
    assert OWNER_NOTES in private and GROUP_NOTES not in private
    assert GROUP_NOTES in group and OWNER_NOTES not in group
    assert "## About the user" not in group and group.startswith("## Character\nWarm and brief.")
    assert group.endswith("## House rules\nTools, not promises.")
    runtime = Runtime(Settings(persona_dir=str(folder)))
    assert (runtime.persona, runtime.group_persona) == (private, group)


def test_the_shipped_group_notes_are_a_template_that_adds_nothing() -> None:
    shipped = load_persona(group=True)
    assert "## About this group" not in shipped and "## About the user" not in shipped
    assert shipped == load_persona(), "the shipped USER.md and GROUP.md are both comments only"


def test_a_group_turns_model_request_holds_none_of_the_owners_notes(
    services: TurnServices, model: ScriptedModel, tmp_path: Path
) -> None:
    folder = persona_folder(tmp_path)
    services.prompt.persona, services.prompt.group_persona = (
        load_persona(folder),
        load_persona(folder, group=True),
    )
    model.responses += [text_response("Hi all"), text_response("Hi Ada")]
    in_group(services, "@stepwise_bot what do you know about Ada?")
    group_request = json.dumps([model.requests[-1].system, model.requests[-1].messages])
    assert "bank PIN" not in group_request and "My name is Ada" not in group_request
    assert "Silva family" in group_request
    privately(services, "hello", update_id=2)
    private_request = json.dumps(model.requests[-1].system)
    assert "bank PIN" in private_request and "Silva family" not in private_request


def test_a_group_turns_zone_note_sends_the_member_to_the_private_chat(
    services: TurnServices, model: ScriptedModel
) -> None:
    model.responses.append(text_response("Sure"))
    in_group(services, "@stepwise_bot remind us at 5pm")
    note = turn_context_text(model.requests[-1])
    assert "The member who asked has not set a time zone" in note
    assert "/timezone in their private chat" in note


# ------------------------------------------------------------------------------------------ commands
def test_jobs_and_timezone_are_commands_about_one_person() -> None:
    personal = {command.name for command in COMMANDS if command.personal}
    assert personal == {"usage", "voice", "connect", "accounts", "jobs", "timezone", "secretary"}
    assert route("/timezone Europe/Lisbon") == "rules", "in a private chat the rules model sets it"
    assert route("/timezone Europe/Lisbon", in_group=True) == "answer", "in a group: the pointer"


@pytest.mark.parametrize("command", ["/jobs", "/jobs stop 1", "/timezone", "/timezone Asia/Tokyo"])
def test_jobs_and_timezone_in_a_group_point_to_the_private_chat_and_change_nothing(
    services: TurnServices,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    reminders: InMemoryReminderStore,
    command: str,
) -> None:
    jobs = InMemoryJobStore()
    jobs.create(
        Job(
            user_id=ANA,
            number=1,
            chat_id=ANA,
            execution="job-1",
            title="Sort my private notes",
            task="…",
            parent_turn_id="t0",
            created_at="2026-11-22T08:00:00.000Z",
            deadline="2026-11-22T08:15:00.000Z",
        )
    )
    services.stores.jobs = jobs
    reminders.set_timezone(ANA, "Europe/Lisbon")
    in_group(services, command)
    name = command.split()[0].removeprefix("/")
    assert telegram.texts(GROUP) == [in_private(name)]
    assert "Europe/Lisbon" not in telegram.texts(GROUP)[0] and "private notes" not in telegram.texts(GROUP)[0]
    assert model.requests == [], "not the rules model either"
    assert reminders.timezone(ANA) == "Europe/Lisbon", "/timezone Asia/Tokyo in a group sets nothing"
    assert jobs.recent(ANA)[0].running, "/jobs stop in a group stops nothing"
    privately(services, "/timezone", update_id=2)
    assert telegram.texts(ANA)[-1].startswith("Your time zone is Europe/Lisbon"), "in private as before"


# ------------------------------------------------------------------------------------------ wording
def test_a_groups_empty_lists_and_memories_speak_of_the_group(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    for number, command in enumerate(["/tasks", "/reminders", "/memory", "/reset"], start=1):
        in_group(services, command, update_id=number)
    assert telegram.texts(GROUP) == [
        "The group has no tasks. To add one, mention me (or reply to one of my messages) with it, for "
        "example “add bread”.",
        "The group has no reminders. To set one, mention me (or reply to one of my messages) with it, for "
        "example “remind us at 5pm to call grandma”.",
        "I don't remember anything for this group yet. To keep something, mention me (or reply to one of my "
        "messages) with it, for example “remember that …”.",
        "Fresh start: from the next message on I no longer see the earlier messages here. Nothing was "
        "deleted; the group's tasks, reminders and memories stay.",
    ]
    privately(services, "/tasks", update_id=9)
    assert telegram.texts(ANA) == ["You have no tasks. Add one by writing, for example, “add buy milk”."]


def test_a_groups_memory_listing_is_the_groups(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    model.responses += [tool_use(("remember", {"fact": "The wifi password is tulip"})), text_response("Ok")]
    in_group(services, "@stepwise_bot remember the wifi password is tulip")
    in_group(services, "/memory", update_id=2)
    listing = telegram.texts(GROUP)[-1]
    assert listing.startswith("What I remember for this group (1):\n") and "tulip" in listing
