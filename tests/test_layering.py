"""Keep the layering of docs/architecture.md: who may import whom, checked on every module.

The allow-matrix (rows import columns):

    kernel      stdlib only (_errors _limits _json _digest _fields _feed _results _media _hosted
                _protocols sse contracts)
    rooms       kernel                 (never another room, never an upper floor)
    ledger      kernel, psycopg lazily (never a room, loop, mock, recording)
    loop        kernel, rooms' public packages, ledger
    temporal    kernel, ledger, loop, temporalio (the `temporal` extra; nothing imports it);
                mock too, for its demo
    recording   kernel, rooms' public packages
    mock        kernel, rooms' and recording's public packages; a room's _render only from
                mock/_providers/
    top floor   anything (cli, demo, pytest_plugin, __main__)

Plus: no import cycle in the runtime import graph of any package (subpackages included),
the mock's providers (mock/_providers/) a leaf layer that runs no engine module, and no
provider-name literal in the mock's engine.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "callgate"
ROOMS = {
    "openai_responses",
    "anthropic_messages",
    "gemini_interactions",
    "gemini_generate_content",
    "openai_chat_completions",
}
KERNEL = {"_errors", "_limits", "_json", "_digest", "_fields", "_results", "_hosted", "_protocols"}
KERNEL |= {"_feed", "_media", "_visible", "_turncheck"}
KERNEL |= {"sse"}
KERNEL |= {"contracts", "__init__"}
TOP = {"cli", "demo", "pytest_plugin", "__main__"}
# Which top-level parts each part may import (besides itself and the standard library).
ALLOWED: dict[str, set[str]] = {
    "kernel": KERNEL,
    "room": KERNEL,
    "ledger": KERNEL,
    "loop": KERNEL | ROOMS | {"ledger"},
    "recording": KERNEL | ROOMS,
    "mock": KERNEL | ROOMS | {"recording"},
    "temporal": KERNEL | {"ledger", "loop", "mock"},
}
# The ledger's PostgreSQL store imports psycopg lazily, inside the store (the `postgres` extra).
LEDGER_EXTRAS = {"psycopg"}
# The optional extras an upper part may use (the core is stdlib only).
EXTRAS = {"starlette", "uvicorn", "uvloop", "httpx", "httpx2", "psycopg", "anyio", "pytest"}
EXTRAS |= {"httptools"}  # the mock's HTTP/1.1 connection (mock._http1)
EXTRAS |= {"websockets"}  # the host loop's WebSocket transport (loop._socket)
EXTRAS |= {"temporalio"}  # callgate.temporal (the `temporal` extra)


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _top_part(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _kind(part: str) -> str:
    if part in KERNEL:
        return "kernel"
    if part in ROOMS:
        return "room"
    if part in TOP:
        return "top"
    return part


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    """Absolute dotted names imported by a module (relative imports resolved), with lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ["callgate", *path.relative_to(SRC).parent.parts]
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            yield module, node.lineno
            for alias in node.names:
                yield f"{module}.{alias.name}", node.lineno


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _callgate_parts(name: str) -> list[str]:
    parts = name.split(".")
    return parts[1:] if parts[0] == "callgate" else []


MODULES = _modules()
IDS = [str(p.relative_to(SRC)) for p in MODULES]


def test_the_walk_sees_the_kernel_and_the_rooms() -> None:
    parts = {_top_part(p) for p in MODULES}
    assert {"_json", "_errors", "_limits", "_digest", "_fields", "_results", "sse"} <= parts
    assert {"openai_responses", "anthropic_messages", "gemini_interactions"} <= parts


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_every_import_is_allowed_by_the_matrix(path: Path) -> None:
    own = _top_part(path)
    kind = _kind(own)
    if kind == "top":
        return
    allowed = ALLOWED[kind] | {own}
    for name, line in _imports(path):
        parts = _callgate_parts(name)
        if parts:
            assert parts[0] in allowed, f"{path.name}:{line} ({kind}) imports {name}"
            continue
        top = name.split(".")[0]
        if top == "__future__" or top in sys.stdlib_module_names:
            continue
        if kind == "ledger" and top in LEDGER_EXTRAS:
            continue
        assert kind not in ("kernel", "room", "ledger") or top == "callgate", (
            f"{path.name}:{line}: the core imports non-stdlib {name}"
        )
        assert kind in ("kernel", "room", "ledger") or top in EXTRAS or top == "callgate", (
            f"{path.name}:{line} imports {name}, which is no declared extra"
        )


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_only_a_rooms_render_seam_is_imported_privately_and_only_by_mock_providers(
    path: Path,
) -> None:
    own = _top_part(path)
    if _kind(own) == "top":
        return
    for name, line in _imports(path):
        parts = _callgate_parts(name)
        if len(parts) < 2 or parts[0] == own or parts[0] not in ROOMS:
            continue
        private = parts[1].startswith("_")
        if not private:
            continue
        in_providers = path.relative_to(SRC).parts[:2] == ("mock", "_providers")
        assert parts[1] == "_render", f"{path.name}:{line} imports {name}"
        assert in_providers, f"{path.name}:{line} imports {name} outside mock/_providers/"


def _dotted(path: Path) -> str:
    parts = ["callgate", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


DOTTED = {_dotted(p): p for p in MODULES}
# The provider registry imports each provider folder by name, lazily (importlib): an edge.
REGISTRY = "callgate.mock._providers"
DYNAMIC = {REGISTRY: {_dotted(p) for p in MODULES if p.parent.parent == SRC / "mock/_providers"}}
DYNAMIC[REGISTRY] = {name for name in DYNAMIC[REGISTRY] if name.count(".") == 3}


def _module_of(name: str) -> str | None:
    """The callgate module ``name`` (a module, or a name inside one) executes."""
    while name and name not in DOTTED:
        name = name.rpartition(".")[0]
    return name or None


def _runtime_graph() -> dict[str, set[str]]:
    """Every module's runtime imports of other callgate modules, subpackages included
    (``from pkg import mod`` is an edge to ``pkg.mod``; ``if TYPE_CHECKING:`` blocks are
    not run; the implicit import of a parent package's ``__init__`` is not an edge)."""
    graph: dict[str, set[str]] = {}
    for name, path in DOTTED.items():
        deps: set[str] = set()
        imported = list(_imports(path))
        modules = {dep for dep, _line in imported if dep in DOTTED}
        for dep, _line in imported:
            module = _module_of(dep)
            if module is not None and not any(d.startswith(dep + ".") for d in modules):
                deps.add(module)  # ``from pkg import mod`` names pkg too: only mod counts
        graph[name] = (deps | DYNAMIC.get(name, set())) - {name}
    return graph


GRAPH = _runtime_graph()


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


PACKAGES = sorted({p.parent for p in MODULES if p.name == "__init__.py"})


def test_the_graph_follows_imports_into_subpackages() -> None:
    mock = GRAPH["callgate.mock._providers.openai_responses"]
    assert "callgate.mock._providers._kit" in mock
    assert "callgate.mock._providers.openai_responses._checks" in mock
    assert "callgate.mock._providers.gemini_generate_content" in GRAPH[REGISTRY]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


@pytest.mark.parametrize(
    "package", PACKAGES, ids=[str(p.relative_to(SRC.parent)) for p in PACKAGES]
)
def test_no_import_cycle_inside_a_package(package: Path) -> None:
    """No cycle in the runtime import graph of the package and its subpackages."""
    prefix = _dotted(package / "__init__.py") + "."
    inside = {n: {d for d in deps if d.startswith(prefix)} for n, deps in GRAPH.items()}
    graph = {n: deps for n, deps in inside.items() if n.startswith(prefix)}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


PROVIDERS = SRC / "mock" / "_providers"
PROVIDER_MODULES = [p for p in MODULES if PROVIDERS in p.parents]


@pytest.mark.parametrize(
    "path", PROVIDER_MODULES, ids=[str(p.relative_to(PROVIDERS)) for p in PROVIDER_MODULES]
)
def test_the_mock_providers_are_a_leaf_layer(path: Path) -> None:
    """A provider module runs no engine module: it imports the kernel, rooms and the
    modules under mock/_providers/ only, and no provider folder imports another's."""
    own = path.relative_to(PROVIDERS).parts
    folder = own[0] if len(own) > 1 else None
    for name, line in _imports(path):
        parts = _callgate_parts(name)
        if not parts or parts[0] != "mock":
            continue
        where = f"{path.relative_to(PROVIDERS)}:{line} imports {name}"
        assert parts[:2] == ["mock", "_providers"], f"{where}: an engine module"
        module = _module_of(name) or ""
        if module.count(".") >= 3 and folder is not None:
            other = module.split(".")[3]
            if (PROVIDERS / other).is_dir():
                assert other == folder, f"{where}: another provider's folder"
        if folder is None:  # the registry may name the folders; the kit and shared modules not
            assert module == REGISTRY or (
                module.count(".") == 3 and not (PROVIDERS / module.split(".")[3]).is_dir()
            ), f"{where}: a provider folder"


PROVIDER_LITERALS = ("openai_responses", "anthropic_messages", "gemini_interactions")
PROVIDER_LITERALS += ("gemini_generate_content", "openai_chat_completions")


def _engine_modules() -> list[Path]:
    mock = SRC / "mock"
    return sorted(p for p in mock.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.name)
def test_the_mock_engine_has_no_provider_name_literal(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in PROVIDER_LITERALS:
            pytest.fail(f"{path.name}:{node.lineno} names {node.value!r}: move it to _providers/")


def test_the_package_root_holds_only_the_kernel() -> None:
    """An upper floor's module (a command, a demo scenario) goes in its subpackage."""
    strays = {p.name for p in SRC.glob("*.py")} - {f"{m}.py" for m in KERNEL | {"__main__"}}
    assert not strays, f"not kernel modules, at the package root: {sorted(strays)}"


@pytest.mark.parametrize("path", MODULES, ids=IDS)
def test_nothing_outside_callgate_temporal_imports_it(path: Path) -> None:
    if _top_part(path) == "temporal":
        return
    for name, line in _imports(path):
        parts = _callgate_parts(name)
        assert parts[:1] != ["temporal"], f"{path.name}:{line} imports {name}"
        assert name.split(".")[0] != "temporalio", f"{path.name}:{line} imports {name}"
