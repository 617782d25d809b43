"""Where the apps meet (docs/architecture.md): the tournaments services, selectors, domain
and models import no other app's services, tasks or flows, and no import is hidden inside a
function; the calls across apps are the flows'."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What the tournaments app itself may import of other apps: models (foreign keys) and the
#: shared ``accounts`` and ``core``.
FOREIGN = ("titles", "integrity", "webhooks", "ratings", "flows", "web", "demo", "bench")
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
