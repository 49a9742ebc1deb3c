"""The local Telegram's side of the Mini App: what Telegram's app does when a `web_app` button is pressed.

Telegram opens the button's URL with the user's signed `initData` in the URL's fragment
(`#tgWebAppData=…&tgWebAppVersion=…`), and its `telegram-web-app.js` hands that to the page as
`Telegram.WebApp.initData`. Locally, `launch_url` builds that link (the data signed with the local bot token,
as Telegram signs it: `stepwise.miniapp.init_data.sign`, the counterpart of the server's check), and the
local server (`stepwise_local.mcp_http`) serves `STAND_IN_SCRIPT` in place of Telegram's script, pointing the
page and its Content-Security-Policy at it (`with_stand_in`), so that an ordinary browser opens the page
signed in with no request off the machine. The fragment never reaches a server; the data is good for the
hour the page's check allows.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js"  # what the page loads inside Telegram
STAND_IN_PATH = "/js/telegram-web-app.js"  # where the local server serves its stand-in
WEB_APP_VERSION = "9.0"
QUERY_ID = "AAHdF6IQAAAAAN0XohDhrOrc"  # a query id shaped as Telegram's

# Telegram.WebApp as the page uses it: the initData the link carries, the colour scheme of the browser, and
# showConfirm as the browser's own dialog, openLink as a new tab (a sign-in page: docs/accounts.md). Nothing
# else is loaded and nothing is sent anywhere.
STAND_IN_SCRIPT = """\
// make chat's stand-in for Telegram's telegram-web-app.js (docs/app.md#locally): the page gets the initData
// the link carries in its fragment (#tgWebAppData=...), as Telegram's own script reads it.
(function () {
  "use strict";
  const launch = new URLSearchParams(window.location.hash.slice(1));
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  window.Telegram = { WebApp: {
    initData: launch.get("tgWebAppData") || "",
    version: launch.get("tgWebAppVersion") || "6.0",
    platform: "local",
    colorScheme: dark ? "dark" : "light",
    themeParams: {},
    ready: function () {},
    expand: function () {},
    showConfirm: function (message, callback) { callback(window.confirm(message)); },
    openLink: function (url) { window.open(url, "_blank", "noopener"); },
    HapticFeedback: { notificationOccurred: function () {} },
  } };
})();
"""


def init_data(
    user_id: int,
    bot_token: str,
    *,
    first_name: str = "Local",
    auth_date: int | None = None,
    extra: dict[str, str] | None = None,
) -> str:
    """Telegram.WebApp.initData for `user_id`, signed with `bot_token` as Telegram signs it (a wrong token
    forges it)."""
    from stepwise.miniapp.init_data import sign  # the layer is on sys.path once the stack runs

    fields = {
        "query_id": QUERY_ID,
        "user": json.dumps({"id": user_id, "first_name": first_name, "language_code": "en"}),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        **(extra or {}),
    }
    fields["hash"] = sign(fields, bot_token)
    return urlencode(fields)


def launch_url(page_url: str, data: str) -> str:
    """The link Telegram opens for a `web_app` button: the page, with the signed data in its fragment."""
    fragment = urlencode(
        {"tgWebAppData": data, "tgWebAppVersion": WEB_APP_VERSION, "tgWebAppPlatform": "local"}
    )
    return f"{page_url.split('#', 1)[0]}#{fragment}"


def with_stand_in(response: dict[str, Any], script_url: str) -> dict[str, Any]:
    """The page's answer with Telegram's script swapped for the stand-in at `script_url`, in the HTML and in
    the Content-Security-Policy (which then allows that script instead); any other answer as it is."""
    headers = {str(name).lower(): str(value) for name, value in (response.get("headers") or {}).items()}
    body = response.get("body")
    if not headers.get("content-type", "").startswith("text/html") or not isinstance(body, str):
        return response
    if response.get("isBase64Encoded"):
        return response
    policy = headers.get("content-security-policy")
    if policy is not None:
        headers["content-security-policy"] = policy.replace(TELEGRAM_SCRIPT, script_url)
    return {**response, "headers": headers, "body": body.replace(TELEGRAM_SCRIPT, script_url)}
