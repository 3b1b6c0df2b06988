"""Keep the layering: providers never import each other; the core is standard library only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "callgate"
PROVIDERS = {
    "openai_responses",
    "anthropic_messages",
    "gemini_interactions",
    "gemini_generate_content",
}
# Layers that sit on top of the core and may use the optional extras.
UPPER = {"mock", "ledger", "loop", "cli", "_ledger_cli", "_recording_cli", "_demo", "pytest_plugin"}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _top_part(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    """Absolute dotted names imported by a module (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ["callgate", *path.relative_to(SRC).parent.parts]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_the_walk_sees_the_kernel() -> None:
    parts = {_top_part(p) for p in _modules()}
    assert {"_json", "_errors", "_limits", "_digest", "_results", "sse", "contracts"} <= parts


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_providers_never_import_each_other_or_upper_layers(path: Path) -> None:
    own = _top_part(path)
    if own not in PROVIDERS:
        return
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] != "callgate" or len(parts) < 2:
            continue
        assert parts[1] not in (PROVIDERS - {own}), f"{path} imports {name}"
        assert parts[1] not in UPPER, f"{path} imports {name}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_core_imports_only_the_standard_library(path: Path) -> None:
    if _top_part(path) in UPPER:
        return
    for name in _imports(path):
        top = name.split(".")[0]
        if top in ("callgate", "__future__"):
            if top == "callgate":
                parts = name.split(".")
                assert len(parts) < 2 or parts[1] not in UPPER, f"{path} imports {name}"
            continue
        assert top in sys.stdlib_module_names, f"{path} imports non-stdlib {name}"


def test_kernel_never_imports_a_provider() -> None:
    for path in _modules():
        if _top_part(path) in PROVIDERS | UPPER:
            continue
        for name in _imports(path):
            parts = name.split(".")
            assert not (parts[0] == "callgate" and len(parts) > 1 and parts[1] in PROVIDERS), (
                f"{path} imports {name}"
            )


# The ledger is kernel only: it never imports a protocol room, the mock or the loop, and
# outside the standard library only psycopg (imported lazily, for postgresql:// URLs).
LEDGER_KERNEL = {"_errors", "_digest", "_json", "_limits", "_results", "ledger"}


@pytest.mark.parametrize(
    "path", sorted((SRC / "ledger").rglob("*.py")), ids=lambda p: str(p.relative_to(SRC))
)
def test_ledger_imports_only_the_kernel(path: Path) -> None:
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "callgate":
            assert len(parts) > 1, f"{path} imports the callgate package root"
            assert parts[1] in LEDGER_KERNEL, f"{path} imports {name}"
        else:
            assert parts[0] in sys.stdlib_module_names | {"__future__", "psycopg"}, (
                f"{path} imports {name}"
            )
