"""Voice notes: transcribing what the user says (Amazon Transcribe, an OpenAI-compatible API, or offline
PocketSphinx) and speaking answers (Amazon Polly, or offline eSpeak NG). Imported only by turns with audio."""
