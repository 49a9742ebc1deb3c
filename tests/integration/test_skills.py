"""Skills through the real state machine: the model sees their names in the cached system prompt, opens one
with use_skill (audited like any tool), the prefix stays byte-stable, and /skills lists them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack
from support.tools import ROOT

from stepwise_local.anthropic_server import text, tool_use


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def prefix(request: dict[str, Any]) -> str:
    return json.dumps({"tools": request["tools"], "system": request["system"]}, sort_keys=True)


def test_the_model_opens_a_shipped_skill_and_reads_its_resource(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("use_skill", {"name": "trip-planning"})),
        tool_use(("use_skill", {"name": "trip-planning", "resource": "checklist.md"})),
        text("When do you leave?"),
    )
    stack.say(user, "I'm going to Lisbon in March, help me prepare")
    first, second, third = stack.anthropic.requests
    system = first["system"][-1]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert "## Skills" in system["text"] and "- trip-planning: Plan a trip" in system["text"]
    body = (ROOT / "skills" / "trip-planning" / "SKILL.md").read_text(encoding="utf-8").split("---", 2)[2]
    assert body.strip() not in system["text"], "only the name and description are in the prompt"
    assert "use_skill" in [tool["name"] for tool in first["tools"]]
    (opened,) = tool_results(second)
    assert opened["content"].startswith("[skill trip-planning]\n# Trip planning")
    assert opened["content"].endswith("Resources (read one with use_skill and its path): checklist.md")
    (resource,) = tool_results(third)
    checklist = (ROOT / "skills" / "trip-planning" / "checklist.md").read_text(encoding="utf-8")
    assert resource["content"] == f"[trip-planning/checklist.md]\n{checklist}"
    assert stack.replies(user) == ["When do you leave?"]
    audit = stack.emulation.table("AuditTable").query(KeyConditionExpression=Key("user_id").eq(user))["Items"]
    assert [(item["tool"], item["outcome"]) for item in audit] == [("use_skill", "ok"), ("use_skill", "ok")]


def test_the_tools_and_system_prefix_is_byte_identical_across_turns_with_skills(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(tool_use(("use_skill", {"name": "weekly-review"})), text("Here is your week."))
    stack.say(user, "weekly review please")
    stack.say(user, "thanks")
    requests = stack.anthropic.requests
    assert len(requests) == 3
    assert "- weekly-review: " in requests[0]["system"][-1]["text"]
    assert prefix(requests[0]) == prefix(requests[1]) == prefix(requests[2])


def test_a_skills_dir_replaces_the_shipped_skills_and_an_invalid_one_is_skipped(
    stack: Stack, tmp_path: Path
) -> None:
    (tmp_path / "budget").mkdir()
    (tmp_path / "budget" / "SKILL.md").write_text(
        "---\nname: budget\ndescription: Plan a monthly budget. Use when money comes up.\n---\nAsk.",
        encoding="utf-8",
    )
    (tmp_path / "Broken_Name").mkdir()
    (tmp_path / "Broken_Name" / "SKILL.md").write_text("no front matter", encoding="utf-8")
    stack.emulation.config.env["SKILLS_DIR"] = str(tmp_path)
    user = stack.new_user()
    stack.say(user, "/skills")
    stack.say(user, "hello")
    assert stack.replies(user)[0] == (
        "Skills I can use (1); ask in your own words and I open the one that fits:\n"
        "• budget: Plan a monthly budget. Use when money comes up."
    )
    (request,) = stack.anthropic.requests
    system = request["system"][-1]["text"]
    assert "- budget: Plan a monthly budget." in system and "trip-planning" not in system
    assert "Broken_Name" not in system


def test_skills_lists_the_shipped_skills_without_a_model_call(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "/skills")
    (reply,) = stack.replies(user)
    assert reply.startswith("Skills I can use (3)")
    for name in ("message-to-tasks", "trip-planning", "weekly-review"):
        assert f"• {name}: " in reply
    assert stack.anthropic.requests == []
