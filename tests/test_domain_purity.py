"""The import rules: ``<app>/domain/`` modules import only the standard library, their own
domain package and ``core.domain`` (the tour's clock), so SPEC rules stay testable without
Django or a database; and ``core`` imports no app of the project (nor ``config``), so every
app may import it."""

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOMAIN_MODULES = sorted(ROOT.glob("*/domain/*.py"))
CORE_MODULES = sorted(ROOT.glob("core/**/*.py"))
#: The project's own packages: every app (a folder with ``apps.py``) and ``config``.
PROJECT_PACKAGES = sorted({p.parent.name for p in ROOT.glob("*/apps.py")} | {"config"})


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _dotted_strings(path: Path) -> list[str]:
    """String constants that name a module (``include("web.urls")``, ``import_module``)."""
    return [
        node.value
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", node.value)
    ]


def test_domain_modules_exist() -> None:
    assert len(DOMAIN_MODULES) >= 3


@pytest.mark.parametrize("path", DOMAIN_MODULES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_domain_module_imports_only_stdlib_and_its_domain(path: Path) -> None:
    own = f"{path.parent.parent.name}.domain"
    bad = [
        name
        for name in _imports(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith((own, "core.domain"))
    ]
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"


def test_the_project_packages_are_found() -> None:
    assert {"accounts", "tournaments", "titles", "integrity", "flows", "demo", "bench"} <= set(
        PROJECT_PACKAGES
    )
    assert len(CORE_MODULES) >= 10


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_no_app(path: Path) -> None:
    """Imports anywhere in the module count, those inside functions too, and so do module
    paths in strings (an ``include`` of an app's URLs)."""
    bad = [
        name
        for name in _imports(path) + _dotted_strings(path)
        if name.split(".")[0] in PROJECT_PACKAGES and name.split(".")[0] != "core"
    ]
    assert bad == [], f"{path.relative_to(ROOT)} imports {bad}"
