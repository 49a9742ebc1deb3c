"""Prompt caching: what a 40-turn conversation with tool turns bills, before and after, on Haiku and Sonnet.

Plays one scripted conversation (40 user messages; 14 of the turns call a tool, one turn comes after a pause
of eight minutes) through the real code path: the webhook, the real state machine on the local emulation,
RunTools on the emulated tables, and the fake Messages API, which applies the real API's caching rules and
counts tokens as characters / 4 of each block's JSON (`stepwise_local.anthropic_server.PromptCache`). The
model's answers are scripted, so every run sends the same conversation; a virtual clock puts 40 seconds
between turns.

BEFORE is the code before the per-model caching policy (commit 343a9b4), reproduced in this process by its
setting: `HISTORY_MARGIN=10`, the window that moves in blocks of 10 messages and the breakpoints on the
messages, on every model (it sends the same requests as that commit did). Its requests do not depend on the
model, so it is played once, and Sonnet's figures replay the same requests at the same virtual times through
the same cache rules with Sonnet's minimum. AFTER is the code as it is, by default (`HISTORY_MARGIN` unset):
the layout follows the model (`stepwise.prompt.caching`), so it is played on each model.

Two conversations: the default one (the shipped persona, whose `USER.md` is an empty template), and the same
messages for an owner who filled in `USER.md` (`OWNER_NOTES`, about 1,650 characters, 420 tokens), which
brings the longest cacheable prefix past Haiku's 4,096-token minimum once the history is long enough. For
that one, "never cached" is the policy forced to "cannot pay" (the window always slides, no breakpoints on
the messages): what Haiku bills without caching. Each run is also billed as if its turns had come 10 minutes
apart (the same requests, the cache cold at every turn): what the write premium costs a chat of scattered
messages. Prices: list prices per million tokens (2026-11). Run: make bench (or .venv/bin/python
benchmarks/caching.py; --turns adds the per-turn table).
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext, redirect_stdout
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

from stepwise_local import updates  # noqa: E402
from stepwise_local.anthropic_server import (  # noqa: E402
    FakeAnthropic,
    PromptCache,
    Scripted,
    min_cacheable_tokens,
    prefix_units,
    text,
    tool_use,
)
from stepwise_local.emulation import Emulation, LocalConfig  # noqa: E402
from stepwise_local.telegram_server import FakeBotApi  # noqa: E402

USER = 6161
HAIKU, SONNET = "claude-haiku-4-5", "claude-sonnet-4-5"
# $ per million tokens (2026-11): input, output; cache writes bill 1.25x input, cache reads 0.1x input.
PRICES = {HAIKU: (1.0, 5.0), SONNET: (3.0, 15.0)}
NAMES = {HAIKU: "Haiku 4.5", SONNET: "Sonnet 4.5"}
WRITE, READ = 1.25, 0.1
SECONDS_BETWEEN_TURNS, PAUSE_AT, PAUSE_SECONDS = 40.0, 26, 8 * 60.0
SPARSE_SECONDS = 10 * 60.0  # the replay of scattered messages: every turn after the cache's five minutes
BEFORE_ENV = {"HISTORY_MARGIN": "10"}  # the behaviour at 343a9b4, on every model

# An owner's USER.md, filled in as the template in persona/USER.md suggests: notes for the assistant.
OWNER_NOTES = """\
- Name: Maren Holt. Call me Maren; I'm 34.
- I live in Hamburg (Europe/Berlin) until the end of May, then in Lisbon (Europe/Lisbon) from early June.
- Work: product designer at a small software company, fully remote; my contract stays German for now, and I
  work 9:30 to 17:30 with a team stand-up at 10:00 every weekday. No work messages on weekends.
- Family: my brother Jonas in Munich (birthday 14 March), my parents in Kiel. My partner Ines is Portuguese
  and moves with me; her family lives in Setúbal and we visit them most Sundays.
- Money: I budget carefully and keep rent under 1,400 euros a month. Round amounts to whole euros, and show
  euros, not dollars.
- Units and times: metric, 24-hour clock, dates as 3 June (no month-first dates).
- Languages: German and English fluently; Portuguese at A2. When I write in Portuguese, answer in Portuguese
  and correct my mistakes briefly at the end.
- Health: I'm allergic to penicillin, and I take no other medication. Mention it if a doctor's visit comes up.
- Habits: I run three mornings a week and go climbing on Thursday evenings; I'm vegetarian (I eat fish
  rarely). I'm a morning person: suggest hard tasks for before noon.
- Tasks: I prefer small concrete tasks with a date over big vague ones. Remind me the evening before
  anything with a deadline, not on the day.
- Things I care about on this move: a quiet bedroom (I sleep badly with street noise), good light for work,
  a short walk to a metro station, and space for a desk by a window.
- Ask me before spending money or contacting anyone on my behalf. Keep answers short unless I ask for detail.
"""


# ---------------------------------------------------------------------------------------------- the script
def reply(*sentences: str) -> list[Scripted]:
    return [text(" ".join(sentences))]


def tools_then(calls: Sequence[tuple[str, dict[str, Any]]], answer: str) -> list[Scripted]:
    return [tool_use(*calls), text(answer)]


SCRIPT: list[tuple[str, list[Scripted]]] = [
    (
        "Hi! I'm moving to Lisbon in June and I need help staying organised.",
        reply(
            "Congratulations on the move! I can keep a task list for you, remind you what's left and help",
            "you think things through. A good start is to list the big pieces: housing, paperwork, the",
            "move itself, money and work. Which of these worries you most right now?",
        ),
    ),
    (
        "Housing first. Add a task to shortlist three apartments in Alfama or Graça by May 10.",
        tools_then(
            [
                (
                    "add_task",
                    {"title": "Shortlist three apartments (Alfama/Graça)", "description": "By May 10"},
                )
            ],
            "Added task #1: shortlist three apartments in Alfama or Graça, due May 10. Alfama is charming "
            "but steep and touristy; Graça has more locals and a tram line. Want tips on what to check?",
        ),
    ),
    (
        "Yes, what should I check when I visit a flat there?",
        reply(
            "In old Lisbon buildings, check: damp and mould (winters are humid and many flats lack heating),",
            "the stairs (many buildings have no lift), noise from bars and trams at night, and whether the",
            "windows close well. Ask about the condominium fee, who pays for water and electricity, and",
            "whether the contract will be registered with the tax office — you need that for residency.",
        ),
    ),
    (
        "Good points. Add a task: ask the landlord for a registered contract.",
        tools_then(
            [("add_task", {"title": "Ask landlord for a registered contract"})],
            "Added task #2: ask the landlord for a registered contract. Bring it up early: some landlords "
            "prefer cash deals, and a registered contract is what the immigration office asks for.",
        ),
    ),
    (
        "What paperwork do I need as an EU citizen moving there?",
        reply(
            "As an EU citizen you don't need a visa. Within four months you register your residence at the",
            "town hall (Câmara Municipal) and get a registration certificate. You'll also want a NIF (tax",
            "number) — needed for the lease, a bank account and utilities — and later a social security",
            "number and a health centre registration. The NIF is the one to get first.",
        ),
    ),
    (
        "Please add getting the NIF, and registering residence at the town hall.",
        tools_then(
            [
                ("add_task", {"title": "Get a NIF (tax number)", "description": "Needed for lease and bank"}),
                (
                    "add_task",
                    {"title": "Register residence at the Câmara Municipal", "description": "Within 4 months"},
                ),
            ],
            "Added task #3: get a NIF, and task #4: register your residence at the Câmara Municipal (within "
            "four months of arriving). You can get a NIF before you arrive through a representative.",
        ),
    ),
    (
        "How long does the NIF usually take?",
        reply(
            "In person at a Finanças office it's often the same day, though queues can be long — book an",
            "appointment online if you can. Through an online service with a fiscal representative it takes",
            "a few days to two weeks and costs around 50 to 100 euros.",
        ),
    ),
    (
        "What's on my list so far?",
        tools_then(
            [("list_tasks", {"status": "all"})],
            "You have 4 open tasks: #1 shortlist three apartments (by May 10), #2 ask the landlord for a "
            "registered contract, #3 get a NIF, #4 register residence at the town hall.",
        ),
    ),
    (
        "Let's talk money. Is a Portuguese bank account necessary?",
        reply(
            "Not strictly, but it makes life easier: many landlords and utilities expect a Portuguese IBAN",
            "for direct debits, and MB Way — the payment app everyone uses to split bills — needs a local",
            "account. You'll need your NIF and proof of address to open one. Some banks open",
            "accounts online.",
        ),
    ),
    (
        "Ok. Remind me to compare Millennium, CGD and an online bank.",
        tools_then(
            [("add_task", {"title": "Compare banks: Millennium, CGD, online bank"})],
            "Added task #5: compare Millennium, CGD and an online bank. Look at monthly fees (often waived "
            "with a salary deposit), the app, and whether the branch staff speak English.",
        ),
    ),
    (
        "What does a typical month cost in Lisbon for one person?",
        reply(
            "Roughly: a one-bedroom in a central area 1,100-1,500 euros, utilities and internet 120-180,",
            "a monthly transport pass 40, groceries 250-350, and eating out is still cheaper than most of",
            "Western Europe. All in, many people budget 2,000-2,500 euros a month for a comfortable life.",
        ),
    ),
    (
        "That's more than I thought. How do people find cheaper flats?",
        reply(
            "Look a little outside the centre — Arroios, Penha de França, Alvalade or across the river in",
            "Almada — where rents are often 20-30% lower and the metro or ferry gets you in quickly. Check",
            "Idealista daily, ask in local Facebook groups, and be ready to decide fast:",
            "good flats go in days.",
        ),
    ),
    (
        "Add Arroios and Alvalade to the apartment task description.",
        tools_then(
            [("get_task", {"task_id": 1})],
            "Task #1 is “Shortlist three apartments (Alfama/Graça)”, due May 10. Changing its description "
            "needs your approval, so shall I ask for it, or keep the areas as a note for now?",
        ),
    ),
    (
        "Keep it as a note. What about the move itself, shipping or selling everything?",
        reply(
            "It depends on what you own. Shipping a few boxes by courier is cheap; a full removal van from",
            "central Europe costs 2,000-5,000 euros. Many people sell furniture and bring personal things,",
            "books and kitchen basics, since furnished flats are common in Lisbon.",
        ),
    ),
    (
        "I'll sell the furniture. Add a task to list the sofa and desk online.",
        tools_then(
            [("add_task", {"title": "List the sofa and desk for sale online"})],
            "Added task #6: list the sofa and desk for sale online. Post them six to eight weeks before "
            "the move so you aren't rushed into low offers.",
        ),
    ),
    (
        "Thanks. Should I learn some Portuguese before I go?",
        reply(
            "Yes, even a little helps a lot. People in Lisbon often switch to English, but everyday things —",
            "the town hall, the landlord, neighbours — go much better with basic Portuguese. European",
            "Portuguese sounds quite different from Brazilian, so pick a course that teaches the European",
            "variety. Twenty minutes a day until June gets you through greetings, numbers and shopping.",
        ),
    ),
    (
        "Any course you'd recommend?",
        reply(
            "Practice Portuguese is made for European Portuguese and has short lessons and a podcast. For",
            "structure, a weekly class at a language school in Lisbon after you arrive works well, and a",
            "language exchange (tandem) helps you make friends at the same time.",
        ),
    ),
    (
        "I signed up. Mark... actually, I got my NIF today! Mark it done.",
        tools_then(
            [("complete_task", {"task_id": 3})],
            "Completed task #3: get a NIF. Congratulations — that unlocks the lease and the bank account. "
            "Next up could be the bank comparison.",
        ),
    ),
    (
        "What should I know about healthcare there?",
        reply(
            "Once you're registered as a resident you can register at your local health centre and get a",
            "user number for the national health service (SNS). Until then, your European Health Insurance",
            "Card covers necessary care. Many expats also take private insurance — 30 to 60 euros a month —",
            "for shorter waiting times and English-speaking doctors.",
        ),
    ),
    (
        "Do I need private insurance for the residence registration?",
        reply(
            "No — as an EU citizen you show that you work, study or have enough resources, and that you",
            "have health cover. The EHIC or an employment contract usually suffices; private insurance is",
            "optional. Bring your passport or ID card, proof of address and the work contract.",
        ),
    ),
    (
        "Add a task to bring passport, proof of address and contract to the town hall.",
        tools_then(
            [("add_task", {"title": "Town hall: passport, proof of address, work contract"})],
            "Added task #7: bring your passport, proof of address and work contract to the town hall "
            "appointment.",
        ),
    ),
    (
        "How do I get around the city day to day?",
        reply(
            "The Navegante card covers metro, buses, trams, ferries and suburban trains for",
            "40 euros a month.",
            "The metro is quick for longer distances; the hills make walking slow but beautiful. Tram 28 is",
            "scenic but crowded with tourists, so locals use buses. Bikes and scooters work along the river.",
        ),
    ),
    (
        "Cool. What neighbourhoods are good for someone working remotely?",
        reply(
            "Arroios and Anjos are lively, international and full of cafés with wifi; Alvalade is calmer",
            "with parks and good connections; Campo de Ourique is residential with a great market. There",
            "are coworking spaces in all of them, from 150 euros a month for a flexible desk.",
        ),
    ),
    (
        "Show me only my pending tasks please.",
        tools_then(
            [("list_tasks", {"status": "pending"})],
            "Pending: #1 shortlist three apartments (by May 10), #2 ask for a registered contract, #4 "
            "register residence, #5 compare banks, #6 list the sofa and desk, #7 documents for the town "
            "hall.",
        ),
    ),
    (
        "That's a lot. Which should I do first?",
        reply(
            "Order matters: the apartment (#1) comes first because everything else needs an address. Then",
            "the contract (#2), then the bank (#5) with your NIF and address, and the town",
            "hall (#4, #7) once",
            "you live there. The sofa and desk (#6) can run in parallel — start that this weekend.",
        ),
    ),
    (
        "Back after a break. Is June a good month to arrive?",
        reply(
            "June is lovely — long days, warm but not yet the August heat — but it's also the season of the",
            "Santos Populares festivals: the 12th and 13th are very loud in Alfama and Graça, with street",
            "parties all night. Great fun, but worth knowing if you view flats there in May.",
        ),
    ),
    (
        "Ha, good to know! Add a task to book a hotel for the first week of June.",
        tools_then(
            [("add_task", {"title": "Book a hotel for the first week of June"})],
            "Added task #8: book a hotel for the first week of June. Book soon: June fills up because of "
            "the festivals.",
        ),
    ),
    (
        "What's the weather like in winter? I hear houses are cold.",
        reply(
            "Winters are mild outside — 8 to 15 °C — but many old flats have no insulation or central",
            "heating, so indoors can feel colder than in northern Europe. Look for flats with double",
            "glazing or a heat pump, budget for an oil radiator and a dehumidifier, and check the energy",
            "certificate, which every listing must show.",
        ),
    ),
    (
        "I'll ask about the energy certificate. Is it normal to pay a big deposit?",
        reply(
            "Typically two months' deposit plus the first month's rent, sometimes more for",
            "foreigners without",
            "a Portuguese guarantor. Landlords may ask for a guarantor or proof of income; an employment",
            "contract or a few payslips usually work. Never pay before you have seen the",
            "flat and the contract.",
        ),
    ),
    (
        "Okay. I listed the sofa and desk today. Mark that done.",
        tools_then(
            [("complete_task", {"task_id": 6})],
            "Completed task #6: list the sofa and desk for sale online. Good luck with the buyers!",
        ),
    ),
    (
        "How do I find friends when I arrive?",
        reply(
            "Lisbon is easy for that: language exchanges, running groups along the river, climbing gyms,",
            "coworking events and Meetup groups for newcomers. Saying yes to the first invitations matters",
            "most. Portuguese people can be reserved at first but very warm once you know them.",
        ),
    ),
    (
        "What are typical things to eat that I should try?",
        reply(
            "Pastéis de nata of course, bifana (pork sandwich), grilled sardines in June, bacalhau in many",
            "forms, caldo verde soup, and the daily prato do dia at a tasca — a full lunch for 10-12 euros.",
            "For something sweet, try a bola de Berlim at the beach.",
        ),
    ),
    (
        "Yum. What's on my list now?",
        tools_then(
            [("list_tasks", {"status": "all"})],
            "Open: #1 apartments, #2 registered contract, #4 residence registration, #5 compare banks, "
            "#7 town hall documents, #8 hotel for June. Done: #3 NIF, #6 sofa and desk listed.",
        ),
    ),
    (
        "Should I get a Portuguese phone number?",
        reply(
            "Yes — many services send SMS codes and delivery drivers call local numbers. The three big",
            "operators are MEO, NOS and Vodafone; prepaid SIMs cost about 10-15 euros a month, and you can",
            "buy one at the airport with your passport.",
        ),
    ),
    (
        "And internet at home, how long does installation take?",
        reply(
            "Fibre is widespread in Lisbon; installation usually takes one to two weeks after you sign, and",
            "contracts are often 24 months with a fee to leave early. Ask the landlord whether the flat",
            "already has a line — taking over an existing one can be faster.",
        ),
    ),
    (
        "Thanks for all this. Can you summarise my plan in three lines?",
        reply(
            "1. May: find and secure a flat with a registered contract (tasks #1, #2); book",
            "the June hotel (#8).",
            "2. Before the move: compare banks and open an account with your NIF (#5).",
            "3. June: move in, then register your residence at the town hall with your documents (#4, #7).",
        ),
    ),
    (
        "Perfect. One more: what if I don't like living there?",
        reply(
            "Then you'll have learned something and can leave — a 12-month lease with a 90-day notice clause",
            "keeps that door open, so ask for one. Give it at least six months though: the first months in",
            "any new city are the hardest, and Lisbon tends to grow on people.",
        ),
    ),
    (
        "Ok. Add a task to ask for a 90-day notice clause in the lease.",
        tools_then(
            [("add_task", {"title": "Ask for a 90-day notice clause in the lease"})],
            "Added task #9: ask for a 90-day notice clause in the lease.",
        ),
    ),
    (
        "Great. I'll check back tomorrow.",
        reply("Sounds good — good luck with the apartment hunt! I'll have your list ready when you're back."),
    ),
    (
        "Goodnight!",
        reply("Goodnight! Sleep well."),
    ),
]


# ---------------------------------------------------------------------------------------------- running
class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Played:
    """Requests sent per turn, with the virtual time of the turn and the output tokens of each answer."""

    model: str
    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    output: list[list[int]] = field(default_factory=list)
    reported: list[list[dict[str, int]]] = field(default_factory=list)


@contextmanager
def persona_dir(owner_notes: str) -> Iterator[str]:
    """A persona folder: the shipped files, with `owner_notes` as USER.md when given."""
    with tempfile.TemporaryDirectory(prefix="stepwise-persona-") as folder:
        for name in ("SOUL.md", "USER.md", "AGENTS.md"):
            shutil.copy(ROOT / "persona" / name, Path(folder) / name)
        if owner_notes:
            (Path(folder) / "USER.md").write_text(owner_notes, encoding="utf-8")
        yield folder


def play(model: str, env: dict[str, str], owner_notes: str = "", never_cache: bool = False) -> Played:
    """Play the script on `model` with `env` over the deployed defaults; `never_cache` forces the caching
    policy to "cannot pay" (the reference without caching)."""
    clock = VirtualClock()
    played = Played(model)
    with (
        FakeBotApi("123456:bench") as telegram,
        FakeAnthropic(clock=clock) as anthropic,
        persona_dir(owner_notes) as persona,
    ):
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token="123456:bench",  # noqa: S106 (a fake token for the local Bot API)
            anthropic_api_key=anthropic.api_key,
            anthropic_base_url=anthropic.base_url,
            parameters={"AllowedUserIds": str(USER), "LogLevel": "ERROR", "AnthropicModel": model},
            env={**env, "PERSONA_DIR": persona},
        )
        with Emulation(config) as emulation, never_cached() if never_cache else nullcontext():
            for number, (message, answers) in enumerate(SCRIPT, start=1):
                clock.now += PAUSE_SECONDS if number == PAUSE_AT else SECONDS_BETWEEN_TURNS
                seen = len(anthropic.requests)
                anthropic.script(*answers)
                update = updates.text_message(USER, message)
                emulation.post_update(update)
                emulation.wait_for_update(USER, update["update_id"], timeout=60)
                emulation.wait_idle(USER, timeout=60)
                requests = anthropic.requests[seen:]
                if len(requests) != len(answers):
                    raise RuntimeError(f"turn {number}: {len(requests)} model calls, expected {len(answers)}")
                if any(r["model"] != model for r in requests):
                    raise RuntimeError(f"turn {number}: a request not for {model}")
                played.turns.append(requests)
                played.times.append(clock.now)
                played.reported.append(anthropic.usages[seen:])
                played.output.append([u["output_tokens"] for u in anthropic.usages[seen:]])
        replies = telegram.messages(USER)
    if len(replies) != len(SCRIPT):
        raise RuntimeError(f"{len(replies)} replies for {len(SCRIPT)} messages")
    return played


@contextmanager
def never_cached() -> Iterator[None]:
    """The caching policy forced to "cannot pay": the window always slides, no breakpoints on messages."""
    with (
        mock.patch("stepwise.states.load_context.window_floor", return_value=None),
        mock.patch("stepwise.states.load_context.caching_can_pay", return_value=False),
    ):
        yield


@dataclass
class Billed:
    """Per turn: uncached input, written, read and output tokens."""

    model: str
    uncached: list[int] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    read: list[int] = field(default_factory=list)
    output: list[int] = field(default_factory=list)

    def total(self, turn: int) -> int:
        return self.uncached[turn] + self.written[turn] + self.read[turn]

    def input_tokens(self) -> int:
        return sum(self.total(t) for t in range(len(self.uncached)))

    def dollars(self) -> float:
        """The model's dollars for the whole conversation."""
        price_in, price_out = PRICES[self.model]
        billed_in = sum(self.uncached) + WRITE * sum(self.written) + READ * sum(self.read)
        return (billed_in * price_in + sum(self.output) * price_out) / 1e6


def bill(played: Played, model: str) -> Billed:
    """Replay the played requests through the fake's cache rules for `model`, at the turns' virtual times."""
    cache, billed = PromptCache(), Billed(model)
    for requests, now, output in zip(played.turns, played.times, played.output, strict=True):
        usages = [cache.account({**request, "model": model}, now) for request in requests]
        billed.uncached.append(sum(u["input_tokens"] for u in usages))
        billed.written.append(sum(u["cache_creation_input_tokens"] for u in usages))
        billed.read.append(sum(u["cache_read_input_tokens"] for u in usages))
        billed.output.append(sum(output))
    return billed


def checked_bill(played: Played) -> Billed:
    """The run's bill on its own model, checked against the usage the fake server reported during the run."""
    billed = bill(played, played.model)
    for name, key in (("read", "cache_read_input_tokens"), ("written", "cache_creation_input_tokens")):
        reported = [sum(u[key] for u in turn) for turn in played.reported]
        if getattr(billed, name) != reported:
            raise RuntimeError(f"the replay does not reproduce the server's usage ({name})")
    return billed


def cacheable_prefix(played: Played) -> list[int]:
    """Per turn, the longest prompt prefix ending at a breakpoint among its calls: what could be cached."""
    sizes = []
    for requests in played.turns:
        best = 0
        for request in requests:
            total = 0
            for unit in prefix_units(request):
                total += unit.tokens
                if unit.ttl is not None:
                    best = max(best, total)
        sizes.append(best)
    return sizes


def head_size(played: Played) -> int:
    """Tokens of the first call's tools and system prompt (the prompt's stable head)."""
    request = played.turns[0][0]
    return sum(unit.tokens for unit in prefix_units({**request, "messages": []}))


def marked_turns(played: Played) -> int:
    """Turns whose first call carries breakpoints on its messages (laid out for caching)."""
    return sum(
        any("cache_control" in block for m in requests[0]["messages"] for block in m["content"])
        for requests in played.turns
    )


def spread_out(played: Played) -> Played:
    """The same requests, as if each turn came `SPARSE_SECONDS` after the previous one: the cache is cold at
    every turn's first call (what a chat of scattered messages bills for the same prompts)."""
    times = [SPARSE_SECONDS * (turn + 1) for turn in range(len(played.times))]
    return Played(played.model, played.turns, times, played.output, played.reported)


@dataclass
class Row:
    """One run of one conversation, billed on `model` (its own, or Sonnet for the before run's replay)."""

    conversation: str
    model: str
    run: str
    played: Played
    baseline: Row | None = None

    @cached_property
    def billed(self) -> Billed:
        if self.model == self.played.model:
            return checked_bill(self.played)
        return bill(self.played, self.model)

    @cached_property
    def sparse(self) -> Billed:
        return bill(spread_out(self.played), self.model)


def versus(value: float, baseline: float | None) -> str:
    return f"{value / baseline - 1:+.1%}" if baseline else ""


def print_rows(rows: Sequence[Row]) -> None:
    turns = len(SCRIPT)
    print(
        f"{'':<46}{'input tokens':>13}{'':>37}{'$ / conversation':>18}"
        f"{f'{SPARSE_SECONDS / 60:.0f} min apart':>20}"
    )
    print(
        f"{'conversation':<18}{'model':<12}{'run':<16}{'all':>13}{'read':>6}{'written':>8}{'uncached':>9}"
        f"{'turns marked':>14}{'$':>10}{'vs before':>10}{'$':>10}{'vs before':>10}"
    )
    for row in rows:
        b, sparse = row.billed, row.sparse
        total = b.input_tokens()
        base = row.baseline
        base_dollars = base.billed.dollars() if base else None
        base_sparse = base.sparse.dollars() if base else None
        print(
            f"{row.conversation:<18}{NAMES[row.model]:<12}{row.run:<16}{total:>13,}"
            f"{sum(b.read) / total:>6.0%}{sum(b.written) / total:>8.0%}{sum(b.uncached) / total:>9.0%}"
            f"{marked_turns(row.played):>8} of {turns}{b.dollars():>10.4f}"
            f"{versus(b.dollars(), base_dollars):>10}"
            f"{sparse.dollars():>10.4f}{versus(sparse.dollars(), base_sparse):>10}"
        )
    print(
        "\n(read, written, uncached: shares of the input tokens; turns marked: turns whose prompt carries "
        "breakpoints on its messages;\n"
        f"{SPARSE_SECONDS / 60:.0f} min apart: the same requests billed as if every turn came after the "
        "cache expired. Haiku caches from "
        f"{min_cacheable_tokens(HAIKU):,} tokens, Sonnet from {min_cacheable_tokens(SONNET):,})"
    )


def print_turns(rows: Sequence[Row]) -> None:
    print("\ninput tokens per turn (all model calls of the turn), and the share read from cache")
    print(f"{'turn':>4}{'calls':>6}" + "".join(f"{r.conversation[:7] + ' ' + r.run[:6]:>16}" for r in rows))
    print(f"{'':>10}" + "".join(f"{NAMES[r.model]:>16}" for r in rows))
    for t in range(len(SCRIPT)):
        cells = "".join(f"{r.billed.total(t):>9,} {r.billed.read[t] / r.billed.total(t):>5.0%}" for r in rows)
        print(f"{t + 1:>4}{len(rows[0].played.turns[t]):>6}{cells}")


def quietly(model: str, env: dict[str, str], owner_notes: str = "", never_cache: bool = False) -> Played:
    """`play`, without the metrics lines Powertools prints as it flushes them."""
    with redirect_stdout(io.StringIO()):
        return play(model, env, owner_notes, never_cache)


def main() -> None:
    before = quietly(HAIKU, BEFORE_ENV)
    haiku_before = Row("default", HAIKU, "before", before)
    sonnet_before = Row("default", SONNET, "before", before)
    owner_before = Row("owner's USER.md", HAIKU, "before", quietly(HAIKU, BEFORE_ENV, OWNER_NOTES))
    rows = [
        haiku_before,
        Row("default", HAIKU, "after", quietly(HAIKU, {}), haiku_before),
        sonnet_before,
        Row("default", SONNET, "after", quietly(SONNET, {}), sonnet_before),
        owner_before,
        Row("owner's USER.md", HAIKU, "after", quietly(HAIKU, {}, OWNER_NOTES), owner_before),
        Row("owner's USER.md", HAIKU, "never cached", quietly(HAIKU, {}, OWNER_NOTES, True), owner_before),
    ]
    print(
        f"prompt caching: {len(SCRIPT)} turns ({sum(len(a) > 1 for _, a in SCRIPT)} with tools), "
        f"{SECONDS_BETWEEN_TURNS:.0f} s apart, a pause of {PAUSE_SECONDS / 60:.0f} min before turn "
        f"{PAUSE_AT}; the model's dollars per conversation at list prices"
    )
    print(
        "before: the code at 343a9b4 (HISTORY_MARGIN=10 on every model); after: the per-model policy "
        "(HISTORY_MARGIN unset)\n"
    )
    print_rows(rows)
    for conversation, row in (("default", haiku_before), ("owner's USER.md", owner_before)):
        prefix = cacheable_prefix(row.played)
        print(
            f"{conversation}: tools + system {head_size(row.played):,} tokens; longest cacheable prefix "
            f"before {max(prefix):,} (median {sorted(prefix)[len(prefix) // 2]:,}), at or past Haiku's "
            f"minimum in {sum(p >= min_cacheable_tokens(HAIKU) for p in prefix)} of {len(SCRIPT)} turns"
        )
    if "--turns" in sys.argv[1:]:
        print_turns(rows)


if __name__ == "__main__":
    main()
