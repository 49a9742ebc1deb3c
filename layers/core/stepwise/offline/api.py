"""The offline model's one entry point: code outside `stepwise.offline` imports it from here only.

`OfflineModel` answers turns by rules; `parse_intent` says which tool calls a message asks for (None: the
rules do not understand it); `job_intent` whether a message asks for a background job; `small_talk` and
`for_the_user` are its answers to small talk and its wording of tool results; `closest_commands` picks, from
`COMMAND_EXAMPLES`, the ones offered to text it does not understand; `SECRETARY_DRAFT` is its draft of a reply
to a contact (secretary mode). The phrasings it is scored on are in
`corpora/`.
"""

from __future__ import annotations

from stepwise.offline.intents import parse_intent
from stepwise.offline.job_rules import job_intent
from stepwise.offline.model import COMMAND_EXAMPLES, SECRETARY_DRAFT, OfflineModel
from stepwise.offline.near_misses import closest_commands
from stepwise.offline.small_talk import small_talk
from stepwise.offline.user_wording import for_the_user

__all__ = [
    "COMMAND_EXAMPLES",
    "SECRETARY_DRAFT",
    "OfflineModel",
    "closest_commands",
    "for_the_user",
    "job_intent",
    "parse_intent",
    "small_talk",
]
