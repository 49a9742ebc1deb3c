"""Fuzzing the webhook: over 10,000 seeded request bodies and secret headers through `handle_update`.

Whatever arrives, the webhook must answer 200, 401 or 403 without raising (a body that is no valid update gets
200 with the action "invalid", so that Telegram does not redeliver it), and only what an independent
oracle (written here from Telegram's documentation, not from the code under test) accepts may start a turn
(a valid, allowlisted text message) or settle an approval (a valid press by the request's user with the
exact callback data of its button).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.approvals.lifecycle import PressServices
from stepwise.approvals.models import ApprovalCall, ApprovalRequest
from stepwise.inbox.sequencer import Sequencer
from stepwise.telegram.conversation import Conversation
from stepwise.webhook import WebhookOutcome, WebhookServices, handle_update
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.telegram import InMemoryTelegram

SECRET = "fuzz-Secret_token-0123456789"
OWNER, OTHER, STRANGER = 42, 43, 99  # OWNER and OTHER are allowlisted; each has one pending approval
ALLOWED = frozenset({OWNER, OTHER})
APPROVALS = {"mineMINE_0-1": OWNER, "theirsTHEIRS2": OTHER}
MY_APPROVAL, THEIR_APPROVAL = APPROVALS

# Telegram's documented ranges, as the oracle understands them (independently of the models under test).
MAX_JS_SAFE = 2**53 - 1
MAX_INT32 = 2**31 - 1
MAX_TEXT = 8192  # Telegram sends at most 4096; the webhook may be lenient up to twice that, no further
MAX_CALLBACK_BYTES = 64

SEEDS = 40
BODIES_PER_SEED = 250  # 40 x 250 random bodies, plus the exhaustive field-by-field mutations below
STATUSES = {200, 401, 403}


# -- the world: in-memory fakes behind WebhookServices (its construction lives only here) ------------------


class RecordingResumer:
    """A TurnResumer that remembers what it resumed."""

    def __init__(self) -> None:
        self.resumed: list[tuple[str, dict[str, Any]]] = []

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        self.resumed.append((task_token, output))
        return True


@dataclass
class World:
    services: WebhookServices
    starter: RecordingStarter
    resumer: RecordingResumer
    approvals: InMemoryApprovalStore
    inbox: InMemoryChatInbox
    telegram: InMemoryTelegram = field(default_factory=InMemoryTelegram)


def build_world() -> World:
    """Fresh fakes with two pending approvals (OWNER's and OTHER's), wired into WebhookServices."""
    starter, resumer, approvals, telegram = (
        RecordingStarter(),
        RecordingResumer(),
        InMemoryApprovalStore(),
        InMemoryTelegram(),
    )
    for approval_id, user in APPROVALS.items():
        approvals.create(
            ApprovalRequest(
                approval_id=approval_id,
                turn_id=f"turn-{approval_id}",
                chat_id=user,
                user_id=user,
                step=0,
                calls=[ApprovalCall(tool_use_id="toolu_1", description="Delete task #1 “x”.")],
                task_token=f"token-{approval_id}",
                created_at="2026-11-22T10:00:00.000Z",
            )
        )
    inbox = InMemoryChatInbox()
    sequencer = Sequencer(inbox=inbox, starter=starter, approval_timeout_seconds=120)
    services = WebhookServices(
        secret=SECRET,
        allowed_users=ALLOWED,
        sequencer=lambda: sequencer,
        presses=lambda: PressServices(approvals=approvals, telegram=lambda: telegram, resumer=resumer),
    )
    return World(services, starter, resumer, approvals, inbox, telegram)


# -- the oracle --------------------------------------------------------------------------------------------


def _int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _update(body: str) -> dict[str, Any] | None:
    """The body as a JSON object with a valid update_id, or None."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not _int_in(data.get("update_id"), 0, MAX_JS_SAFE):
        return None
    return data


def _sender(holder: dict[str, Any]) -> int | None:
    sender = holder.get("from")
    if not isinstance(sender, dict) or not _int_in(sender.get("id"), -MAX_JS_SAFE, MAX_JS_SAFE):
        return None
    if sender.get("is_bot", False) is not False:
        return None
    return int(sender["id"])


def may_start(secret: str | None, body: str) -> tuple[str, dict[str, Any]] | None:
    """The turn name and message a request may start: only a valid text message by an allowlisted user (the
    world is fresh, so it is the chat's first turn)."""
    data = _update(body) if secret == SECRET else None
    if data is None or data.get("callback_query") is not None:
        return None
    message = data.get("message")
    if not isinstance(message, dict):
        return None
    chat, text = message.get("chat"), message.get("text")
    valid = (
        _int_in(message.get("message_id"), 1, MAX_INT32)
        and _int_in(message.get("date"), 0, MAX_JS_SAFE)
        and isinstance(chat, dict)
        and _int_in(chat.get("id"), -MAX_JS_SAFE, MAX_JS_SAFE)
        and isinstance(chat.get("type"), str)
        and isinstance(text, str)
        and len(text) <= MAX_TEXT
        and _utf8(text)
    )
    user = _sender(message)
    if not valid or user not in ALLOWED:
        return None
    turn = {"chat_id": chat["id"], "user_id": user, "update_id": data["update_id"], "text": text}
    return f"chat{turn['chat_id']}-turn1-update{turn['update_id']}", turn


def may_settle(secret: str | None, body: str) -> tuple[str, str] | None:
    """The approval and decision a request may settle: only its own user's press with the exact data."""
    data = _update(body) if secret == SECRET else None
    query = data.get("callback_query") if data is not None else None
    if not isinstance(query, dict) or not isinstance(query.get("id"), str):
        return None
    user, payload = _sender(query), query.get("data")
    if user not in ALLOWED or not isinstance(payload, str):
        return None
    for approval_id, owner in APPROVALS.items():
        for letter, decision in (("a", "approved"), ("d", "denied")):
            if payload == f"ap:{approval_id}:{letter}" and user == owner:
                return approval_id, decision
    return None


# -- the bodies --------------------------------------------------------------------------------------------

ODD_TEXTS = [
    "",
    " ",
    "\u0000",
    "nul\u0000inside",
    "\u200b\u200c\u200d\u2060",  # zero-width
    "\u202eevil\u202c",  # right-to-left override
    "مرحبا بالعالم",  # RTL script
    "\ufeffbom",
    "😀" * 50,
    "é" * MAX_TEXT,
    "x" * (MAX_TEXT + 1),
    "\ud83d\ude00",  # a valid pair, written as a pair
    "ap:mineMINE_0-1:a",
    "/start",
    "<b>&amp;</b>",
]
BAD_VALUES: list[Any] = [
    None,
    True,
    False,
    "",
    "42",
    "-1",
    "1e3",
    "true",
    "ap:mineMINE_0-1:a",
    0,
    -1,
    1,
    OWNER,
    OTHER,
    MAX_INT32,
    MAX_INT32 + 1,
    MAX_JS_SAFE,
    MAX_JS_SAFE + 1,
    -MAX_JS_SAFE - 1,
    2**63,
    2**64,
    10**40,
    -(10**40),
    0.0,
    1.5,
    42.0,
    -0.0,
    1e308,
    {},
    {"id": OWNER},
    [],
    [OWNER],
    [[{}]],
    {"update_id": 1, "message": {}},
    "x" * 5000,
    "\u202e\u200b\u0000",
]
RAW_BODIES = [
    "",
    " ",
    "null",
    "true",
    "0",
    "-1",
    "1e999",
    "NaN",
    '"update"',
    "[]",
    "[{}]",
    "{}",
    "{",
    "}",
    '{"update_id": }',
    '{"update_id": 1,}',
    "{'update_id': 1}",
    '{"update_id": NaN}',
    '{"update_id": Infinity}',
    '{"update_id": 1e2}',
    '{"update_id": 0x10}',
    '{"update_id": 01}',
    '{"update_id": ' + "9" * 5000 + "}",
    '{"update_id": -' + "9" * 50 + "}",
    "[" * 100_000,
    '{"a":' * 10_000 + "1" + "}" * 10_000,
    '{"update_id": 1, "message": ' * 500 + "null" + "}" * 500,
    "\ufeff" + '{"update_id": 1}',
    '{"update_id": 1}\u0000',
    '{"update_id": 1} {"update_id": 2}',
    '{"update_id": "\\ud800"}',
    "\ud800",
    "\x00\xff\xfe",
]
SECRETS: list[str | None] = [
    None,
    "",
    " ",
    "wrong",
    SECRET + " ",
    " " + SECRET,
    SECRET.upper(),
    SECRET[:-1],
    SECRET + "\u0000",
    "\ud800" + SECRET,
    SECRET + "\udfff",
    "é" * 40,
    "x" * 10_000,
]


def press_message(chat_id: int) -> dict[str, Any]:
    return {"message_id": 7, "date": 1_700_000_000, "chat": {"id": chat_id, "type": "private"}, "text": "🔐"}


def text_update(user: int, text: str, update_id: int, chat_id: int | None = None) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 1 + update_id % 1000,
            "from": {"id": user, "is_bot": False, "first_name": "Fuzz", "language_code": "en"},
            "chat": {"id": user if chat_id is None else chat_id, "type": "private", "first_name": "Fuzz"},
            "date": 1_700_000_000,
            "text": text,
        },
    }


def press_update(user: int, data: Any, update_id: int) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "callback_query": {
            "id": f"cq-{update_id}",
            "from": {"id": user, "is_bot": False, "first_name": "Fuzz"},
            "message": press_message(user),
            "chat_instance": "-123",
            "data": data,
        },
    }


def bases(rng: random.Random) -> list[dict[str, Any]]:
    """Valid updates of every kind the webhook sees."""
    update_id = rng.randrange(0, MAX_INT32)
    user = rng.choice([OWNER, OTHER, STRANGER])
    return [
        text_update(user, rng.choice([*ODD_TEXTS[:10], "hello", "done 3"]), update_id),
        text_update(OWNER, "group hello", update_id, chat_id=-1_001_234_567_890),
        press_update(OWNER, f"ap:{MY_APPROVAL}:{rng.choice('ad')}", update_id),
        press_update(user, f"ap:{rng.choice(list(APPROVALS))}:{rng.choice('ad')}", update_id),
        {"update_id": update_id, "edited_message": text_update(OWNER, "edited", update_id)["message"]},
        {"update_id": update_id, "my_chat_member": {"chat": {"id": OWNER, "type": "private"}}},
    ]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value (the root included)."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


def replaced(document: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    """A copy of the document with the value at `path` replaced (or its key deleted)."""
    if not path:
        return value
    root = copy.deepcopy(document)
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return root


def forged_data(rng: random.Random) -> Any:
    """Callback data an attacker (or a broken client) might send."""
    letter = rng.choice("adx")
    choices: list[Callable[[], Any]] = [
        lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).decode("latin-1"),
        lambda: f"ap:{THEIR_APPROVAL}:{letter}",
        lambda: f"ap:{MY_APPROVAL}:{letter}\n",
        lambda: f" ap:{MY_APPROVAL}:{letter}",
        lambda: f"ap:{MY_APPROVAL}:{letter}" + "x" * rng.randrange(1, 100),
        lambda: f"ap:{MY_APPROVAL.upper()}:{letter}",
        lambda: f"ap:{'A' * rng.randrange(38, 70)}:{letter}",
        lambda: "ap:" + MY_APPROVAL + ":" + "\u0430",  # Cyrillic a
        lambda: f"AP:{MY_APPROVAL}:{letter}",
        lambda: f"ap:{MY_APPROVAL}",
        lambda: "é" * rng.randrange(30, 40),
        lambda: rng.choice(BAD_VALUES),
    ]
    return rng.choice(choices)()


def to_json(document: Any, rng: random.Random) -> str:
    """JSON text of a document, sometimes with every non-ASCII character escaped."""
    return json.dumps(document, ensure_ascii=rng.random() < 0.5)


def broken(text: str, rng: random.Random) -> str:
    """Syntactically damaged JSON text."""
    cut = rng.randrange(0, max(1, len(text)))
    choice = rng.randrange(5)
    if choice == 0:
        return text[:cut]
    if choice == 1:
        return text[:cut] + rng.choice(['"', "{", "]", ",", "\\", "\\u12", "\x00", "\ud800"]) + text[cut:]
    if choice == 2:
        return text.replace('"', "'", rng.randrange(1, 4))
    if choice == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200))).decode("utf-8", "replace")
    return text[cut:]


def body_for(rng: random.Random) -> tuple[str | None, str]:
    """One request: a secret header and a body."""
    secret: str | None = SECRET if rng.random() < 0.9 else rng.choice(SECRETS)
    base = rng.choice(bases(rng))
    kind = rng.randrange(10)
    if kind == 0:  # a valid update as it is
        return secret, to_json(base, rng)
    if kind == 1:  # broken JSON
        return secret, broken(to_json(base, rng), rng)
    if kind == 2:  # odd bodies, valid JSON of the wrong shape included
        return secret, rng.choice([*RAW_BODIES, to_json(rng.choice(BAD_VALUES), rng)])
    if kind == 3:  # a forged press
        press = press_update(rng.choice([OWNER, OTHER, STRANGER]), forged_data(rng), rng.randrange(MAX_INT32))
        return secret, to_json(press, rng)
    if kind == 4:  # odd texts, and escaped lone surrogates that only JSON can carry
        update = text_update(rng.choice([OWNER, STRANGER]), rng.choice(ODD_TEXTS), rng.randrange(MAX_INT32))
        text = to_json(update, rng)
        if rng.random() < 0.3:
            text = text.replace('"text": "', '"text": "' + rng.choice(["\\ud800", "\\udfff", "\\ud83d"]), 1)
        return secret, text
    # Several fields of a valid update replaced by values of the wrong type or range, or deleted.
    document: Any = base
    for _ in range(rng.randrange(1, 4)):
        path = rng.choice(list(paths(document)))
        document = replaced(document, path, rng.choice(BAD_VALUES), delete=rng.random() < 0.15)
    return secret, to_json(document, rng)


def exhaustive_mutations() -> Iterator[str]:
    """Every field of every base update, replaced by every bad value, and deleted."""
    for base in bases(random.Random(0)):
        for path in paths(base):
            if not path:
                continue
            yield json.dumps(replaced(base, path, None, delete=True))
            for value in BAD_VALUES:
                yield json.dumps(replaced(base, path, value))


EXHAUSTIVE = list(exhaustive_mutations())


# -- the checks --------------------------------------------------------------------------------------------


@dataclass
class Tally:
    started: int = 0
    settled: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    invalid: int = 0  # answered 200 with the action "invalid": dropped, never redelivered


def check(secret: str | None, body: str, tally: Tally) -> None:
    """Send one request to a fresh world; assert the webhook's contract against the oracle."""
    world = build_world()
    try:
        outcome = handle_update(secret, body, world.services)
    except Exception as error:
        pytest.fail(f"handle_update raised {error!r} for secret={secret!r:.40} body={body!r:.300}")
    assert isinstance(outcome, WebhookOutcome)
    assert outcome.status in STATUSES, (outcome, body[:300])
    tally.statuses[outcome.status] = tally.statuses.get(outcome.status, 0) + 1
    if outcome.action == "invalid":
        assert outcome.status == 200, "Telegram would redeliver a poison update answered with an error"
        tally.invalid += 1
    if outcome.status != 200 or outcome.action == "invalid":
        assert world.telegram.calls == [], "a rejected request talks to nobody"
    if secret != SECRET:
        assert outcome.status == (401 if secret is None else 403)
    # Turns: only the oracle's valid, allowlisted text message starts one, with exactly its numbers and text.
    expected = may_start(secret, body)
    if world.starter.started:
        assert expected is not None, f"a turn started for {body[:300]!r}"
        ((name, payload),) = world.starter.started.items()
        expected_name, turn = expected
        assert name == expected_name and len(name) <= 80
        got = {key: payload["turn"][key] for key in ("chat_id", "user_id", "update_id")}
        ((waiting, _),) = [(m, m) for m in world.inbox.pending(Conversation(got["chat_id"]))]
        assert {**got, "text": waiting.text} == turn
        tally.started += 1
    else:
        assert expected is None or outcome.action != "started"
        assert world.inbox.queued == {}, f"a message was queued for {body[:300]!r}"
    # Approvals: only the oracle's press settles one, and only that one, with that decision.
    settle = may_settle(secret, body)
    decided = {
        approval_id: request.status
        for approval_id in APPROVALS
        if (request := world.approvals.get(approval_id)) is not None and request.status != "pending"
    }
    if decided or world.resumer.resumed:
        assert settle is not None, f"an approval was settled by {body[:300]!r}"
        approval_id, decision = settle
        assert decided == {approval_id: decision}
        assert world.resumer.resumed == [(f"token-{approval_id}", {"decision": decision})]
        tally.settled += 1


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_requests_never_crash_and_only_valid_ones_act(seed: int) -> None:
    rng = random.Random(seed)
    tally = Tally()
    for _ in range(BODIES_PER_SEED):
        secret, body = body_for(rng)
        check(secret, body, tally)
    # Each chunk exercises every path: turns started, approvals settled, rejections of each kind.
    assert tally.started > 0 and tally.settled > 0, tally
    assert 200 in tally.statuses and tally.invalid > 0, tally


@pytest.mark.parametrize("chunk", range(4))
def test_every_field_of_every_update_with_every_wrong_value(chunk: int) -> None:
    tally = Tally()
    for body in EXHAUSTIVE[chunk::4]:
        check(SECRET, body, tally)
    assert tally.invalid > 0, tally


@pytest.mark.parametrize("secret", SECRETS)
def test_a_missing_or_wrong_secret_changes_nothing(secret: str | None) -> None:
    tally = Tally()
    rng = random.Random(len(secret or ""))
    for base in bases(rng):
        check(secret, to_json(base, rng), tally)
    assert tally == Tally(statuses={401 if secret is None else 403: len(bases(rng))})


def test_there_are_more_than_ten_thousand_requests() -> None:
    assert SEEDS * BODIES_PER_SEED + len(EXHAUSTIVE) + len(SECRETS) * 6 >= 10_000
