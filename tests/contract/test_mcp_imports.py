"""The MCP SDK is imported only where MCP is spoken.

`import mcp` costs about four times `import boto3` (`make bench`), which a turn of built-in tools would wait
for on a cold start. So RunTools runs the built-in tools through the registry directly, and the SDK is
imported by one package of the layer only, `stepwise.mcp` (the MCP server of the built-in tools and its /mcp
endpoint), which one function imports: McpFunction (functions/mcp).
Checked two ways: the layer's import statements, and a fresh interpreter that imports every other function
handler, then runs built-in tools the way RunTools does (and lists them the MCP way), and looks for the SDK
in `sys.modules` (and one that imports the /mcp handler finds it there).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.fresh_python import run_clean

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "layers" / "core" / "stepwise"
SDK = ("mcp", "mcp_types")
# The only code of the layer that may import the SDK: the MCP server of the built-in tools and its /mcp
# endpoint, the client of outside servers (imported by the composition root only when a server must be
# reached), and the OAuth flow of people's accounts at them (when one signs in, refreshes or disconnects).
SPEAKS_MCP = [CORE / "mcp", CORE / "remote_tools" / "mcp_client.py", CORE / "accounts" / "flow.py"]
SPEAKS_MCP_FUNCTIONS = {"mcp"}  # the only functions that may load it at import (the /mcp endpoint)


def sdk_imports(files: list[Path], root: Path) -> list[str]:
    """`file: imports module` for every import of the SDK (at any depth) in `files`."""
    problems = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            problems += [
                f"{path.relative_to(root)}: imports {name}" for name in names if name.split(".")[0] in SDK
            ]
    return problems


def outside_the_mcp_package(core: Path, allowed: list[Path]) -> list[Path]:
    return [p for p in sorted(core.rglob("*.py")) if not any(a == p or a in p.parents for a in allowed)]


# A fresh interpreter: import each handler as Lambda does, then run built-in tools as RunTools does. Prints
# the first handler (or step) after which an SDK module was loaded, or null.
PROBE = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path

    def sdk_loaded():
        return any(name.split(".")[0] in ("mcp", "mcp_types") for name in sys.modules)

    first = None
    for app in sys.argv[1:]:
        spec = importlib.util.spec_from_file_location("handler_" + Path(app).parent.name, app)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if first is None and sdk_loaded():
            first = Path(app).parent.name
    if first is None:
        from stepwise.tools.calls import parse_call, run_call
        from stepwise.tools.catalog import build_registry
        from stepwise.telegram.conversation import Conversation, Scope
        from stepwise.tools.registry import ToolContext
        from stepwise_local.in_memory.tasks import InMemoryTaskRepository

        tasks = InMemoryTaskRepository()
        tools = build_registry(tasks=tasks, ledger=tasks.ledger)
        tools.api_tools(), tools.mcp_tools()
        for n, (name, arguments) in enumerate([("add_task", {"title": "milk"}), ("list_tasks", {})]):
            context = ToolContext(Scope(Conversation(1), 1), turn_id="t", call_id=f"t:{n}", now="2026-11-22")
            tool, args = parse_call(tools, name, arguments)
            assert not run_call(tools, context, tool, args, "not_needed").result.is_error
        if sdk_loaded():
            first = "the built-in tools, run as RunTools runs them"
    if first is None:  # CallModel's tool list with outside tools, built from a fresh cache
        from stepwise.remote_tools.calls import RemoteLimits, RemoteToolCaller
        from stepwise.remote_tools.catalog import RemoteTools
        from stepwise.remote_tools.config import ServerEntry
        from stepwise.remote_tools.state import canonical_tools
        from stepwise_local.in_memory.remote_tools import InMemoryRemoteToolCache

        def client():
            from stepwise.remote_tools.mcp_client import McpHttpServers
            return McpHttpServers()

        entry = ServerEntry(name="time", url="https://time.example/mcp")
        cache = InMemoryRemoteToolCache()
        listing = [{"name": "now", "inputSchema": {"type": "object"}}]
        cache.put_tools("time", entry.fingerprint(), canonical_tools(listing), 1_800_000_000)
        now = lambda: 1_800_000_100
        caller = RemoteToolCaller(cache, client, tasks.ledger, lambda e: {}, now, RemoteLimits())
        remote = RemoteTools(lambda: (entry,), caller, refresh=True).tools()
        tools.with_tools(remote).api_tools()
        if sdk_loaded():
            first = "CallModel's tools from the cache"
    print(json.dumps(first))
    """
)


def first_to_load_the_sdk(handlers: list[Path]) -> str | None:
    first: str | None = json.loads(run_clean(PROBE, *map(str, handlers)))
    return first


def test_only_the_mcp_package_imports_the_sdk() -> None:
    functions = [
        p for p in sorted((ROOT / "functions").rglob("*.py")) if p.parts[-2] not in SPEAKS_MCP_FUNCTIONS
    ]
    assert sdk_imports(outside_the_mcp_package(CORE, SPEAKS_MCP) + functions, ROOT) == []
    assert sdk_imports(sorted((CORE / "mcp").rglob("*.py")), ROOT) != []


def test_no_function_loads_the_sdk_nor_do_built_in_tool_calls() -> None:
    handlers = sorted((ROOT / "functions").glob("*/app.py"))
    assert {"run_tools", "call_model", "load_context", "webhook"} <= {h.parent.name for h in handlers}
    others = [h for h in handlers if h.parent.name not in SPEAKS_MCP_FUNCTIONS]
    assert first_to_load_the_sdk(others) is None
    endpoint = [h for h in handlers if h.parent.name in SPEAKS_MCP_FUNCTIONS]
    assert endpoint and first_to_load_the_sdk(endpoint) == "mcp"


def test_calling_an_outside_tool_is_what_loads_the_sdk() -> None:
    probe = textwrap.dedent(
        """
        import sys
        from stepwise.runtime import _mcp_servers
        before = "mcp" in sys.modules
        _mcp_servers()
        print(before, "mcp" in sys.modules)
        """
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "layers" / "core")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_the_checks_find_the_sdk_where_it_should_not_be(tmp_path: Path) -> None:
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "bad.py").write_text("def f():\n    from mcp.client import Client\n")
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "ok.py").write_text("import mcp\n")
    assert sdk_imports(outside_the_mcp_package(tmp_path, [tmp_path / "mcp"]), tmp_path) == [
        "states/bad.py: imports mcp.client"
    ]
    handler = tmp_path / "eager" / "app.py"
    handler.parent.mkdir()
    handler.write_text("import mcp.types\n")
    assert first_to_load_the_sdk([handler]) == "eager"
