"""The AWS voice adapters end to end on moto: Transcribe batch jobs (with the emulation's patch that makes a
completed job write its transcript), and what moto's Polly does with Ogg Opus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.transcribe.models import FakeTranscriptionJob

from stepwise.voice.aws_transcribe import AwsTranscriber
from stepwise.voice.models import SpeechError, TranscriptionTransient
from stepwise.voice.polly import PollySpeaker
from stepwise_local import moto_transcribe
from stepwise_local.moto_polly import ogg_opus_speech
from stepwise_local.moto_transcribe import patch_transcribe_output

REGION = "us-east-1"
BUCKET = "voice-moto-test-bucket"  # its own name: other suites share moto's backends
NOTE = b"OggS" + b"pretend opus" * 20
WORDS = {NOTE: "remind me to water the plants"}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """moto's S3 and Transcribe with the bucket, and the transcript patch applied for this test only."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    # Undone after the test, so an emulation that applied the patch keeps its own callback.
    monkeypatch.setattr(FakeTranscriptionJob, "advance", FakeTranscriptionJob.advance)
    monkeypatch.setattr(moto_transcribe, "_transcripts", moto_transcribe._transcripts)
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        transcribe = boto3.client("transcribe", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        patch_transcribe_output(lambda audio: WORDS.get(audio, "unknown audio"))
        yield s3, transcribe


def transcriber(s3: Any, transcribe: Any, **options: Any) -> AwsTranscriber:
    return AwsTranscriber(lambda: s3, lambda: transcribe, BUCKET, sleep=lambda _: None, **options)


def jobs(transcribe: Any) -> list[str]:
    return [
        job["TranscriptionJobName"]
        for job in transcribe.list_transcription_jobs()["TranscriptionJobSummaries"]
    ]


def keys(s3: Any) -> list[str]:
    return [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_a_voice_note_is_transcribed_and_nothing_is_kept(aws: tuple[Any, Any]) -> None:
    s3, transcribe = aws
    # Given the transcriber on moto, the language left to identify
    voice = transcriber(s3, transcribe)
    # When a voice note is transcribed
    result = voice.transcribe(NOTE, job_id="9001", mime_type="audio/ogg", file_name=None)
    # Then its words come back, with the language moto "identifies"
    assert (result.text, result.language, result.transcriber) == (
        "remind me to water the plants",
        "en-US",
        "transcribe",
    )
    # And the audio, the transcript and the job are gone
    assert keys(s3) == []
    assert "stepwise-9001" not in jobs(transcribe)
    with pytest.raises(ClientError):
        transcribe.get_transcription_job(TranscriptionJobName="stepwise-9001")


def test_the_job_is_started_with_the_given_language(aws: tuple[Any, Any]) -> None:
    s3, transcribe = aws
    started: list[dict[str, Any]] = []
    transcribe.meta.events.register(
        "provide-client-params.transcribe.StartTranscriptionJob", lambda params, **_: started.append(params)
    )
    result = transcriber(s3, transcribe, language="de-DE").transcribe(
        NOTE, job_id="9002", mime_type=None, file_name="memo.mp3"
    )
    assert result.language == "de-DE"
    assert started[0]["MediaFormat"] == "mp3"
    assert started[0]["Media"] == {"MediaFileUri": f"s3://{BUCKET}/voice/9002.mp3"}


def test_a_retry_after_the_function_died_polls_the_running_job_instead_of_starting_another(
    aws: tuple[Any, Any],
) -> None:
    s3, transcribe = aws
    answers: list[str] = []
    transcribe.meta.events.register(
        "after-call.transcribe.StartTranscriptionJob",
        lambda parsed, **_: answers.append(parsed.get("Error", {}).get("Code", "started")),
    )
    # Given the audio and the queued job of a first attempt whose function died (no cleanup ran)
    s3.put_object(Bucket=BUCKET, Key="voice/9003.ogg", Body=NOTE)
    transcribe.start_transcription_job(
        TranscriptionJobName="stepwise-9003",
        Media={"MediaFileUri": f"s3://{BUCKET}/voice/9003.ogg"},
        MediaFormat="ogg",
        OutputBucketName=BUCKET,
        OutputKey="voice/9003.json",
        IdentifyLanguage=True,
    )
    # When the same note is tried again
    result = transcriber(s3, transcribe).transcribe(
        NOTE, job_id="9003", mime_type="audio/ogg", file_name=None
    )
    # Then the existing job was polled to its end: moto refused a second start, and everything is gone
    assert result.text == "remind me to water the plants"
    assert answers == ["started", "ConflictException"]
    assert keys(s3) == [] and "stepwise-9003" not in jobs(transcribe)


def test_a_wait_given_up_leaves_no_audio_and_no_ended_job(aws: tuple[Any, Any]) -> None:
    s3, transcribe = aws
    # Given a transcriber that gives up while moto's job is still queued
    ticks = iter([0.0, 0.0, 100.0])
    impatient = AwsTranscriber(
        lambda: s3,
        lambda: transcribe,
        BUCKET,
        timeout_seconds=1,
        sleep=lambda _: None,
        clock=lambda: next(ticks),
    )
    with pytest.raises(TranscriptionTransient):
        impatient.transcribe(NOTE, job_id="9004", mime_type="audio/ogg", file_name=None)
    # Then its audio is deleted (a queued job fails for want of it) and the job was asked to go (moto, unlike
    # AWS, deletes a job that has not ended)
    assert keys(s3) == [] and "stepwise-9004" not in jobs(transcribe)


def test_applying_the_patch_twice_wraps_once_and_uses_the_newest_callback(aws: tuple[Any, Any]) -> None:
    s3, transcribe = aws
    wrapped = FakeTranscriptionJob.advance
    patch_transcribe_output(lambda audio: f"{len(audio)} bytes heard")
    assert FakeTranscriptionJob.advance is wrapped
    result = transcriber(s3, transcribe).transcribe(
        NOTE, job_id="9004", mime_type="audio/ogg", file_name=None
    )
    assert result.text == f"{len(NOTE)} bytes heard"


def test_the_written_transcript_has_transcribes_shape(aws: tuple[Any, Any]) -> None:
    s3, transcribe = aws
    # Given a job started directly, its audio in the bucket
    s3.put_object(Bucket=BUCKET, Key="in/a.wav", Body=NOTE)
    transcribe.start_transcription_job(
        TranscriptionJobName="shape-check",
        Media={"MediaFileUri": f"s3://{BUCKET}/in/a.wav"},
        MediaFormat="wav",
        LanguageCode="en-US",
        OutputBucketName=BUCKET,
        OutputKey="out/",
    )
    # When it is polled to completion
    status = ""
    for _ in range(5):
        job = transcribe.get_transcription_job(TranscriptionJobName="shape-check")["TranscriptionJob"]
        status = job["TranscriptionJobStatus"]
        if status == "COMPLETED":
            break
    # Then the transcript lies in the output folder under the job's name, as AWS puts it
    assert status == "COMPLETED"
    body = json.loads(s3.get_object(Bucket=BUCKET, Key="out/shape-check.json")["Body"].read())
    assert body["jobName"] == "shape-check" and body["status"] == "COMPLETED"
    assert body["results"]["transcripts"] == [{"transcript": "remind me to water the plants"}]
    transcribe.delete_transcription_job(TranscriptionJobName="shape-check")


def test_polly_on_moto_speaks_ogg_opus_with_the_emulations_patch_and_refuses_what_polly_refuses() -> None:
    # moto 5.2.5 knows no ogg_opus; the emulation's patch (stepwise_local.moto_polly) answers it as Polly does
    with mock_aws(), ogg_opus_speech(lambda text: b"OggS" + text.encode()):
        polly = boto3.client(
            "polly", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        spoken = PollySpeaker(lambda: polly, voice_id="Joanna", engine="neural").synthesize("Hello.")
        assert spoken.ogg_opus == b"OggSHello." and spoken.characters == 6
        with pytest.raises(SpeechError, match=r"InvalidParameterValue \(HTTP 400\)"):
            PollySpeaker(lambda: polly, voice_id="Nobody").synthesize("Hello.")
        with pytest.raises(SpeechError, match=r"TextLengthExceededException"):
            PollySpeaker(lambda: polly).synthesize("x" * 3001)
