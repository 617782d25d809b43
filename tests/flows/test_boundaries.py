"""Where the apps meet (docs/architecture.md): the tournaments services, selectors, domain
and models import no other app's services, tasks or flows, and no import is hidden inside a
function; the calls across apps are the flows'."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What the tournaments app itself may import of other apps: models (foreign keys) and the
#: shared ``accounts`` and ``core``.
FOREIGN = ("titles", "integrity", "webhooks", "ratings", "notices", "flows", "web", "demo", "bench")
LAYERS = ("services", "selectors", "domain", "models")


def _modules() -> list[Path]:
    return sorted(path for layer in LAYERS for path in (ROOT / "tournaments" / layer).rglob("*.py"))


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """(module, at module level) of every import in ``tree``."""
    top = {id(node) for node in getattr(tree, "body", [])}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top))
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_tournaments_module_calls_no_other_app(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imports = _imports(tree)
    assert [name for name, _ in imports if name.split(".")[0] in FOREIGN] == []
    assert [name for name, top in imports if not top and not name.startswith("__")] == []


#: The apps whose services the flows compose, and the modules of theirs that are entry points
#: (they may call flows and other apps' services, as views and tasks do).
APPS = ("tournaments", "titles", "integrity", "ratings", "webhooks", "exports", "notices")
ENTRY_POINTS = ("api", "views", "management", "migrations", "tasks.py", "admin.py", "apps.py")
#: What no app's inner module imports of another app: its writes and jobs, or the flows.
WRITES = ("services", "tasks", "recompute", "announce")


def _inner_modules() -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if not set(path.relative_to(ROOT / app).parts) & set(ENTRY_POINTS)
        and path.relative_to(ROOT / app).parts[0] not in ENTRY_POINTS
    )


def _crosses(app: str, name: str) -> bool:
    parts = name.split(".")
    if parts[0] == "flows":
        return True
    return parts[0] in APPS and parts[0] != app and len(parts) > 1 and parts[1] in WRITES


@pytest.mark.parametrize("path", _inner_modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_app_calls_another_apps_services(path: Path) -> None:
    app = path.relative_to(ROOT).parts[0]
    imports = _imports(ast.parse(path.read_text()))
    assert [name for name, _ in imports if _crosses(app, name)] == []
    hidden = [
        name
        for name, top in imports
        if not top and not name.startswith("__") and name.split(".")[0] in (*APPS, "flows")
    ]
    assert hidden == []
