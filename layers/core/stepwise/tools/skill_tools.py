"""The use_skill tool: a skill's instructions and the list of its resources, or one resource's text.

Read-only: it reads the skill folders shipped with the deployment (see `stepwise.skills.catalog`), never the
user's data. `skill_tools(catalog)` binds it to the catalog; it is offered only when there are skills.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from stepwise.skills.catalog import USE_SKILL, ResourceError, read_resource
from stepwise.tools.registry import Tool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    from stepwise.skills.catalog import SkillCatalog


class UseSkillInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] = Field(
        description="The skill's name, as the Skills section of the system prompt lists it."
    )
    resource: Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)] | None = Field(
        default=None,
        description="One of the resource files the skill lists (e.g. 'checklist.md'); omit it to get the "
        "skill's instructions.",
    )


class SkillText(BaseModel):
    """A skill's instructions (no `resource`) or one of its resource files, and the resources it has."""

    model_config = ConfigDict(defer_build=True)

    name: str
    resource: str | None = None
    text: str
    resources: list[str]


def use_skill(catalog: SkillCatalog, context: ToolContext, args: UseSkillInput) -> ToolOutput[SkillText]:
    skill = catalog.get(args.name)
    if skill is None:
        raise ToolError(f"There is no skill {args.name!r}. The skills are: {', '.join(catalog.names())}.")
    resources = list(skill.resources)
    if args.resource:
        try:
            text = read_resource(skill, args.resource)
        except ResourceError as error:
            raise ToolError(str(error)) from None
        data = SkillText(name=skill.name, resource=args.resource, text=text, resources=resources)
        return ToolOutput(f"[{skill.name}/{args.resource}]\n{text}", data)
    listing = (
        "\n\nResources (read one with use_skill and its path): " + ", ".join(resources) if resources else ""
    )
    data = SkillText(name=skill.name, text=skill.body, resources=resources)
    return ToolOutput(f"[skill {skill.name}]\n{skill.body}{listing}", data)


def skill_tools(catalog: SkillCatalog) -> list[Tool[Any]]:
    """use_skill, bound to the catalog; none when the deployment has no valid skills."""
    if not catalog.skills:
        return []
    return [
        Tool(
            USE_SKILL,
            "Open one of the skills listed in the system prompt: returns its instructions and resource "
            "files; with `resource`, returns that file's text.",
            UseSkillInput,
            partial(use_skill, catalog),
            read_only=True,
            output_model=SkillText,
        )
    ]
