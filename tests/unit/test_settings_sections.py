"""The settings' sections (stepwise.config.SECTIONS): each read from the environment and validated by the
code that reads it, every setting in exactly one place, and none of them built by a turn's settings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from pydantic import SecretStr, ValidationError
from support.tools import ROOT

from stepwise.config import SECTIONS, Settings, all_settings_models
from stepwise.mcp.settings import EndpointSettings
from stepwise.memory.settings import MemoryIndexSettings
from stepwise.remote_tools.settings import RemoteToolSettings
from stepwise.runtime import Runtime
from stepwise.voice.settings import VoiceServiceSettings
from stepwise.warmups.settings import WarmupSettings


def test_every_setting_is_in_exactly_one_model() -> None:
    models = all_settings_models()
    counts = Counter(name for model in models for name in model.model_fields)

    assert len(models) == 1 + len(SECTIONS)
    assert [name for name, count in counts.items() if count > 1] == []


@pytest.mark.parametrize(
    ("section", "variable", "value", "field", "expected"),
    [
        (WarmupSettings, "WARMUP_AFTER_QUIET_SECONDS", "60", "warmup_after_quiet_seconds", 60),
        (EndpointSettings, "MCP_MAX_BODY_BYTES", "4096", "mcp_max_body_bytes", 4096),
        (RemoteToolSettings, "REMOTE_TOOL_TIMEOUT_SECONDS", "3.5", "remote_tool_timeout_seconds", 3.5),
        (VoiceServiceSettings, "POLLY_VOICE_ID", "Ines", "polly_voice_id", "Ines"),
        (VoiceServiceSettings, "VOICE_BUCKET_NAME", "  ", "voice_bucket_name", None),
        (MemoryIndexSettings, "EMBEDDING_DIMENSIONS", "1024", "embedding_dimensions", 1024),
    ],
)
def test_a_section_reads_its_variables_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, section: type, variable: str, value: str, field: str, expected: object
) -> None:
    monkeypatch.setenv(variable, value)
    assert getattr(section(), field) == expected


@pytest.mark.parametrize(
    ("section", "variable", "value", "message"),
    [
        (RemoteToolSettings, "MCP_PARAMETERS_PATH", "/stepwise/mcp", "must start and end with /"),
        (MemoryIndexSettings, "EMBEDDING_DIMENSIONS", "300", "must be 256, 512 or 1024"),
        (VoiceServiceSettings, "VOICE_TRANSCRIPTION_URL", "api.openai.com/v1", "must be an https:// URL"),
        (WarmupSettings, "WARMUP_AFTER_QUIET_SECONDS", "-1", "greater than or equal to 0"),
    ],
)
def test_a_bad_value_in_a_section_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, section: type, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError, match=re.escape(message)):
        section()


@pytest.mark.parametrize(
    "url",
    [
        "http://192.0.2.2:8099\\@localhost",  # urllib3, which sends the request, goes to 192.0.2.2
        "http://localhost\\@stt.example.com/v1",
        "https://api.openai.com\\v1",
        "http://user@localhost:9000/v1",
        "http://@localhost:9000/v1",
        "https://user:hunter2@api.openai.com/v1",
    ],
)
def test_a_speech_to_text_url_with_a_backslash_or_user_info_is_refused_without_repeating_it(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("VOICE_TRANSCRIPTION_URL", url)
    with pytest.raises(ValidationError, match="VOICE_TRANSCRIPTION_URL must not hold a backslash") as refused:
        VoiceServiceSettings()
    assert url not in str(refused.value) and "hunter2" not in str(refused.value)


def test_the_openai_transcriber_without_its_url_is_named_when_a_note_is_first_transcribed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VOICE_TRANSCRIPTION_URL", raising=False)
    runtime = Runtime(Settings(voice_transcriber="openai"))

    with pytest.raises(RuntimeError, match="VOICE_TRANSCRIBER=openai needs VOICE_TRANSCRIPTION_URL"):
        runtime.transcriber  # noqa: B018 (the property builds the transcriber)


def test_the_transcription_key_is_the_given_one_or_none_at_all() -> None:
    assert (
        VoiceServiceSettings(voice_transcription_key=SecretStr("sk-local")).transcription_key(300)
        == "sk-local"
    )
    assert VoiceServiceSettings().transcription_key(300) == ""


def test_the_settings_of_a_turn_build_none_of_the_sections() -> None:
    modules = [path.partition(":")[0] for path in SECTIONS]
    probe = (
        "import sys, json\nfrom stepwise.config import get_settings\nget_settings()\n"
        f"print(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "layers" / "core")}

    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
