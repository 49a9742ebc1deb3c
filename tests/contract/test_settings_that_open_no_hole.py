"""Settings that cannot open a hole (docs/security.md): the template's patterns and the settings' validation
refuse a speech-to-text URL in clear text to another host (as urllib3, which sends it, reads it) or with a
backslash or a user-info part, and an MCP parameters path that would let the functions read the secrets."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from stepwise.remote_tools.settings import RemoteToolSettings
from stepwise.voice.settings import VoiceServiceSettings
from stepwise_local.template import Template

PARAMETERS = Template().doc["Parameters"]


def allowed(parameter: str, value: str) -> bool:
    return re.fullmatch(PARAMETERS[parameter]["AllowedPattern"], value) is not None


REFUSED_URLS = [
    "http://stt.example.com",
    "http://stt.example.com/v1",
    "http://localhost.example.com/v1",
    "http://localhost@stt.example.com/v1",
    "http://127.0.0.1:8000@stt.example.com",
    "http://192.0.2.2:8099\\@localhost",  # to 192.0.2.2 as urllib3 (which sends it) reads it
    "https://user:password@api.openai.com/v1",
    "ftp://speech",
    "https://",
]
ACCEPTED_URLS = [
    "",
    "https://api.openai.com/v1",
    "https://api.groq.com/openai/v1",
    "http://localhost:9000/v1",
    "http://127.0.0.1/v1",
    "http://[::1]:8080",
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_speech_to_text_url_in_clear_text_to_another_host_is_refused(url: str) -> None:
    assert not allowed("VoiceTranscriptionUrl", url)
    with pytest.raises(ValidationError, match=r"VOICE_TRANSCRIPTION_URL must (be an https:// URL|not hold)"):
        VoiceServiceSettings(voice_transcription_url=url)


@pytest.mark.parametrize("url", ACCEPTED_URLS)
def test_https_and_http_to_this_machine_are_accepted(url: str) -> None:
    assert allowed("VoiceTranscriptionUrl", url)
    assert VoiceServiceSettings(voice_transcription_url=url).voice_transcription_url == url


@pytest.mark.parametrize("path", ["/", "//", "/stepwise//", "stepwise/mcp/"])
def test_an_mcp_parameters_path_without_a_folder_is_refused(path: str) -> None:
    assert not allowed("McpParametersPath", path)
    with pytest.raises(ValidationError, match="MCP_PARAMETERS_PATH must"):
        RemoteToolSettings(mcp_parameters_path=path)


def test_the_default_path_and_other_folders_are_accepted() -> None:
    for path in ("/stepwise/mcp/", "/team/assistant/mcp/"):
        assert allowed("McpParametersPath", path)
        assert RemoteToolSettings(mcp_parameters_path=path).mcp_parameters_path == path


def test_a_path_that_covers_a_secret_parameter_is_refused() -> None:
    secrets = "/stepwise/telegram-bot-token,/stepwise/telegram-webhook-secret,/stepwise/anthropic-api-key,"

    with pytest.raises(ValidationError, match="covers the secret parameter /stepwise/telegram-bot-token"):
        RemoteToolSettings(mcp_parameters_path="/stepwise/", secret_parameters=secrets)
    assert RemoteToolSettings(mcp_parameters_path="/stepwise/mcp/", secret_parameters=secrets)


def test_the_template_refuses_the_default_secrets_folder_and_names_every_secret_to_the_functions() -> None:
    rule = Template().doc["Rules"]["McpParametersPathHoldsNoSecret"]["Assertions"][0]["Assert"]
    assert rule == {"Fn::Not": [{"Fn::Equals": [{"Ref": "McpParametersPath"}, "/stepwise/"]}]}
    template = Template()
    for name in ("CallModelFunction", "RunToolsFunction"):
        environment = template.functions()[name].environment
        named = environment["SECRET_PARAMETERS"].split(",")
        assert "/stepwise/telegram-bot-token" in named and "/stepwise/anthropic-api-key" in named
        assert RemoteToolSettings(
            mcp_parameters_path=environment["MCP_PARAMETERS_PATH"],
            secret_parameters=environment["SECRET_PARAMETERS"],
        )
