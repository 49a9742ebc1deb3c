"""Tests for render_reply: Markdown to Telegram HTML chunks of at most 4096 characters."""

from __future__ import annotations

import re

import pytest

from stepwise.telegram.formatting import MAX_MESSAGE_LENGTH, OutgoingChunk, escape_html, render_reply
from stepwise_local.telegram_server import parse_telegram_html


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def assert_sendable(chunks: list[OutgoingChunk], limit: int = MAX_MESSAGE_LENGTH) -> None:
    """Every chunk is non-empty, within the limit and valid Telegram HTML."""
    assert chunks
    for chunk in chunks:
        assert chunk.html.strip() and chunk.plain.strip()
        assert utf16_len(chunk.html) <= limit
        assert utf16_len(chunk.plain) <= limit
        parse_telegram_html(chunk.html)


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+[0-9]+", text)


def all_plain(chunks: list[OutgoingChunk]) -> str:
    return "\n".join(chunk.plain for chunk in chunks)


@pytest.mark.parametrize("markdown", ["", "   ", "\n\n\t\n"])
def test_empty_input_gives_a_placeholder(markdown: str) -> None:
    # Given an empty or blank reply
    # When it is rendered
    chunks = render_reply(markdown)
    # Then one short placeholder chunk comes out
    assert chunks == [OutgoingChunk(html="(empty reply)", plain="(empty reply)")]


def test_special_characters_arrive_intact() -> None:
    # Given text with the HTML-special characters
    # When it is rendered
    [chunk] = render_reply("a < b && c > d")
    # Then they are escaped in HTML and raw in plain
    assert chunk.html == "a &lt; b &amp;&amp; c &gt; d"
    assert chunk.plain == "a < b && c > d"
    assert parse_telegram_html(chunk.html) == "a < b && c > d"


def test_literal_entities_and_tags_in_model_text_are_not_interpreted() -> None:
    # Given model text that looks like HTML
    [chunk] = render_reply("Use <b>tags</b> &amp; entities")
    # Then the reader sees exactly what the model wrote
    assert chunk.plain == "Use <b>tags</b> &amp; entities"
    assert parse_telegram_html(chunk.html) == "Use <b>tags</b> &amp; entities"


def test_inline_markup_is_rendered() -> None:
    # Given bold, italic, inline code and a link
    markdown = "**bold** and *italic* and `x < y` and [docs](https://example.org/?a=1&b=2)"
    # When it is rendered
    [chunk] = render_reply(markdown)
    # Then Telegram tags are used and the plain variant keeps the text and the address
    assert "<b>bold</b>" in chunk.html
    assert "<i>italic</i>" in chunk.html
    assert "<code>x &lt; y</code>" in chunk.html
    assert '<a href="https://example.org/?a=1&amp;b=2">docs</a>' in chunk.html
    assert chunk.plain == "bold and italic and x < y and docs (https://example.org/?a=1&b=2)"


def test_code_block_keeps_its_language_and_escapes_code() -> None:
    # Given a fenced code block
    markdown = "Look:\n\n```python\nif a < b and c > d:\n    print('&')\n```"
    # When it is rendered
    [chunk] = render_reply(markdown)
    # Then it becomes pre/code with the language class and escaped content
    assert chunk.html == (
        'Look:\n\n<pre><code class="language-python">if a &lt; b and c &gt; d:\n'
        "    print('&amp;')</code></pre>"
    )
    assert chunk.plain == "Look:\n\nif a < b and c > d:\n    print('&')"


def test_long_text_is_split_at_paragraphs_without_losing_words() -> None:
    # Given ~10_000 characters in paragraphs of about 400
    paragraphs = [" ".join(f"word{p}x{i}" for i in range(45)) + "." for p in range(25)]
    markdown = "\n\n".join(paragraphs)
    assert len(markdown) > 10_000
    # When it is rendered
    chunks = render_reply(markdown)
    # Then there are several sendable chunks, each made of whole paragraphs, with every word in order
    assert len(chunks) >= 3
    assert_sendable(chunks)
    for chunk in chunks:
        assert chunk.plain.startswith("word") and chunk.plain.endswith(".")
    assert words(all_plain(chunks)) == words(markdown)


def test_one_huge_paragraph_is_split_at_sentence_boundaries() -> None:
    # Given a single paragraph of many sentences and no line breaks
    markdown = " ".join(f"Sentence number{n} is here and it is long enough." for n in range(400))
    # When it is rendered
    chunks = render_reply(markdown)
    # Then every chunk but the last ends at a sentence end
    assert len(chunks) > 1
    assert_sendable(chunks)
    assert all(chunk.plain.endswith(".") for chunk in chunks)
    assert words(all_plain(chunks)) == words(markdown)


def test_long_code_block_is_split_with_the_fence_reopened() -> None:
    # Given a code block much longer than one message, between two paragraphs
    lines = [f"value{n} = compute({n}) < limit && ok  # line{n}" for n in range(400)]
    markdown = "Before.\n\n```python\n" + "\n".join(lines) + "\n```\n\nAfter."
    # When it is rendered
    chunks = render_reply(markdown)
    # Then every piece of code is a complete pre/code block and no line is lost or cut
    assert len(chunks) >= 4
    assert_sendable(chunks)
    assert chunks[0].html.startswith("Before.")
    assert chunks[-1].html.endswith("After.")
    code_lines: list[str] = []
    for chunk in chunks:
        blocks = re.findall(r'<pre><code class="language-python">(.*?)</code></pre>', chunk.html, re.S)
        assert len(blocks) == 1
        code_lines.extend(parse_telegram_html(blocks[0]).split("\n"))
    assert code_lines == lines


def test_long_single_word_is_hard_cut() -> None:
    # Given a 10_000 character "word" with escapable characters
    word = "a<b&" * 2500
    # When it is rendered
    chunks = render_reply(word)
    # Then it is cut into sendable pieces that together are the word
    assert len(chunks) > 2
    assert_sendable(chunks)
    assert "".join(chunk.plain for chunk in chunks) == word


def test_long_unbroken_code_line_is_cut() -> None:
    # Given a code block with one enormous line
    line = "x" * 9000
    # When it is rendered
    chunks = render_reply(f"```\n{line}\n```")
    # Then each piece is a pre block and nothing is lost
    assert_sendable(chunks)
    assert all(chunk.html.startswith("<pre>") for chunk in chunks)
    assert "".join(chunk.plain for chunk in chunks) == line


def test_length_is_counted_in_utf16_units() -> None:
    # Given emoji (two UTF-16 units each)
    markdown = "😀" * 5000
    # When it is rendered
    chunks = render_reply(markdown)
    # Then no chunk exceeds Telegram's limit as Telegram counts it
    assert_sendable(chunks)
    assert "".join(chunk.plain for chunk in chunks) == markdown


def test_malformed_converter_output_falls_back_to_escaped_text() -> None:
    # Given a link whose address contains a quote (the converter would emit a broken attribute)
    markdown = '[click](https://example.org/"onmouseover)'
    # When it is rendered
    [chunk] = render_reply(markdown)
    # Then the chunk is still valid Telegram HTML and keeps the text
    parse_telegram_html(chunk.html)
    assert "click" in chunk.plain


def test_unclosed_fence_runs_to_the_end() -> None:
    # Given a code block the model never closed
    [chunk] = render_reply("Code:\n```js\nlet a = 1 < 2;")
    # Then it is rendered as a closed code block
    assert chunk.html == 'Code:\n<pre><code class="language-js">let a = 1 &lt; 2;</code></pre>'


MIXED = """# Plan for day1

Here is **what2 we** do, with `inline3 <code>` and a [link4](https://example.org/a?b=1&c=2).

- item5 one & more
- item6 *two*
  - nested7 item

> quote8 with **bold9**

```c++
int main10() { return a < b; }
```

1. first11
2. second12 ||spoiler13||
"""


@pytest.mark.parametrize("limit", [64, 120, 500, MAX_MESSAGE_LENGTH])
def test_mixed_markdown_is_sendable_at_any_limit(limit: int) -> None:
    # Given a typical model answer with every kind of markup
    # When it is rendered with a (possibly tiny) limit
    chunks = render_reply(MIXED * 3, limit=limit)
    # Then every chunk is sendable and every word survives in order
    assert_sendable(chunks, limit)
    assert words(all_plain(chunks)) == words(MIXED * 3)


def test_escape_html() -> None:
    # Given text with special characters, When it is escaped, Then only &, <, > (and " on request) change
    assert escape_html('a < b & "c" > d') == 'a &lt; b &amp; "c" &gt; d'
    assert escape_html('"q"', quote=True) == "&quot;q&quot;"


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("[open](tg://resolve?domain=x&start=secret)", "open (tg://resolve?domain=x&amp;start=secret)"),
        ("[run](javascript:alert(1))", "run (javascript:alert(1))"),
        ("[here](example.com/page)", "here (example.com/page)"),
        ("[ship](ftp://example.com/f)", "ship (ftp://example.com/f)"),
        ("**[tg://x](tg://x)**", "<b>tg://x</b>"),  # the words are the address: said once
        ("[**bold**](tg://x)", "<b>bold</b> (tg://x)"),
    ],
)
def test_only_http_https_and_mailto_become_links_and_any_other_address_stays_text(
    markdown: str, html: str
) -> None:
    # Given a link the model was led to write, to an address Telegram would open without a browser
    [chunk] = render_reply(markdown)
    # Then it is text: its words and its address, and no <a> at all
    assert chunk.html == html
    assert "<a " not in chunk.html
    parse_telegram_html(chunk.html)


@pytest.mark.parametrize(
    "markdown",
    ["[site](https://example.org/a?b=1&c=2)", "[plain](http://example.org)", "[mail](mailto:a@example.org)"],
)
def test_http_https_and_mailto_links_stay_links(markdown: str) -> None:
    [chunk] = render_reply(markdown)
    assert chunk.html.startswith('<a href="') and chunk.html.endswith("</a>")


def test_converter_output_with_another_link_fails_the_check_and_becomes_escaped_text() -> None:
    from stepwise.telegram.formatting import _is_telegram_html

    assert _is_telegram_html('<a href="https://example.org">x</a>')
    assert not _is_telegram_html('<a href="tg://resolve?domain=x">x</a>')
