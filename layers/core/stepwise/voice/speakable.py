"""The words of a Markdown reply as they are read out: no code, no URLs, no markup, cut to a length."""

from __future__ import annotations

import re

CODE_NOTE = "(code in the text)"
ELLIPSIS = "…"
_ENDINGS = ".!?…:;,"

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])")
_RULE = re.compile(r"^([-*_=])(?:\s*\1){2,}$")  # thematic breaks and setext heading underlines
_REFERENCE = re.compile(r"^\[[^\]]+\]:\s*\S+")
_QUOTE = re.compile(r"^(?:>\s?)+")
_HEADING = re.compile(r"^#{1,6}(?:\s+|$)")
_CLOSING_HASHES = re.compile(r"\s+#+$")
_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?$")

_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_IMAGE = re.compile(r"!\[[^\]]*\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)")
_REFERENCE_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(?:https?://|mailto:)[^>\s]+>")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_URL = re.compile(r"\b(?:https?://|www\.)\S+?(?=[.,;:!?'\")\]]*(?:\s|$))")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")

_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
_SPACE_BEFORE_MARK = re.compile(r"\s+([.,!?;:…])")
_COMMA_BEFORE_MARK = re.compile(r",+(?=[.!?;:,])")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def speakable_text(markdown: str, max_chars: int) -> str:
    """The words of `markdown` to be read out, at most `max_chars` long: code blocks become one short note,
    links their text; inline code, URLs, HTML tags and Markdown markers go; headings, list items, table rows
    and paragraphs end in a full stop so the voice pauses. A longer text is cut at the last sentence end
    (or else word) before the limit and ends in "…". "" when nothing is left to say."""
    if max_chars <= 0:
        return ""
    text = _COMMENT.sub("", markdown.replace("\r\n", "\n").replace("\r", "\n"))
    text = _ESCAPE.sub(lambda m: _hide(m.group(1)), text)
    text = _without_code_blocks(text)
    spoken = _SPACES.sub(" ", " ".join(_blocks(text.split("\n")))).strip()
    spoken = _EMPTY_BRACKETS.sub("", spoken)
    spoken = _SPACE_BEFORE_MARK.sub(r"\1", spoken)
    spoken = _COMMA_BEFORE_MARK.sub("", spoken).strip(" ,;:")
    spoken = _SPACES.sub(" ", _unhide(spoken)).strip()
    if spoken and all(char in _ENDINGS for char in spoken):
        return ""
    return _cut(spoken, max_chars)


def _without_code_blocks(text: str) -> str:
    """Fenced code blocks out: the first becomes `CODE_NOTE` (a paragraph of its own), the rest nothing."""
    seen = False

    def replace(_: re.Match[str]) -> str:
        nonlocal seen
        note = "" if seen else CODE_NOTE
        seen = True
        return f"\n\n{note}\n\n"

    return _FENCE.sub(replace, text)


def _blocks(lines: list[str]) -> list[str]:
    """The spoken blocks: paragraphs (their lines joined), headings, list items and table rows."""
    blocks: list[str] = []
    paragraph: list[str] = []
    in_table = False

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(_full_stop(" ".join(paragraph)))
            paragraph.clear()

    for index, raw in enumerate(lines):
        line = _QUOTE.sub("", raw.strip()).strip()
        if not line or _RULE.match(line) or _REFERENCE.match(line):
            end_paragraph()
            in_table = False
            continue
        if _TABLE_SEPARATOR.match(line):
            in_table = True
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if "|" in line and (in_table or line.startswith("|") or _TABLE_SEPARATOR.match(following)):
            end_paragraph()
            cells = [_inline(cell) for cell in line.strip("|").split("|")]
            row = ", ".join(cell for cell in cells if cell)
            if row:
                blocks.append(_full_stop(row))
            continue
        in_table = False
        marker = _HEADING.match(line) or _ITEM.match(line)
        if marker:
            end_paragraph()
            content = _inline(_CLOSING_HASHES.sub("", line[marker.end() :]))
            if content:
                blocks.append(_full_stop(content))
            continue
        content = _inline(line)
        if content:
            paragraph.append(content)
    end_paragraph()
    return blocks


def _inline(text: str) -> str:
    """A line without inline code, images, link targets, URLs, HTML tags and emphasis markers."""
    text = _INLINE_CODE.sub("", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _REFERENCE_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub("", text)
    text = _TAG.sub(" ", text)
    text = _URL.sub("", text)
    text = _STRONG.sub(r"\2", text)
    text = _STRIKE.sub(r"\1", text)
    text = _EM_STAR.sub(r"\1", text)
    text = _EM_UNDERSCORE.sub(r"\1", text)
    return _SPACES.sub(" ", text).strip()


def _full_stop(block: str) -> str:
    """`block` ending in punctuation, so that the voice pauses before the next one."""
    block = block.strip()
    return block if not block or block[-1] in _ENDINGS else f"{block}."


def _cut(text: str, max_chars: int) -> str:
    """`text` if it fits, else its start up to the last sentence end (when that keeps at least half) or the
    last whole word, with an ellipsis, at most `max_chars` in all."""
    if len(text) <= max_chars:
        return text
    room = max_chars - len(ELLIPSIS)
    if room <= 0:
        return ELLIPSIS[:max_chars]
    ends = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() <= room]
    if ends and ends[-1] >= room // 2:
        return text[: ends[-1]] + ELLIPSIS
    space = text.rfind(" ", 0, room + 1)
    head = text[:space] if space > 0 else text[:room]
    head = head.rstrip(" ,;:(-\u2013\u2014")
    return (head or text[:room]) + ELLIPSIS


# Escaped characters (\* \_ \#) stand for themselves: they are hidden from the markup patterns as code points
# of Unicode's private use area and shown again at the end.
_HIDDEN = 0xE000


def _hide(char: str) -> str:
    return chr(_HIDDEN + ord(char))


def _unhide(text: str) -> str:
    return re.sub("[\ue000-\ue07f]", lambda m: chr(ord(m.group()) - _HIDDEN), text)
