"""The Mini App's code is imported by its own function only: no turn function's cold start pays for it.

Checked two ways: the import statements (only `stepwise.miniapp` itself, the App function's handler and the
composition root, which builds its services on the App function's first API request, name it), and a fresh
interpreter that imports every other function's handler and finds no `stepwise.miniapp` module loaded (and
one that imports the App function's finds it).
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

from support.fresh_python import run_clean

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "layers" / "core" / "stepwise"
PACKAGE = "stepwise.miniapp"
MAY_IMPORT = {CORE / "runtime.py", ROOT / "functions" / "app" / "app.py"}

PROBE = textwrap.dedent(
    """
    import importlib.util, json, sys
    from pathlib import Path

    loaded = {}
    for app in sys.argv[1:]:
        spec = importlib.util.spec_from_file_location("handler_" + Path(app).parent.name, app)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[Path(app).parent.name] = any(name.startswith("stepwise.miniapp") for name in sys.modules)
    print(json.dumps(loaded))
    """
)


def imports_of_the_package(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [name for name in names if name == PACKAGE or name.startswith(PACKAGE + ".")]


def loaded_after(handlers: list[Path]) -> dict[str, bool]:
    loaded: dict[str, bool] = json.loads(run_clean(PROBE, *map(str, handlers)))
    return loaded


def test_only_the_app_function_and_the_composition_root_name_the_package() -> None:
    files = [*sorted(CORE.rglob("*.py")), *sorted((ROOT / "functions").rglob("*.py"))]
    naming = {
        str(path.relative_to(ROOT))
        for path in files
        if imports_of_the_package(path) and not path.is_relative_to(CORE / "miniapp")
    }
    assert naming == {str(path.relative_to(ROOT)) for path in MAY_IMPORT}


def test_no_other_function_loads_the_package_and_the_app_function_does() -> None:
    handlers = sorted((ROOT / "functions").glob("*/app.py"))
    others = [h for h in handlers if h.parent.name != "app"]
    assert {"webhook", "load_context", "call_model", "run_tools", "finish_turn", "mcp"} <= {
        h.parent.name for h in others
    }
    assert loaded_after(others) == {h.parent.name: False for h in others}
    assert loaded_after([ROOT / "functions" / "app" / "app.py"]) == {"app": True}
