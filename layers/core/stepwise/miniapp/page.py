"""The page itself: one HTML answer with its script and style inline, under a strict Content-Security-Policy
that allows exactly those two (by their SHA-256), Telegram's `telegram-web-app.js`, and requests to its own
origin. No build step: the files are served as written (`functions/app/page/`)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js"
SCRIPT_SLOT = "/*APP_JS*/"
STYLE_SLOT = "/*APP_CSS*/"


@dataclass(frozen=True)
class Page:
    """The page's HTML and the headers it is served with."""

    html: str
    headers: dict[str, str]

    def response(self) -> dict[str, object]:
        return {"statusCode": 200, "headers": self.headers, "body": self.html}


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def build_page(directory: Path) -> Page:
    """`index.html` with `app.js` and `app.css` of `directory` inlined, and its headers."""
    script = (directory / "app.js").read_text()
    style = (directory / "app.css").read_text()
    html = (directory / "index.html").read_text()
    if SCRIPT_SLOT not in html or STYLE_SLOT not in html:
        raise ValueError("index.html has no slot for its script or style")
    html = html.replace(SCRIPT_SLOT, script).replace(STYLE_SLOT, style)
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_digest(script)} {TELEGRAM_SCRIPT}",
            f"style-src {_digest(style)}",
            "connect-src 'self'",
            "img-src 'self' data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors https://web.telegram.org",
        ]
    )
    headers = {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": policy,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
    }
    return Page(html, headers)
