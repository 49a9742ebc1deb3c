"""An owner's secretary settings (issue 42, item 8; docs/secretary.md): whether a contact's message is drafted
a reply for (not while secretary mode is off, nor for a muted contact: by first name or @username, any case),
and which names `/secretary mute` takes."""

from __future__ import annotations

import pytest

from stepwise.secretary.owners import OwnerSettings, contact_name, is_muted, should_draft


def test_a_contact_is_drafted_for_by_default() -> None:
    assert should_draft(OwnerSettings(), "Ada", "ada_l")
    assert should_draft(OwnerSettings(), "Ada", None)


def test_nobody_is_drafted_for_while_secretary_mode_is_off() -> None:
    assert not should_draft(OwnerSettings(off=True), "Ada", "ada_l")
    assert not should_draft(OwnerSettings(off=True), "Bo", None)


@pytest.mark.parametrize("first_name", ["Ada", "ada", "ADA", " Ada "])
def test_a_first_name_mutes_that_first_name_in_any_case(first_name: str) -> None:
    settings = OwnerSettings(muted=("aDa",))
    assert not should_draft(settings, first_name, None)
    assert not should_draft(settings, first_name, "someone_else")
    assert should_draft(settings, "Adam", "ada"), "another name, and a username is not a first name"


def test_an_at_username_mutes_that_username_in_any_case_and_never_a_first_name() -> None:
    settings = OwnerSettings(muted=("@Ada_L",))
    assert not should_draft(settings, "Whoever", "ada_l")
    assert not should_draft(settings, "Whoever", "ADA_L")
    assert should_draft(settings, "Ada_L", None)
    assert should_draft(settings, "@ada_l", "other"), "a first name spelled like a username is a first name"


def test_a_first_name_of_several_words_matches_whatever_its_spaces() -> None:
    assert is_muted(OwnerSettings(muted=("Mary Ann",)), "mary  ann", None)
    assert not is_muted(OwnerSettings(muted=("Mary Ann",)), "Mary", None)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Ada", "Ada"),
        ("  Mary   Ann ", "Mary Ann"),
        ("@Ada_L", "@Ada_L"),
        ("Zoë", "Zoë"),
        ("x" * 64, "x" * 64),
        ("", None),
        ("   ", None),
        ("@", None),
        ("@bad-name", None),
        ("@" + "a" * 33, None),
        ("/reset", None),
        ("x" * 65, None),
    ],
)
def test_the_names_mute_takes(text: str, name: str | None) -> None:
    assert contact_name(text) == name
