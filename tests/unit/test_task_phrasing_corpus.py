"""The offline phrasing corpus for the task tools (`stepwise/offline/corpora/task_phrasings.toml` and
`small_talk.toml`): everyday ways to add, list, show, rename, complete and delete tasks, small talk answered
without tools, and texts that must not become task commands; and its held-out split
(`task_phrasings_held_out.toml`), which the rules are checked against but never tuned on.

Each phrasing is sent to the offline model as a turn would send it (every tool offered, the user's clock in
the context, Monday 2026-11-23 14:05 in Lisbon). Both scores are printed with `pytest -s`."""

from __future__ import annotations

from support.corpora import Call, corpus, with_calls
from support.offline_requests import offline_request

from stepwise.offline.api import OfflineModel

REQUIRED_SHARE = 0.95
HELD_OUT_FLOOR = 0.80  # below what the split scored when it was last measured (see docs/fallback.md)
TASKS = corpus("task_phrasings")
CORPUS = with_calls(TASKS["phrasings"])
NEGATIVES: list[str] = TASKS["not_commands"]
SMALL_TALK = [(entry["text"], entry["answer_has"]) for entry in corpus("small_talk")["phrasings"]]
HELD_OUT = corpus("task_phrasings_held_out")
HELD_OUT_CORPUS = with_calls(HELD_OUT["phrasings"])
HELD_OUT_NEGATIVES: list[str] = HELD_OUT["not_commands"]


def answer(text: str) -> tuple[list[Call], str]:
    response = OfflineModel().complete(offline_request(text))
    calls = [(block["name"], block["input"]) for block in response.tool_uses]
    words = " ".join(block.get("text", "") for block in response.content if block.get("type") == "text")
    return calls, words


def score() -> tuple[float, list[str]]:
    misses = []
    for text, want in CORPUS:
        got, _ = answer(text)
        if got != want:
            misses.append(f"{text!r}: got {got}, want {want}")
    for text, keyword in SMALL_TALK:
        got, words = answer(text)
        if got or keyword.lower() not in words.lower():
            misses.append(f"{text!r}: got {got} {words!r}, want no tool and {keyword!r}")
    total = len(CORPUS) + len(SMALL_TALK)
    return 1 - len(misses) / total, misses


def test_the_corpus_holds_at_least_150_distinct_phrasings_with_several_per_action() -> None:
    texts = [text for text, _ in CORPUS] + [text for text, _ in SMALL_TALK] + NEGATIVES
    assert len(CORPUS) + len(SMALL_TALK) >= 150
    assert len(set(texts)) == len(texts)
    per_action: dict[str, int] = {}
    for _, calls in CORPUS:
        per_action[calls[0][0]] = per_action.get(calls[0][0], 0) + 1
    tools = ("add_task", "list_tasks", "get_task", "update_task", "complete_task", "delete_task")
    assert all(per_action.get(tool, 0) >= 5 for tool in tools), per_action


def test_everyday_phrasings_become_the_tool_calls_the_real_model_would_make() -> None:
    share, misses = score()
    print(f"\noffline task phrasing corpus: {share:.1%} of {len(CORPUS) + len(SMALL_TALK)} phrasings")
    assert share >= REQUIRED_SHARE, f"{share:.1%} matched; misses:\n" + "\n".join(misses)


def test_other_texts_call_no_tool() -> None:
    wrong = [(text, answer(text)[0]) for text in NEGATIVES if answer(text)[0]]
    assert wrong == []


def test_the_held_out_split_shares_no_text_with_the_phrasings_the_rules_are_tuned_on() -> None:
    tuned = {text for text, _ in CORPUS} | {text for text, _ in SMALL_TALK} | set(NEGATIVES)
    held_out = [text for text, _ in HELD_OUT_CORPUS] + HELD_OUT_NEGATIVES
    assert len(set(held_out)) == len(held_out)
    assert tuned.isdisjoint(held_out), tuned & set(held_out)
    assert len(HELD_OUT_CORPUS) >= 40 and len(HELD_OUT_NEGATIVES) >= 10


def test_the_held_out_split_scores_above_its_floor() -> None:
    matched = sum(answer(text)[0] == want for text, want in HELD_OUT_CORPUS)
    quiet = sum(not answer(text)[0] for text in HELD_OUT_NEGATIVES)
    total = len(HELD_OUT_CORPUS) + len(HELD_OUT_NEGATIVES)
    share = (matched + quiet) / total
    print(
        f"\nheld-out split: {matched} of {len(HELD_OUT_CORPUS)} phrasings and {quiet} of "
        f"{len(HELD_OUT_NEGATIVES)} non-commands, {share:.1%} of {total}"
    )
    assert share >= HELD_OUT_FLOOR, f"{share:.1%} of the held-out split matched"
