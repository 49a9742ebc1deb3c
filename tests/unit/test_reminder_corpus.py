"""The offline phrasing corpus for the reminder tools (`stepwise/offline/corpora/reminder_phrasings.toml`):
everyday reminder, check-in and time zone phrasings and the tool calls the offline model makes for them, on
Monday 2026-11-23 at 14:05 in Lisbon; and texts that must not become reminders."""

from __future__ import annotations

from support.corpora import Call, corpus, with_calls
from support.offline_requests import REMINDER_TOOLS, offline_request

from stepwise.offline.api import OfflineModel

REQUIRED_SHARE = 0.95
REMINDERS = corpus("reminder_phrasings")
CORPUS = with_calls(REMINDERS["phrasings"])
NEGATIVES = with_calls(REMINDERS["not_reminders"])


def calls_for(text: str) -> list[Call]:
    response = OfflineModel().complete(offline_request(text))
    return [(block["name"], block["input"]) for block in response.tool_uses]


def test_the_corpus_holds_at_least_sixty_phrasings() -> None:
    texts = [text for text, _ in CORPUS + NEGATIVES]
    assert len(CORPUS) >= 60
    assert len(set(texts)) == len(texts)


def test_reminder_phrasings_become_the_tool_calls_the_real_model_would_make() -> None:
    misses = [(text, calls_for(text), want) for text, want in CORPUS if calls_for(text) != want]
    share = 1 - len(misses) / len(CORPUS)
    report = "\n".join(f"{text!r}: got {got}, want {want}" for text, got, want in misses)
    print(f"\noffline reminder phrasing corpus: {len(CORPUS) - len(misses)} of {len(CORPUS)} phrasings")
    assert share >= REQUIRED_SHARE, f"{share:.0%} of the corpus matched; misses:\n{report}"


def test_other_texts_never_become_reminders() -> None:
    wrong = [(text, calls_for(text), want) for text, want in NEGATIVES if calls_for(text) != want]
    assert not [(text, got) for text, got, _ in wrong if any(name in REMINDER_TOOLS for name, _ in got)]
    assert wrong == []
