"""The offline phrasing corpus: everyday reminder, check-in and time zone phrasings and the tool calls the
offline model makes for them, on Monday 2026-11-23 at 14:05 in Lisbon; and texts that must not become
reminders."""

from __future__ import annotations

from typing import Any

from support.offline_requests import REMINDER_TOOLS, offline_request

from stepwise.model.offline import OfflineModel

Call = tuple[str, dict[str, Any]]
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri"]
REQUIRED_SHARE = 0.95


def at(when: str, text: str, checkin: bool = False) -> list[Call]:
    return [("set_reminder", {"text": text, "checkin": checkin, "at": when})]


def after(minutes: int, text: str) -> list[Call]:
    return [("set_reminder", {"text": text, "checkin": False, "in_minutes": minutes})]


def weekly(days: list[str], time: str, text: str, checkin: bool = False) -> list[Call]:
    return [("set_reminder", {"text": text, "checkin": checkin, "repeat": {"days": days, "time": time}})]


def every(minutes: int, text: str) -> list[Call]:
    return [("set_reminder", {"text": text, "checkin": False, "repeat": {"every_minutes": minutes}})]


CORPUS: list[tuple[str, list[Call]]] = [
    # a time of day: its next occurrence after 14:05
    ("remind me at 5pm to call mom", at("2026-11-23T17:00", "call mom")),
    ("Remind me at 5 PM to call mom.", at("2026-11-23T17:00", "call mom")),
    ("please remind me at 5pm to call mom", at("2026-11-23T17:00", "call mom")),
    ("remind me to call mom at 17:30", at("2026-11-23T17:30", "call mom")),
    ("Remind me to call mom at 5:30pm please", at("2026-11-23T17:30", "call mom")),
    ("remind me at 9am to call mom", at("2026-11-24T09:00", "call mom")),
    ("remind me at noon to eat something", at("2026-11-24T12:00", "eat something")),
    ("remind me at 8 to take my pills", at("2026-11-23T20:00", "take my pills")),
    ("remind me at 11pm to go to bed", at("2026-11-23T23:00", "go to bed")),
    ("remind me at midnight to take out the bins", at("2026-11-24T00:00", "take out the bins")),
    ("set a reminder for 5pm to call mom", at("2026-11-23T17:00", "call mom")),
    ("reminder: call mom at 5pm", at("2026-11-23T17:00", "call mom")),
    ("remind me, at 5pm, to call mom", at("2026-11-23T17:00", "call mom")),
    ("remind me to take the 5pm train at 4pm", at("2026-11-23T16:00", "take the 5pm train")),
    # a day, with or without a time
    ("remind me tomorrow at 9 to pay rent", at("2026-11-24T09:00", "pay rent")),
    ("remind me tomorrow to pay rent", at("2026-11-24T09:00", "pay rent")),
    ("tomorrow at 9am remind me to pay rent", at("2026-11-24T09:00", "pay rent")),
    ("remind me to pay rent tomorrow morning", at("2026-11-24T08:00", "pay rent")),
    ("remind me on friday at 10am to book tickets", at("2026-11-27T10:00", "book tickets")),
    ("remind me friday at 10 to book tickets", at("2026-11-27T10:00", "book tickets")),
    ("remind me next friday to book tickets", at("2026-11-27T09:00", "book tickets")),
    ("remind me on monday at 9 to call the bank", at("2026-11-30T09:00", "call the bank")),
    ("remind me to call the dentist on thursday", at("2026-11-26T09:00", "call the dentist")),
    ("remind me the day after tomorrow to call grandma", at("2026-11-25T09:00", "call grandma")),
    ("remind me tonight to call dad", at("2026-11-23T21:00", "call dad")),
    ("remind me this evening to call dad", at("2026-11-23T19:00", "call dad")),
    ("remind me on 2026-12-24 at 18:00 to wrap gifts", at("2026-12-24T18:00", "wrap gifts")),
    ("remind me on 24 december at 6pm to wrap gifts", at("2026-12-24T18:00", "wrap gifts")),
    ("remind me on dec 24 to wrap gifts", at("2026-12-24T09:00", "wrap gifts")),
    ("remind me on 24/12 at 18:00 to wrap gifts", at("2026-12-24T18:00", "wrap gifts")),
    ("remind me on jan 5 to renew my passport", at("2027-01-05T09:00", "renew my passport")),
    ("remind me on the 1st to pay rent", at("2026-12-01T09:00", "pay rent")),
    # an explicit past date goes to the tool as said, which answers that it is past
    ("remind me on 2026-01-05 at 9:00 to renew", at("2026-01-05T09:00", "renew")),
    ("remind me today at 9am to stretch", at("2026-11-23T09:00", "stretch")),
    (
        "remind me about task 3 tomorrow at 9",
        [("set_reminder", {"text": "task 3", "checkin": False, "at": "2026-11-24T09:00", "task_id": 3})],
    ),
    # a delay
    ("remind me in 20 minutes to take the pizza out", after(20, "take the pizza out")),
    ("in 2 hours remind me to stretch", after(120, "stretch")),
    ("remind me in 1 minute to test", after(1, "test")),
    ("remind me in half an hour to check the oven", after(30, "check the oven")),
    ("remind me in an hour to leave", after(60, "leave")),
    ("remind me to move the car in 45 min", after(45, "move the car")),
    ("in 90 minutes, remind me to check the laundry", after(90, "check the laundry")),
    ("remind me in 1h30 to leave", after(90, "leave")),
    ("can you remind me in 10 mins to check the oven?", after(10, "check the oven")),
    ("ping me in 15 minutes to check the tea", after(15, "check the tea")),
    ("remind me in 2 days to water the cactus", after(2880, "water the cactus")),
    ("snooze for 5 minutes", after(5, "snoozed reminder")),
    ("snooze", after(10, "snoozed reminder")),
    # repeats
    ("every monday at 9 remind me to water the plants", weekly(["mon"], "09:00", "water the plants")),
    ("remind me every weekday at 8:00 to stand up", weekly(WEEKDAYS, "08:00", "stand up")),
    ("every day at 7:30 remind me to take vitamins", weekly([], "07:30", "take vitamins")),
    ("remind me daily at 10pm to lock the door", weekly([], "22:00", "lock the door")),
    (
        "remind me every mon, wed and fri at 7 to go running",
        weekly(["mon", "wed", "fri"], "07:00", "go running"),
    ),
    (
        "remind me on mondays and thursdays at 18:00 to go to the gym",
        weekly(["mon", "thu"], "18:00", "go to the gym"),
    ),
    ("remind me every weekend at 10 to clean the flat", weekly(["sat", "sun"], "10:00", "clean the flat")),
    ("remind me to take out the bins every tuesday evening", weekly(["tue"], "19:00", "take out the bins")),
    ("every sunday at 8pm remind me to plan the week", weekly(["sun"], "20:00", "plan the week")),
    ("remind me every 2 hours to drink water", every(120, "drink water")),
    ("remind me every hour to stretch", every(60, "stretch")),
    ("remind me every 30 minutes to blink", every(30, "blink")),
    # check-ins: at each time the instruction runs as a turn
    ("every morning at 8 send me my open tasks", weekly([], "08:00", "send me my open tasks", checkin=True)),
    (
        "every friday at 17:00 ask me how my week went",
        weekly(["fri"], "17:00", "ask me how my week went", True),
    ),
    ("check in with me every day at 9", weekly([], "09:00", "check in with me", checkin=True)),
    ("check in with me every evening", weekly([], "19:00", "check in with me", checkin=True)),
    ("every evening ask me what I got done today", weekly([], "19:00", "ask me what I got done today", True)),
    ("every day at noon send me my task list", weekly([], "12:00", "send me my task list", checkin=True)),
    ("send me my open tasks every morning", weekly([], "08:00", "send me my open tasks", checkin=True)),
    (
        "every weekday at 9:30 give me a summary of my tasks",
        weekly(WEEKDAYS, "09:30", "give me a summary of my tasks", checkin=True),
    ),
    ("tomorrow at 9 send me my tasks", at("2026-11-24T09:00", "send me my tasks", checkin=True)),
    (
        "every evening on weekdays ask me what I did",
        weekly(WEEKDAYS, "19:00", "ask me what I did", checkin=True),
    ),
    ("remind me every monday morning to plan the week", weekly(["mon"], "08:00", "plan the week")),
    # listing and cancelling
    ("what reminders do I have", [("list_reminders", {})]),
    ("list my reminders", [("list_reminders", {})]),
    ("show reminders", [("list_reminders", {})]),
    ("What are my reminders?", [("list_reminders", {})]),
    ("/reminders", [("list_reminders", {})]),
    ("cancel reminder 2", [("cancel_reminder", {"reminder_id": 2})]),
    ("delete reminder #2", [("cancel_reminder", {"reminder_id": 2})]),
    ("stop reminder 3", [("cancel_reminder", {"reminder_id": 3})]),
    (
        "cancel reminders 4 and 5",
        [("cancel_reminder", {"reminder_id": 4}), ("cancel_reminder", {"reminder_id": 5})],
    ),
    # time zones, passed through as typed (the tool checks them)
    ("/timezone Europe/Lisbon", [("set_timezone", {"timezone": "Europe/Lisbon"})]),
    ("my time zone is America/New_York", [("set_timezone", {"timezone": "America/New_York"})]),
    ("set my timezone to Asia/Tokyo", [("set_timezone", {"timezone": "Asia/Tokyo"})]),
    ("change my time zone to Europe/Berlin", [("set_timezone", {"timezone": "Europe/Berlin"})]),
    ("timezone: UTC", [("set_timezone", {"timezone": "UTC"})]),
]

# Not reminders: the task commands must still reach the task tools, the rest no tool at all.
NEGATIVES: list[tuple[str, list[Call]]] = [
    ("I forgot to remind him", []),
    ("what time is it in Tokyo", []),
    ("add buy milk", [("add_task", {"title": "buy milk"})]),
    ("add call mom tomorrow at 9", [("add_task", {"title": "call mom tomorrow at 9"})]),
    ("remind me to call mom", [("add_task", {"title": "call mom"})]),
    ("list", [("list_tasks", {"status": "all"})]),
    ("show my tasks", [("list_tasks", {"status": "all"})]),
    ("what do I have to do today", [("list_tasks", {"status": "all"})]),
    ("done 3", [("complete_task", {"task_id": 3})]),
    ("delete 3", [("delete_task", {"task_id": 3})]),
    (
        "remember that my sister's birthday is on dec 24",
        [("remember", {"fact": "My sister's birthday is on dec 24"})],
    ),
    ("every day I feel tired", []),
    ("every friday is pizza day", []),
    ("tomorrow show me my tasks", []),
    ("show me my tasks for tomorrow", []),
    ("remind me what we talked about yesterday", []),
    ("remind me at 5pm", []),
    ("the meeting is at 5pm", []),
    ("in 2 hours", []),
    ("tell me a joke", []),
    ("I'm in a meeting", []),
    ("what reminders are good for productivity", []),
    ("cancel my subscription", []),
    ("my timezone is confusing me a lot today", []),
]


def calls_for(text: str) -> list[Call]:
    response = OfflineModel().complete(offline_request(text))
    return [(block["name"], block["input"]) for block in response.tool_uses]


def test_the_corpus_holds_at_least_sixty_phrasings() -> None:
    assert len(CORPUS) >= 60
    assert len({text for text, _ in CORPUS}) == len(CORPUS)


def test_reminder_phrasings_become_the_tool_calls_the_real_model_would_make() -> None:
    misses = [(text, calls_for(text), want) for text, want in CORPUS if calls_for(text) != want]
    share = 1 - len(misses) / len(CORPUS)
    report = "\n".join(f"{text!r}: got {got}, want {want}" for text, got, want in misses)
    assert share >= REQUIRED_SHARE, f"{share:.0%} of the corpus matched; misses:\n{report}"


def test_other_texts_never_become_reminders() -> None:
    wrong = [(text, calls_for(text), want) for text, want in NEGATIVES if calls_for(text) != want]
    assert not [(text, got) for text, got, _ in wrong if any(name in REMINDER_TOOLS for name, _ in got)]
    assert wrong == []
