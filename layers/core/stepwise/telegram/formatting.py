"""Turn the model's Markdown into Telegram messages: HTML chunks of at most 4096 characters.

Markdown text is converted with ``chatgpt-md-converter`` (``telegram_format``); fenced code blocks
are parsed and rendered here so that an over-long block can be split with its fence re-opened in
every piece. Every converted chunk is checked against Telegram's HTML rules and, should the
converter ever produce something Telegram would reject, that chunk falls back to escaped text.
Lengths are counted in UTF-16 code units, as Telegram counts them (never less than ``len``).

Only ``http``, ``https`` and ``mailto`` addresses become links: any other (``tg://``, ``javascript:``, a
relative one) stays text, the link's words followed by its address in brackets (see docs/security.md).
"""

import html as html_entities
import re
from collections.abc import Sequence
from functools import lru_cache
from html.parser import HTMLParser
from typing import NamedTuple

from chatgpt_md_converter import telegram_format

from stepwise.telegram.html_escape import escape_html

MAX_MESSAGE_LENGTH = 4096
EMPTY_REPLY_PLACEHOLDER = "(empty reply)"
_MIN_LIMIT = 64
_MAX_LANGUAGE_LENGTH = 32

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
_LANG_ALIASES = {"c++": "cpp", "c#": "csharp", "f#": "fsharp", "objective-c": "objectivec"}
# Finer and finer split points for a text block that does not fit: lines, sentences, words.
_SPLIT_LEVELS = (
    re.compile(r"(\n)"),
    re.compile(r"(?<=[.!?…;:])(\s+)"),
    re.compile(r"(\s+)"),
)
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]+|#[xX][0-9a-fA-F]+);")
_LINK = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)
_LINKABLE = re.compile(r"(?:https?://|mailto:)[^\s]", re.I)  # the addresses that may become links
_ALLOWED_TAGS = frozenset(
    {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a"}
    | {"blockquote", "tg-spoiler", "span"}
)


class OutgoingChunk(NamedTuple):
    """One Telegram message: ``html`` for parse_mode HTML, ``plain`` as the no-markup fallback."""

    html: str
    plain: str


class _Unit(NamedTuple):
    """A piece of the reply: Markdown text, or the body of a code block when ``lang`` is set."""

    sep: str
    text: str
    lang: str | None = None


def render_reply(markdown: str, *, limit: int = MAX_MESSAGE_LENGTH) -> list[OutgoingChunk]:
    """Split Markdown at sensible boundaries and render each piece to Telegram HTML and plain text."""
    if limit < _MIN_LIMIT:
        raise ValueError(f"limit must be at least {_MIN_LIMIT}")
    units: list[_Unit] = []
    for unit in _parse_blocks(markdown.replace("\r\n", "\n").replace("\r", "\n")):
        if _fits([unit], limit):
            units.append(unit)
        elif unit.lang is None:
            units.extend(_split_text(unit.text, unit.sep, 0, limit))
        else:
            units.extend(_split_code(unit, limit))
    chunks = []
    for group in _pack(units, limit):
        html, plain = _render_units(group)
        if html.strip() and plain.strip():
            chunks.append(OutgoingChunk(html=html, plain=plain))
    return chunks or [OutgoingChunk(html=EMPTY_REPLY_PLACEHOLDER, plain=EMPTY_REPLY_PLACEHOLDER)]


def _parse_blocks(markdown: str) -> list[_Unit]:
    """Cut Markdown into paragraphs and fenced code blocks (an unclosed fence runs to the end)."""
    units: list[_Unit] = []
    paragraph: list[str] = []
    blank_before = False
    lines = markdown.split("\n")
    index = 0

    def separator() -> str:
        return "\n\n" if blank_before else "\n"

    while index < len(lines):
        line = lines[index]
        opening = _FENCE_OPEN.match(line)
        if opening is None and line.strip():
            paragraph.append(line)
            index += 1
            continue
        if paragraph:
            units.append(_Unit(separator(), "\n".join(paragraph)))
            paragraph = []
            blank_before = False
        if opening is None:
            blank_before = True
            index += 1
            continue
        fence = opening.group("fence")
        body: list[str] = []
        index += 1
        while index < len(lines) and not _closes(lines[index], fence):
            body.append(lines[index])
            index += 1
        index += 1
        code = "\n".join(body)
        if code.strip():
            units.append(_Unit(separator(), code, _language(opening.group("info"))))
        blank_before = False
    if paragraph:
        units.append(_Unit(separator(), "\n".join(paragraph)))
    return units


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _language(info: str) -> str:
    words = info.split()
    name = words[0].lower() if words else ""
    name = _LANG_ALIASES.get(name, name)
    return re.sub(r"[^a-z0-9_-]", "", name)[:_MAX_LANGUAGE_LENGTH]


def _split_text(text: str, sep: str, level: int, limit: int) -> list[_Unit]:
    """Split a text that does not fit at the coarsest boundary that makes every piece fit."""
    if _fits([_Unit("", text)], limit):
        return [_Unit(sep, text)]
    if level == len(_SPLIT_LEVELS):
        return _hard_cut(text, sep, limit)
    parts = _SPLIT_LEVELS[level].split(text)
    if len(parts) == 1:
        return _split_text(text, sep, level + 1, limit)
    units: list[_Unit] = []
    for position in range(0, len(parts), 2):
        piece_sep = sep if position == 0 else parts[position - 1]
        units.extend(_split_text(parts[position], piece_sep, level + 1, limit))
    return units


def _hard_cut(text: str, sep: str, limit: int) -> list[_Unit]:
    """Last resort: cut a word into the longest prefixes that fit."""
    units: list[_Unit] = []
    rest = text
    while rest:
        if _fits([_Unit("", rest)], limit):
            units.append(_Unit(sep, rest))
            break
        low, high = 1, min(len(rest) - 1, 2 * limit)
        while low < high:
            middle = (low + high + 1) // 2
            if _fits([_Unit("", rest[:middle])], limit):
                low = middle
            else:
                high = middle - 1
        units.append(_Unit(sep, rest[:low]))
        rest, sep = rest[low:], ""
    return units


def _split_code(unit: _Unit, limit: int) -> list[_Unit]:
    """Split a code block by lines (long lines by characters); each piece becomes its own block."""
    lang = unit.lang or ""
    if _tg_len(_render_code("", lang)[0]) > limit // 4:
        lang = ""
    budget = limit - _tg_len(_render_code("", lang)[0])
    groups: list[str] = []
    current: list[str] = []
    used = 0
    for line in unit.text.split("\n"):
        for piece in _cut_line(line, budget):
            cost = _tg_len(escape_html(piece)) + (1 if current else 0)
            if current and used + cost > budget:
                groups.append("\n".join(current))
                current, used, cost = [], 0, cost - 1
            current.append(piece)
            used += cost
    if current:
        groups.append("\n".join(current))
    return [_Unit(unit.sep if n == 0 else "\n", group, lang) for n, group in enumerate(groups)]


def _cut_line(line: str, budget: int) -> list[str]:
    """Cut an over-long code line after whitespace where possible, else between characters."""
    if _tg_len(escape_html(line)) <= budget:
        return [line]
    pieces: list[str] = []
    current, used = "", 0
    for token in re.findall(r"\S+\s*|\s+", line):
        for part in _cut_token(token, budget):
            cost = _tg_len(escape_html(part))
            if current and used + cost > budget:
                pieces.append(current)
                current, used = "", 0
            current += part
            used += cost
    pieces.append(current)
    return pieces


def _cut_token(token: str, budget: int) -> list[str]:
    parts: list[str] = []
    start, used = 0, 0
    for position, char in enumerate(token):
        cost = _tg_len(escape_html(char))
        if used + cost > budget:
            parts.append(token[start:position])
            start, used = position, 0
        used += cost
    parts.append(token[start:])
    return parts


def _pack(units: list[_Unit], limit: int) -> list[list[_Unit]]:
    """Group consecutive units (each fitting alone) greedily into chunks that fit."""
    costs = [_tg_len(_render_units([unit])[0]) for unit in units]
    chunks: list[list[_Unit]] = []
    start = 0
    while start < len(units):
        end, estimate = start + 1, costs[start]
        while end < len(units) and estimate + len(units[end].sep) + costs[end] <= limit:
            estimate += len(units[end].sep) + costs[end]
            end += 1
        while end - start > 1 and not _fits(units[start:end], limit):
            end -= 1
        chunks.append(units[start:end])
        start = end
    return chunks


def _fits(units: Sequence[_Unit], limit: int) -> bool:
    html, plain = _render_units(units)
    return _tg_len(html) <= limit and _tg_len(plain) <= limit


def _render_units(units: Sequence[_Unit]) -> tuple[str, str]:
    """Render a chunk: runs of text units go through the converter together, code blocks here."""
    segments: list[tuple[str, str, str | None]] = []
    for unit in units:
        if segments and unit.lang is None and segments[-1][2] is None:
            sep, text, _ = segments[-1]
            segments[-1] = (sep, text + unit.sep + unit.text, None)
        else:
            segments.append((unit.sep, unit.text, unit.lang))
    html_parts: list[str] = []
    plain_parts: list[str] = []
    for sep, text, lang in segments:
        html, plain = _render_markdown(text) if lang is None else _render_code(text, lang)
        if not html:
            continue
        if html_parts:
            html_parts.append(sep)
            plain_parts.append(sep)
        html_parts.append(html)
        plain_parts.append(plain)
    return "".join(html_parts).strip(), "".join(plain_parts).strip()


@lru_cache(maxsize=1024)
def _render_markdown(markdown: str) -> tuple[str, str]:
    try:
        html = only_safe_links(telegram_format(markdown).strip())
    except Exception:  # any converter failure falls back to escaped text
        html = None
    if html is None or not _is_telegram_html(html):
        html = escape_html(markdown.strip())
    return html, _plain_text(html)


def only_safe_links(html: str) -> str:
    """Telegram HTML whose links are all http, https or mailto: any other link becomes its words and, when
    they differ, its address in brackets, as text."""

    def unlinked(match: re.Match[str]) -> str:
        href, inner = match.group(1), match.group(2)
        if _LINKABLE.match(html_entities.unescape(href)):
            return match.group(0)
        shown = _plain_text(inner)
        return inner if html_entities.unescape(href) == shown else f"{inner} ({href})"

    return _LINK.sub(unlinked, html)


def _render_code(code: str, lang: str) -> tuple[str, str]:
    body = escape_html(code)
    if lang:
        return f'<pre><code class="language-{lang}">{body}</code></pre>', code
    return f"<pre>{body}</pre>", code


def _tg_len(text: str) -> int:
    """Length in UTF-16 code units, as Telegram counts."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _is_telegram_html(html: str) -> bool:
    checker = _TelegramHtmlChecker()
    checker.feed(html)
    checker.close()
    return checker.ok and not checker.stack


def _plain_text(html: str) -> str:
    extractor = _PlainTextExtractor()
    extractor.feed(html)
    extractor.close()
    return "".join(extractor.parts).strip()


class _TelegramHtmlChecker(HTMLParser):
    """Accepts only Telegram's tags, properly nested, with every ``<`` and ``&`` escaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.ok = True
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or ""
        if tag not in _ALLOWED_TAGS or not _attrs_allowed(tag, attrs) or not _entities_ok(raw):
            self.ok = False
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ok = False

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.ok = False

    def handle_data(self, data: str) -> None:
        if "<" in data or "&" in data:
            self.ok = False

    def handle_entityref(self, name: str) -> None:
        if name not in ("lt", "gt", "amp", "quot"):
            self.ok = False

    def handle_comment(self, data: str) -> None:
        self.ok = False

    def handle_decl(self, decl: str) -> None:
        self.ok = False

    def handle_pi(self, data: str) -> None:
        self.ok = False

    def unknown_decl(self, data: str) -> None:
        self.ok = False


def _attrs_allowed(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    names = {name for name, _ in attrs}
    values = dict(attrs)
    if tag == "a":  # a link other than http, https or mailto fails the check: the chunk becomes text
        return names == {"href"} and bool(_LINKABLE.match(values["href"] or ""))
    if tag == "code":
        return not names or (names == {"class"} and (values["class"] or "").startswith("language-"))
    if tag == "span":
        return names == {"class"} and values["class"] == "tg-spoiler"
    if tag == "blockquote":
        return names <= {"expandable"}
    return not names


def _entities_ok(raw: str) -> bool:
    if "<" in raw[1:]:
        return False
    return all(_ENTITY.match(raw, match.start()) for match in re.finditer("&", raw))


class _PlainTextExtractor(HTMLParser):
    """Visible text of Telegram HTML, with a link's address after its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._links: list[tuple[str, int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._links.append((dict(attrs).get("href") or "", len(self.parts)))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._links:
            href, start = self._links.pop()
            text = "".join(self.parts[start:]).strip()
            if href and href != text:
                self.parts.append(f" ({href})")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)
