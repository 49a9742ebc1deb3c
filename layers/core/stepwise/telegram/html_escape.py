"""Escaping text for Telegram HTML: its own module, for the states that write HTML without rendering a
reply (the approval request) and so need none of `stepwise.telegram.formatting`."""


def escape_html(text: str, *, quote: bool = False) -> str:
    """Escape ``&``, ``<`` and ``>`` (and ``"`` when ``quote``) for Telegram HTML."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace('"', "&quot;") if quote else escaped
