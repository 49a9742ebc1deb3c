"""Which files the model can read, and as what: images, PDFs and text documents (Messages API, 2026-11)."""

from __future__ import annotations

from typing import Literal

ModelFormat = Literal["image", "pdf", "text"]

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
PDF_TYPE = "application/pdf"
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/javascript",
        "application/x-sh",
        "application/sql",
        "application/x-ndjson",
    }
)
TEXT_SUFFIXES = frozenset(
    {
        "txt", "md", "markdown", "csv", "tsv", "json", "jsonl", "xml", "yaml", "yml", "toml", "ini", "log",
        "html", "htm", "css", "js", "ts", "py", "sh", "sql", "rst", "tex", "srt", "vtt", "ics", "vcf",
    }
)  # fmt: skip
# Telegram (or the sender's phone) often labels a text file as one of these.
GENERIC_TYPES = frozenset({"", "application/octet-stream"})


def model_format(mime_type: str | None, file_name: str | None) -> ModelFormat | None:
    """What the model reads a file as, or None when it cannot read it (Word, zip, audio...)."""
    mime = (mime_type or "").split(";", 1)[0].strip().lower()
    if mime in IMAGE_TYPES:
        return "image"
    if mime == PDF_TYPE:
        return "pdf"
    if mime.startswith("text/") or mime in TEXT_TYPES:
        return "text"
    suffix = (file_name or "").rsplit(".", 1)[-1].lower() if "." in (file_name or "") else ""
    if mime in GENERIC_TYPES and suffix in TEXT_SUFFIXES:
        return "text"
    if mime in GENERIC_TYPES and suffix == "pdf":
        return "pdf"
    return None


def megabytes(size: int) -> str:
    """A byte count as the user reads it: 3.75 MB, 10 MB, 12.3 MB."""
    return f"{size / 1_000_000:.3g} MB"
