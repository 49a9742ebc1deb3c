"""Every AWS request a function makes is allowed by the policies the template gives that function.

moto does not enforce IAM, so a state that starts writing to a table its policies do not cover passes every
other test and fails only once deployed (AccessDeniedException on every turn). Here every kind of turn is
played through the real state machine; the emulation notes each function's DynamoDB (table, IAM action) pairs
and its other AWS actions (SSM, Step Functions, EventBridge Scheduler...), and each is checked against the
function's SAM policy templates and inline statements in `template.yaml` (DynamoDB per table; the others per
action, whatever the resource). The turns are played once for the module; each test reads what they asked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from support.iam import allowed_actions, other_actions, other_violations, violations
from support.mcp_client import call, connect
from support.mcp_servers import TimeServer
from support.miniapp import act, init_data, state
from support.stack import Stack, clock_kept, fresh

from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, error, last_user_text, text, tool_use
from stepwise_local.mcp_http import LocalMcpEndpoint
from stepwise_local.template import Template


def approve(stack: Stack, user: int, calls: tuple[str, dict[str, Any]], said: str) -> None:
    """A turn whose model asks for an approval-needing call, and the user's tap on Approve."""
    stack.anthropic.script(tool_use(calls), text("Done."))
    name = stack.send(user, said)
    stack.press(user, stack.buttons(user), "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"


def play_secretary(stack: Stack, owner: int, connection: str) -> None:
    """Secretary mode: a contact's message drafted (a tool round), edited by the owner and sent; a second
    one folded into the next suggestion's message (the older one withdrawn); an edit and a deletion of the
    contact's; the owner answering in person; the connection switched off."""
    contact = 7_200_000 + owner
    stack.telegram.add_business_connection(connection, owner)
    stack.telegram.contact_wrote(connection, contact)
    conversation = Conversation(contact, account=owner)

    def writes(words: str) -> dict[str, Any]:
        update = updates.business_message(contact, words, connection_id=connection, first_name="Ann")
        assert stack.emulation.post_update(update)["statusCode"] == 200
        return update

    stack.anthropic.script(tool_use(("list_tasks", {"status": "pending"})), text("Sure."))
    writes("lunch?")
    stack.press(owner, stack.buttons(owner), "Edit")
    prompt = stack.telegram.messages(owner)[-1]
    stack.emulation.post_update(updates.reply_to_bot(owner, "Tomorrow?", prompt))
    stack.press(owner, stack.buttons(owner), "Send")
    stack.emulation.wait_idle(conversation)
    stack.anthropic.script(text("One."), text("Two."))
    first = writes("at 1?")
    stack.emulation.until(lambda: any("One." in shown for shown in stack.replies(owner)), 30)
    writes("or 2?")  # folded: the older suggestion is withdrawn (RequestApproval resumes its turn)
    stack.emulation.until(lambda: any("Two." in shown for shown in stack.replies(owner)), 30)
    message = first["business_message"]
    stack.emulation.post_update(
        {"update_id": first["update_id"] + 1, "edited_business_message": {**message, "text": "at 3?"}}
    )
    deleted = {
        "business_connection_id": connection,
        "chat": message["chat"],
        "message_ids": [message["message_id"]],
    }
    stack.emulation.post_update({"update_id": first["update_id"] + 2, "deleted_business_messages": deleted})
    owner_says = updates.business_message(owner, "see you", connection_id=connection, chat_id=contact)
    stack.emulation.post_update(owner_says)  # withdraws the pending suggestion
    stack.emulation.wait_idle(conversation)
    stack.emulation.post_update(
        updates.business_connection(owner, connection_id=connection, enabled=False, date=2_000_000_000)
    )


def play_an_mcp_client(stack: Stack, user: int) -> None:
    """/connect, an MCP client's reads and writes, a destructive call approved in Telegram, revoking."""
    with LocalMcpEndpoint(stack.emulation) as endpoint:
        token = connect(stack, user)
        assert not call(endpoint.url, token, "add_task", {"title": "from my laptop"}).is_error
        assert not call(endpoint.url, token, "list_tasks", {"status": "all"}).is_error
        task_id = max(int(t["task_id"]) for t in stack.tasks(user))
        assert not call(endpoint.url, token, "delete_task", {"task_id": task_id}).is_error
        stack.press(user, stack.buttons(user), "Approve")
        stack.emulation.wait_idle(user)
        stack.say(user, "/connect revoke laptop")


def play_the_mini_app(stack: Stack, user: int) -> None:
    """The Mini App's page: its data, every action, and an approval answered on the page."""
    with LocalMcpEndpoint(stack.emulation) as endpoint:
        data, url = init_data(user), endpoint.app_url
        stack.say(user, "/connect phone")
        for call, said in (
            (("add_task", {"title": "page one"}), "add page one"),
            (("add_task", {"title": "page two"}), "add page two"),
            (("remember", {"fact": "Likes rooibos"}), "remember rooibos"),
            (("set_reminder", {"text": "drink water", "in_minutes": 30}), "remind me to drink water"),
        ):
            stack.anthropic.script(tool_use(call), text("Done."))
            stack.say(user, said)
        shown = state(url, data).json()
        tasks = sorted(t["task_id"] for t in shown["tasks"])
        (memory,) = [m["id"] for m in shown["memories"] if "rooibos" in m["text"]]
        (reminder,) = [r["reminder_id"] for r in shown["reminders"] if r["text"] == "drink water"]
        for action, target in (
            ("task_done", tasks[-2]),
            ("memory_forget", memory),
            ("reminder_cancel", reminder),
            ("connection_revoke", "phone"),
            ("set_timezone", "Europe/Paris"),
            ("set_voice_replies", True),
        ):
            assert act(url, data, action, target, f"iam-{action}").status_code in (200, 404), action
        stack.anthropic.script(tool_use(("delete_task", {"task_id": tasks[-1]})), text("Deleted."))
        name = stack.send(user, "delete page two")
        stack.buttons(user)
        deadline = time.monotonic() + 20
        while not (waiting := state(url, data).json()["approvals"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert act(url, data, "approve", waiting[0]["approval_id"], "iam-approve").status_code == 200
        assert stack.emulation.wait(name)["status"] == "SUCCEEDED"


def job_answers(request: dict[str, Any]) -> Scripted:
    """The parent turn starts a job with the user's message as its task; the job lists or deletes tasks."""
    asked = json.dumps(request["messages"])
    content = request["messages"][-1]["content"]
    answered = isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)
    if "## Background job" in asked:
        if answered:
            return text("Done.")
        return tool_use(("delete_task", {"task_id": 1}) if "Delete" in asked else ("list_tasks", {}))
    if answered:
        return text("Started.")
    return tool_use(("spawn_job", {"task": last_user_text(request), "title": "IAM"}))


def wait_for_reply(stack: Stack, user: int, contains: str) -> None:
    deadline = time.monotonic() + 30
    while not any(contains in reply for reply in stack.replies(user)):
        assert time.monotonic() < deadline, f"no reply with {contains!r}: {stack.replies(user)}"
        time.sleep(0.02)


def play_jobs(stack: Stack, user: int) -> None:
    """A background job that runs a tool and reports; one that waits for its approval and is stopped."""
    stack.anthropic.default = job_answers
    stack.say(user, "List my tasks.")
    wait_for_reply(stack, user, "is done")
    stack.say(user, "Delete task 1.")
    wait_for_reply(stack, user, "Background job #2")  # its approval request
    stack.say(user, "/jobs")
    stack.say(user, "/jobs stop 2")
    wait_for_reply(stack, user, "was stopped")
    stack.emulation.wait_idle(user)
    stack.anthropic.reset()


def play_a_voice_note(stack: Stack, user: int) -> None:
    """/voice on, then a voice note heard by Amazon Transcribe and answered aloud by Amazon Polly (both on
    moto, patched to write a transcript and to speak Ogg Opus)."""
    stack.emulation.config.env.update({"VOICE_TRANSCRIBER": "transcribe", "VOICE_SPEAKER": "polly"})
    stack.say(user, "/voice on")
    file_id = stack.telegram.add_file(b"OggS" + bytes(300), f"voice/iam-{user}.oga")
    update = updates.voice_message(user, file_id=file_id, duration=5)
    stack.anthropic.script(text("Heard."))
    stack.emulation.post_update(update)
    assert stack.emulation.wait_for_update(user, update["update_id"], timeout=60)["status"] == "SUCCEEDED"
    for name in ("VOICE_TRANSCRIBER", "VOICE_SPEAKER"):
        stack.emulation.config.env.pop(name)


def play_topics(stack: Stack, user: int) -> None:
    """A topic Telegram named (the webhook notes it), its first answer renaming it, and /new."""
    thread = stack.telegram.add_topic(user, "New Thread")
    stack.emulation.post_update(updates.topic_created(user, thread, "New Thread", implicit=True))
    stack.anthropic.script(text("Sure."))
    stack.say(user, "plan the garden", topic=thread)
    stack.say(user, "/new Trip")
    assert sorted(stack.telegram.topics(user).values()) == ["Plan the garden", "Trip"]


def play_every_kind_of_turn(stack: Stack, time_server: TimeServer) -> None:
    user = stack.new_user()
    # A tool of an outside MCP server: CallModel fetches its list, RunTools calls it (its token from SSM).
    stack.emulation.put_parameter("/stepwise/mcp/iam-token", "Bearer iam")
    servers = [{"name": "iam", "url": time_server.url, "token_parameter": "/stepwise/mcp/iam-token"}]
    stack.emulation.put_parameter("/stepwise/mcp/servers", json.dumps(servers))
    stack.anthropic.script(tool_use(("iam__get_current_time", {"timezone": "UTC"})), text("Noon."))
    stack.say(user, "what time is it?")
    stack.emulation.put_parameter("/stepwise/mcp/servers", "[]")
    stack.anthropic.script(text("Hello!"))
    stack.say(user, "hello")  # a plain answer
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add milk")  # a tool round
    play_jobs(stack, user)  # before the approval below deletes the task the second job asks to delete
    approve(stack, user, ("delete_task", {"task_id": 1}), "delete it")  # an approval
    stack.anthropic.script(tool_use(("remember", {"fact": "Likes green tea"})), text("Noted."))
    stack.say(user, "remember that I like green tea")
    stack.anthropic.script(tool_use(("recall", {"query": "tea"})), text("Green tea."))
    stack.say(user, "what do I drink?")
    stack.anthropic.script(tool_use(("set_reminder", {"text": "stretch", "in_minutes": 1})), text("Set."))
    stack.say(user, "remind me in a minute to stretch")
    stack.emulation.post_update(updates.business_connection(user, connection_id=f"bc-iam-{user}"))
    play_secretary(stack, user, f"bc-iam-{user}")
    for command in (
        "/tasks",
        "/reminders",
        "/usage",
        "/memory",
        "/help",
        "/secretary",  # the owner's connections and settings
        "/secretary mute Ada",
        "/secretary unmute Ada",
        "/secretary off",
        "/timezone Europe/Lisbon",
        "/reset",
    ):
        stack.say(user, command)  # answered where the turn starts (the last two by the rules model)
    play_an_mcp_client(stack, user)
    play_the_mini_app(stack, user)
    play_a_voice_note(stack, user)
    play_topics(stack, user)
    stack.emulation.advance_clock(timedelta(minutes=2))
    stack.emulation.fire_due_schedules()  # FireReminder, then a reminder turn
    stack.emulation.wait_idle(user)
    # the fake model writes the summaries (a chat that failed would leave its permissions untried)
    assert stack.emulation.run_summarizer(force=True)["failed"] == []
    stack.anthropic.always(error(500))
    stack.say(user, "tell me a joke")  # the model down: UseFallback, then FailTurn


@pytest.fixture(scope="module")
def played(running_stack: Stack, time_server: TimeServer) -> Iterator[Stack]:
    """The shared stack once every kind of turn has been played on it (its clock and schedules restored
    after the module's tests)."""
    with fresh(running_stack) as stack, clock_kept(stack):
        play_every_kind_of_turn(stack, time_server)
        yield stack


def test_every_function_has_the_dynamodb_and_other_aws_permissions_its_code_uses(played: Stack) -> None:
    """One test, not two: a module's fixture is built on every worker that runs one of its tests (the play
    takes about 24 s)."""
    used = played.emulation.dynamodb_actions
    functions = {function for function, _, _ in used}
    assert {"WebhookFunction", "LoadContextFunction", "CallModelFunction", "RunToolsFunction"} <= functions
    assert {"RequestApprovalFunction", "FinishTurnFunction", "FireReminderFunction"} <= functions
    assert {"UseFallbackFunction", "SummarizeFunction", "McpFunction", "AppFunction"} <= functions
    assert ("RunToolsFunction", "RemoteToolsTable", "dynamodb:BatchGetItem") in used
    assert ("CallModelFunction", "RemoteToolsTable", "dynamodb:UpdateItem") in used
    assert ("RecoverChatFunction", "JobsTable", "dynamodb:UpdateItem") in used  # a stopped job's report
    assert violations(Template(), used) == []
    other = played.emulation.aws_actions
    assert {
        ("WebhookFunction", "states:StartExecution"),
        ("RunToolsFunction", "scheduler:CreateSchedule"),
        ("RunToolsFunction", "states:StartExecution"),  # spawn_job
        ("LoadContextFunction", "states:StopExecution"),  # /jobs stop
        ("LoadContextFunction", "transcribe:StartTranscriptionJob"),  # a voice note
        ("LoadContextFunction", "s3:PutObject"),
        ("FinishTurnFunction", "polly:SynthesizeSpeech"),  # its spoken answer
    } <= other
    assert ("WebhookFunction", "states:SendTaskSuccess") in other, "the press resumes the turn"
    assert ("AppFunction", "states:SendTaskSuccess") in other, "so does Approve on the page"
    assert ("RequestApprovalFunction", "states:SendTaskSuccess") in other, "a folded suggestion's"
    assert other_violations(Template(), other) == []


def test_the_check_finds_an_action_no_policy_allows() -> None:
    template = Template()
    allowed = allowed_actions(template, "CallModelFunction")
    assert "dynamodb:PutItem" in allowed["TurnsTable"]
    assert "dynamodb:DeleteItem" not in allowed.get("TurnsTable", set())
    found = violations(
        template,
        {
            ("CallModelFunction", "TurnsTable", "dynamodb:PutItem"),
            ("CallModelFunction", "TasksTable", "dynamodb:DeleteItem"),
            ("WebhookFunction", "InboxTable", "dynamodb:ConditionCheckItem"),
        },
    )
    assert found == ["CallModelFunction: dynamodb:DeleteItem on TasksTable"], json.dumps(found)
    assert "scheduler:CreateSchedule" in other_actions(template, "RunToolsFunction")
    assert other_violations(
        template,
        {("RunToolsFunction", "scheduler:CreateSchedule"), ("CallModelFunction", "states:SendTaskSuccess")},
    ) == ["CallModelFunction: states:SendTaskSuccess"]
