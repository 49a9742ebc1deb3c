"""moto 5.2.5's Amazon Transcribe with one gap closed: a completed batch job writes its transcript.

moto moves a transcription job from QUEUED to IN_PROGRESS to COMPLETED, one step per GetTranscriptionJob,
and then returns a TranscriptFileUri for OutputBucketName/OutputKey, but writes nothing there (and never
reads the media). `patch_transcribe_output` makes the completed job write a Transcribe-shaped JSON to that
object, its text made by a callback from the audio bytes at the job's `s3://` media URI, so the
`AwsTranscriber` can run end to end on moto.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from moto.s3.exceptions import MissingBucket
from moto.s3.models import s3_backends
from moto.transcribe.models import FakeTranscriptionJob
from moto.utilities.utils import get_partition

if TYPE_CHECKING:
    from collections.abc import Callable

_PATCHED = "_stepwise_writes_output"  # marks the wrapped FakeTranscriptionJob.advance
_WRITTEN = "_stepwise_output_written"  # marks a job whose transcript has been written

_transcripts: Callable[[bytes], str] | None = None


def patch_transcribe_output(transcripts: Callable[[bytes], str]) -> None:
    """Make moto's completed transcription jobs write their transcript (`transcripts(audio)` as its text).
    Applying it again only replaces the callback."""
    global _transcripts
    _transcripts = transcripts
    original = FakeTranscriptionJob.advance
    if getattr(original, _PATCHED, False):
        return

    def advance(self: FakeTranscriptionJob) -> None:
        original(self)
        # moto gap: COMPLETED sets only the TranscriptFileUri; AWS writes the transcript there.
        if self.status == "COMPLETED" and not getattr(self, _WRITTEN, False):
            setattr(self, _WRITTEN, True)
            _write_output(self)

    setattr(advance, _PATCHED, True)
    FakeTranscriptionJob.advance = advance  # type: ignore[method-assign]


def _write_output(job: FakeTranscriptionJob) -> None:
    """The job's transcript, as AWS writes it, to OutputBucketName/OutputKey (a key ending in "/" is a
    folder for `<job name>.json`). Jobs without an output bucket, or whose media is missing, write nothing:
    AWS would fail the latter, which moto cannot do, so reading the transcript fails instead."""
    bucket_name = job._output_bucket_name
    uri = job.media.get("MediaFileUri", "")
    if _transcripts is None or not bucket_name or not uri.startswith("s3://"):
        return
    backend: Any = s3_backends[job._account_id][get_partition(job._region_name)]
    media_bucket, _, media_key = uri.removeprefix("s3://").partition("/")
    try:
        media = backend.get_object(media_bucket, media_key)
    except MissingBucket:
        return
    if media is None:
        return
    key = job.output_key or ""
    if not key or key.endswith("/"):
        key += f"{job.transcription_job_name}.json"
    body = {
        "jobName": job.transcription_job_name,
        "accountId": job._account_id,
        "status": "COMPLETED",
        "results": {"transcripts": [{"transcript": _transcripts(media.value)}], "items": []},
    }
    try:
        backend.put_object(bucket_name, key, json.dumps(body).encode())
    except MissingBucket:
        return
