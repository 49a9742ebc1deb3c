"""Who may touch which store.

The rule. The data the tools own — tasks, reminders and their schedules, long-term memories, the user's time
zone (kept with the reminders) and the tool-call ledger that makes their effects run once — is read and
changed only by the tool layer (`stepwise.tools`), by its own domain package (`stepwise.tasks`, `.reminders`,
`.memory`, `.ledger`: a reminder firing, the summarizer) and by the composition root (`stepwise.runtime`),
which builds the stores. The code that runs a turn — the states and the webhook, the model adapter, the
offline model, the prompt, the commands, the function handlers — never imports such a store: neither its port
(the interface the tools are given) nor an adapter, not even for type checking. It reaches that data through
the tools: the model's tool calls, the commands' /tasks, /reminders and /memory (which run the read tools),
and, for the prompt, the tool layer's read-only views (`stepwise.tools.reads`: the user's time zone and the
memories nearest to the message).

The turn's own records (history, turn records, inbox, chats, approvals, audit, usage) are the workflow's, not
the tools': the states read and write them through their ports. But no turn code imports any store adapter
(a module that talks to DynamoDB, EventBridge Scheduler, S3 Vectors or Bedrock): the composition root alone
builds adapters and hands the states ports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "layers" / "core" / "stepwise"
TURN_CODE = [
    CORE / "states",
    CORE / "webhook.py",
    CORE / "model",
    CORE / "offline",
    CORE / "prompt",
    CORE / "commands",
    CORE / "miniapp",
    ROOT / "functions",
]
# The ports of the stores the tools own (their models, such as stepwise.tasks.models, are plain data).
TOOL_STORES = frozenset(
    {
        "stepwise.tasks.repository",
        "stepwise.reminders.store",
        "stepwise.memory.service",
        "stepwise.ledger.store",
    }
)
# Adapters that are not named `<package>.dynamodb`.
OTHER_ADAPTERS = frozenset(
    {"stepwise.reminders.eventbridge", "stepwise.memory.vector_index", "stepwise.memory.embedder"}
)


def imported_modules(source: str) -> set[str]:
    """Every module an import statement names, at any depth (lazy and TYPE_CHECKING imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def forbidden(module: str) -> str | None:
    """Why turn code may not import `module`, or None when it may."""
    if module in TOOL_STORES:
        return "a store of the tools' data: reach it through stepwise.tools"
    if module in OTHER_ADAPTERS or (module.startswith("stepwise.") and module.endswith(".dynamodb")):
        return "a store adapter: only stepwise.runtime builds adapters"
    return None


def store_imports(places: list[Path], root: Path) -> list[str]:
    """`file: imports module (why not)` for every forbidden import in the files of `places`."""
    files = [p for place in places for p in ([place] if place.is_file() else sorted(place.rglob("*.py")))]
    return [
        f"{path.relative_to(root)}: imports {module} ({why})"
        for path in files
        for module in sorted(imported_modules(path.read_text()))
        if (why := forbidden(module)) is not None
    ]


def test_turn_code_imports_no_store_the_tools_own_and_no_store_adapter() -> None:
    assert store_imports(TURN_CODE, ROOT) == []


def test_the_tool_layer_and_the_composition_root_may() -> None:
    assert store_imports([CORE / "tools", CORE / "runtime.py"], ROOT) != []


@pytest.mark.parametrize(
    "source",
    [
        "from stepwise.tasks.dynamodb import DynamoTaskRepository\n",
        "from stepwise.history import dynamodb\n",
        "import stepwise.reminders.eventbridge\n",
        "if TYPE_CHECKING:\n    from stepwise.memory.service import MemoryService\n",
        "def f():\n    from stepwise.reminders import store\n",
        "from stepwise.ledger.store import ToolCallLedger\n",
        "from stepwise.memory.vector_index import VectorMatch\n",
    ],
)
def test_the_check_finds_a_store_import_however_it_is_written(tmp_path: Path, source: str) -> None:
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "bad.py").write_text(source)
    (problem,) = store_imports([tmp_path / "states"], tmp_path)
    assert problem.startswith("states/bad.py: imports stepwise.")


def test_the_check_allows_the_tools_the_read_views_models_and_the_turns_own_stores(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "from stepwise.tools.reads import MemoryRecall, Profiles\n"
        "from stepwise.tools.registry import ToolRegistry\n"
        "from stepwise.reminders.models import Reminder\n"
        "from stepwise.memory.keys import summary_key\n"
        "from stepwise.history.repository import MessageRepository\n"
        "from stepwise.audit.log import AuditLog\n"
    )
    assert store_imports([tmp_path / "app.py"], tmp_path) == []
