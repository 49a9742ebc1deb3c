"""Prompt caching: what a 40-turn conversation with tool turns bills, before and after, for Haiku and Sonnet.

Plays one scripted conversation (40 user messages; 12 of the turns call tools, one a pause of eight minutes)
through the real code path: the webhook, the real state machine on the local emulation, RunTools on the
emulated tables, and the fake Messages API, which applies the real API's caching rules and counts tokens as
characters / 4 of each block's JSON (`stepwise_local.anthropic_server.PromptCache`). The model's answers are
scripted, so both runs send the same conversation; a virtual clock puts 40 seconds between turns.

BEFORE is the previous behaviour, reproduced in this process: the window slides by one message every turn
(`HISTORY_MARGIN=0`) and CallModel builds the prompt as it did before (`legacy_prompt`: the time and the
per-turn sections in a second system block after the cached one, no breakpoints in the messages).
AFTER is the code as it is. The requests do not depend on the model id, so the run uses Haiku 4.5 (the
default) and the Sonnet 4.5 figures replay the same requests, at the same virtual times, through the same
cache rules with Sonnet's minimum. Prices: list prices per million tokens (2026-11). Run: make bench
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT)]

from stepwise.history.models import StoredMessage  # noqa: E402
from stepwise.prompt.layout import Prompt  # noqa: E402
from stepwise.prompt.messages import build_messages  # noqa: E402
from stepwise.prompt.system import EPHEMERAL, ROLE, ToolSummary, tools_section  # noqa: E402
from stepwise.turn_records.models import ModelStep  # noqa: E402
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


# ---------------------------------------------------------------------------------------------- before
def legacy_prompt(
    tools: Sequence[ToolSummary],
    now: datetime,
    history: Sequence[StoredMessage],
    rounds: Sequence[ModelStep],
    per_turn: Sequence[str] = (),
    files: object = None,
    persona: str = "",
) -> Prompt:
    """The prompt as CallModel built it before: the stable system block marked for caching (with today's
    persona, so both runs carry the same text), then a system block with the time and the per-turn sections;
    the messages without breakpoints and without context. (The scripted chat sends no files.)"""
    turn_lines = [f"## Now\nThe current date and time is {now.isoformat(timespec='seconds')}."]
    turn_lines.extend(section for section in per_turn if section.strip())
    system = [
        {
            "type": "text",
            "text": "\n\n".join(part for part in (ROLE, persona, tools_section(tools)) if part),
            "cache_control": dict(EPHEMERAL),
        },
        {"type": "text", "text": "\n\n".join(turn_lines)},
    ]
    messages = [
        {
            "role": m["role"],
            "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]],
        }
        for m in build_messages(history, rounds)
    ]
    return Prompt(system=system, messages=messages)


# ---------------------------------------------------------------------------------------------- running
class VirtualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Played:
    """Requests sent per turn, with the virtual time of the turn and the output tokens of each answer."""

    turns: list[list[dict[str, Any]]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    output: list[list[int]] = field(default_factory=list)
    reported: list[list[dict[str, int]]] = field(default_factory=list)


def play(before: bool) -> Played:
    clock = VirtualClock()
    played = Played()
    with FakeBotApi("123456:bench") as telegram, FakeAnthropic(clock=clock) as anthropic:
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token="123456:bench",  # noqa: S106 (a fake token for the local Bot API)
            anthropic_api_key=anthropic.api_key,
            anthropic_base_url=anthropic.base_url,
            parameters={"AllowedUserIds": str(USER), "LogLevel": "ERROR"},
            env={"HISTORY_MARGIN": "0"} if before else {},
        )
        patch = mock.patch("stepwise.states.call_model.build_prompt", legacy_prompt) if before else None
        with Emulation(config) as emulation:
            if patch:
                patch.start()
            try:
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
                        raise RuntimeError(
                            f"turn {number}: {len(requests)} model calls, expected {len(answers)}"
                        )
                    played.turns.append(requests)
                    played.times.append(clock.now)
                    played.reported.append(anthropic.usages[seen:])
                    played.output.append([u["output_tokens"] for u in anthropic.usages[seen:]])
            finally:
                if patch:
                    patch.stop()
        replies = telegram.messages(USER)
    if len(replies) != len(SCRIPT):
        raise RuntimeError(f"{len(replies)} replies for {len(SCRIPT)} messages")
    return played


@dataclass
class Billed:
    """Per turn: uncached input, written, read and output tokens, and the longest cacheable prefix."""

    uncached: list[int] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    read: list[int] = field(default_factory=list)
    output: list[int] = field(default_factory=list)

    def total(self, turn: int) -> int:
        return self.uncached[turn] + self.written[turn] + self.read[turn]

    def dollars(self, model: str, turns: range) -> float:
        price_in, price_out = PRICES[model]
        tokens = (
            sum(self.uncached[t] + WRITE * self.written[t] + READ * self.read[t] for t in turns) * price_in
            + sum(self.output[t] for t in turns) * price_out
        )
        return tokens / 1e6

    def read_share(self, turns: range) -> float:
        total = sum(self.total(t) for t in turns)
        return sum(self.read[t] for t in turns) / total if total else 0.0


def bill(played: Played, model: str) -> Billed:
    """Replay the played requests through the fake's cache rules for `model`, at the turns' virtual times."""
    cache, billed = PromptCache(), Billed()
    for requests, now, output in zip(played.turns, played.times, played.output, strict=True):
        usages = [cache.account({**request, "model": model}, now) for request in requests]
        billed.uncached.append(sum(u["input_tokens"] for u in usages))
        billed.written.append(sum(u["cache_creation_input_tokens"] for u in usages))
        billed.read.append(sum(u["cache_read_input_tokens"] for u in usages))
        billed.output.append(sum(output))
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


def main() -> None:
    runs = {"before": play(before=True), "after": play(before=False)}
    for name, played in runs.items():  # the run's own usage, as the fake server reported it, is the replay's
        replay = bill(played, HAIKU)
        reported = [sum(u["cache_read_input_tokens"] for u in turn) for turn in played.reported]
        if replay.read != reported:
            raise RuntimeError(f"{name}: the replay does not reproduce the server's usage")
    billed = {(mode, model): bill(runs[mode], model) for mode in runs for model in (HAIKU, SONNET)}
    prefixes = {mode: cacheable_prefix(played) for mode, played in runs.items()}
    prefix = prefixes["after"]
    turns = range(len(SCRIPT))
    print(
        f"prompt caching: {len(SCRIPT)} turns ({sum(len(a) > 1 for _, a in SCRIPT)} with tools), "
        f"{SECONDS_BETWEEN_TURNS:.0f} s apart, a pause of {PAUSE_SECONDS / 60:.0f} min before turn {PAUSE_AT}"
    )
    print("input tokens per turn (all model calls of the turn): total, and the share read from cache")
    header = "".join(f"{NAMES[m] + ' ' + mode:>22}" for m in (HAIKU, SONNET) for mode in runs)
    print(f"{'turn':>4}{'calls':>6}{'cacheable':>10}{header}")
    for t in turns:
        cells = "".join(
            f"{billed[mode, m].total(t):>14,} {billed[mode, m].read[t] / billed[mode, m].total(t):>6.0%}"
            for m in (HAIKU, SONNET)
            for mode in runs
        )
        print(f"{t + 1:>4}{len(runs['after'].turns[t]):>6}{prefix[t]:>10,}{cells}")
    print(
        "\n(cacheable: the longest prefix up to a breakpoint in the turn's calls, after; Haiku caches "
        "only from "
        f"{min_cacheable_tokens(HAIKU):,} tokens, Sonnet from {min_cacheable_tokens(SONNET):,})"
    )
    print(
        f"\n{'':<22}{'input tokens':>13}{'read':>7}{'written':>9}{'uncached':>10}{'$ / 1,000 turns':>17}"
        f"{'read once cacheable':>21}"
    )
    for model in (HAIKU, SONNET):
        for mode in runs:
            b = billed[mode, model]
            total = sum(b.total(t) for t in turns)
            cacheable = [t for t in turns if prefixes[mode][t] >= min_cacheable_tokens(model)]
            first = cacheable[0] if cacheable else None
            share = (
                f"{b.read_share(range(first + 1, len(SCRIPT))):.0%} (from turn {first + 2})"
                if first is not None
                else "never cacheable"
            )
            print(
                f"{NAMES[model] + ' ' + mode:<22}{total:>13,}{sum(b.read) / total:>7.0%}"
                f"{sum(b.written) / total:>9.0%}{sum(b.uncached) / total:>10.0%}"
                f"{b.dollars(model, turns) / len(SCRIPT) * 1000:>17.2f}{share:>21}"
            )
        before, after = billed["before", model], billed["after", model]
        saving = 1 - after.dollars(model, turns) / before.dollars(model, turns)
        print(
            f"{'':<22}after / before: {after.dollars(model, turns) / before.dollars(model, turns):.2f} "
            f"of the model's dollars ({saving:.0%} saved)"
        )
    print(
        f"\nlargest cacheable prefix (after): {max(prefix):,} tokens; "
        f"median {sorted(prefix)[len(prefix) // 2]:,}; "
        f"turns at or past Haiku's {min_cacheable_tokens(HAIKU):,}: "
        f"{sum(p >= min_cacheable_tokens(HAIKU) for p in prefix)} of {len(SCRIPT)}"
    )


if __name__ == "__main__":
    main()
