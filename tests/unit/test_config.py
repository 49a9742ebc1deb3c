"""Settings: defaults, the allowlist and validation of bad values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stepwise.config import DEFAULT_MODEL, Settings


def test_defaults_match_the_documented_contract() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.anthropic_model == DEFAULT_MODEL == "claude-haiku-4-5"
    assert settings.max_tool_steps == 5
    assert settings.history_limit == 20
    assert settings.telegram_api_base_url == "https://api.telegram.org"
    assert settings.allowed_users == frozenset()
    assert (
        settings.telegram_connect_timeout_seconds,
        settings.telegram_timeout_seconds,
        settings.telegram_send_timeout_seconds,
    ) == (5, 10, 20)


def test_allowlist_is_parsed_from_comma_separated_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_USER_IDS", " 42, 7 ,,1001")
    assert Settings().allowed_users == frozenset({42, 7, 1001})


def test_an_allowlist_with_a_name_in_it_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_USER_IDS", "42,alice")
    with pytest.raises(ValidationError, match="ALLOWED_USER_IDS"):
        Settings()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MAX_TOOL_STEPS", "0"),
        ("HISTORY_LIMIT", "-1"),
        ("HISTORY_LIMIT", "many"),
        ("TELEGRAM_CONNECT_TIMEOUT_SECONDS", "0"),
        ("TELEGRAM_SEND_TIMEOUT_SECONDS", "-1"),
        ("TELEGRAM_SEND_TIMEOUT_SECONDS", "901"),
    ],
)
def test_out_of_range_numbers_are_rejected(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        Settings()


def test_the_tool_call_ledger_table_must_be_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOL_CALLS_TABLE", raising=False)
    assert Settings().tool_calls_table == "stepwise-tool-calls"
    monkeypatch.setenv("TOOL_CALLS_TABLE", "")
    with pytest.raises(ValidationError, match="tool_calls_table"):
        Settings()


def test_blank_values_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY_PARAMETER", "")
    monkeypatch.setenv("ANTHROPIC_API_KEY", " ")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    settings = Settings()
    assert settings.anthropic_api_key is None and settings.anthropic_api_key_parameter is None
    assert not settings.uses_anthropic


@pytest.mark.parametrize(
    "variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_PARAMETER", "ANTHROPIC_BASE_URL"]
)
def test_any_model_api_setting_selects_anthropic(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_PARAMETER", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "http://127.0.0.1:1" if variable.endswith("URL") else "value")
    assert Settings().uses_anthropic


@pytest.mark.parametrize(
    ("value", "margin"), [(None, None), ("auto", None), (" Auto ", None), ("", None), ("0", 0)]
)
def test_history_margin_is_auto_by_default_or_a_number_of_messages(
    monkeypatch: pytest.MonkeyPatch, value: str | None, margin: int | None
) -> None:
    if value is None:
        monkeypatch.delenv("HISTORY_MARGIN", raising=False)
    else:
        monkeypatch.setenv("HISTORY_MARGIN", value)
    assert Settings().history_margin == margin
    monkeypatch.setenv("HISTORY_MARGIN", "12")
    assert Settings().history_margin == 12


@pytest.mark.parametrize("value", ["ten", "-1", "201", "1.5"])
def test_a_history_margin_that_is_neither_auto_nor_a_number_of_messages_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("HISTORY_MARGIN", value)
    with pytest.raises(ValidationError, match="history_margin"):
        Settings()


def test_repeats_run_at_most_every_15_minutes_unless_lowered_and_check_ins_no_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("MIN_REPEAT_INTERVAL_MINUTES", "MIN_CHECKIN_INTERVAL_MINUTES"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert (settings.min_repeat_interval_minutes, settings.min_checkin_interval_minutes) == (15, 60)
    monkeypatch.setenv("MIN_REPEAT_INTERVAL_MINUTES", "0")
    with pytest.raises(ValidationError, match="min_repeat_interval_minutes"):
        Settings()
    monkeypatch.setenv("MIN_REPEAT_INTERVAL_MINUTES", "1")
    monkeypatch.setenv("MIN_CHECKIN_INTERVAL_MINUTES", "5")
    assert Settings().min_repeat_interval_minutes == 1, "a setting may lower the floor"
    monkeypatch.setenv("MIN_REPEAT_INTERVAL_MINUTES", "15")
    with pytest.raises(ValidationError, match=r"MIN_CHECKIN_INTERVAL_MINUTES \(5\) is below"):
        Settings()
