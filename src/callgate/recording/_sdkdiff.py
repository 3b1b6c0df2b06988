"""``callgate drift sdk PACKAGE OLD NEW``: diff the type unions the baselines depend on.

Both versions are fetched with ``pip download --no-deps`` into a temporary folder and
unpacked; their type modules are read **by AST, never imported**. For each package a table
names the roots the parsers depend on (the stream event union, the output item / content
block / step union, the delta union, the finish / stop / status enums). A union root
resolves to its member classes; a member's wire type is the ``Literal`` of its ``type``
(or ``event_type``) field, and its fields are split into required (no default, not
``Optional``) and optional, by wire name (a ``pydantic.Field(alias=...)`` wins).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .._errors import UsageError

__all__ = ["ROOTS", "diff_sdk", "read_unions", "registry_from", "render_diff"]

Root = tuple[str, str, str]  # (label, kind, name)
# package -> ((types folder inside the wheel, (root, ...)), ...).
# kind: "union" (a union alias), "literal" (a Literal alias), "field" (Class.field),
# "class" (one class, keyed by its class name: objects without a wire discriminator,
# such as Chat Completions chunks, choices and deltas). A name may start with
# ``module:`` to read that one file of the folder (Chat Completions has a ``Choice`` in
# both ``chat_completion.py`` and ``chat_completion_chunk.py``).
ROOTS: Final[dict[str, tuple[tuple[str, tuple[Root, ...]], ...]]] = {
    "openai": (
        (
            "openai/types/responses",
            (
                ("stream events", "union", "ResponseStreamEvent"),
                ("output items", "union", "ResponseOutputItem"),
                ("message content parts", "field", "ResponseOutputMessage.content"),
                ("response status", "literal", "ResponseStatus"),
                ("incomplete reason", "field", "IncompleteDetails.reason"),
            ),
        ),
        (
            "openai/types/chat",
            (
                ("chat chunks", "class", "chat_completion_chunk:ChatCompletionChunk"),
                ("chat chunk choices", "class", "chat_completion_chunk:Choice"),
                ("chat deltas", "class", "chat_completion_chunk:ChoiceDelta"),
                ("chat delta tool calls", "class", "chat_completion_chunk:ChoiceDeltaToolCall"),
                ("chat completions", "class", "chat_completion:ChatCompletion"),
                ("chat completion choices", "class", "chat_completion:Choice"),
                ("chat messages", "class", "chat_completion_message:ChatCompletionMessage"),
                ("chat message tool calls", "union", "ChatCompletionMessageToolCallUnion"),
                ("chat finish reasons", "field", "chat_completion_chunk:Choice.finish_reason"),
            ),
        ),
    ),
    "anthropic": (
        (
            "anthropic/types",
            (
                ("stream events", "union", "RawMessageStreamEvent"),
                ("content blocks", "union", "ContentBlock"),
                ("content block deltas", "union", "RawContentBlockDelta"),
                ("stop reasons", "literal", "StopReason"),
            ),
        ),
    ),
    "google-genai": (
        (
            "google/genai/_gaos/types/interactions",
            (
                ("stream events", "union", "InteractionSSEEvent"),
                ("steps", "union", "Step"),
                ("step deltas", "union", "StepDeltaData"),
                ("interaction status", "field", "Interaction.status"),
            ),
        ),
    ),
}
_DISCRIMINATORS: Final = ("type", "event_type")


@dataclass
class _Class:
    fields: dict[str, bool] = field(default_factory=dict)  # wire name -> required
    literals: dict[str, list[str]] = field(default_factory=dict)  # python name -> values
    annotations: dict[str, ast.expr] = field(default_factory=dict)


@dataclass
class _Module:
    classes: dict[str, _Class] = field(default_factory=dict)
    unions: dict[str, list[str]] = field(default_factory=dict)
    literals: dict[str, list[str]] = field(default_factory=dict)


def _names_in(node: ast.AST, head: str) -> list[ast.Subscript]:
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Subscript)
        and (
            (isinstance(n.value, ast.Name) and n.value.id == head)
            or (isinstance(n.value, ast.Attribute) and n.value.attr == head)
        )
    ]


def _literal_values(node: ast.AST) -> list[str]:
    values: list[str] = []
    for sub in _names_in(node, "Literal"):
        for const in ast.walk(sub.slice):
            if isinstance(const, ast.Constant) and type(const.value) is str:
                values.append(const.value)
    return values


def _union_members(node: ast.AST) -> list[str]:
    members: list[str] = []
    for sub in _names_in(node, "Union"):
        elts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        members += [e.id for e in elts if isinstance(e, ast.Name)]
    if not members and isinstance(node, ast.BinOp):  # A | B | C
        stack: list[ast.AST] = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, ast.BinOp):
                stack += [item.right, item.left]
            elif isinstance(item, ast.Name):
                members.append(item.id)
    return members


def _alias(node: ast.AST) -> str | None:
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        for kw in call.keywords:
            if kw.arg == "alias" and isinstance(kw.value, ast.Constant):
                return str(kw.value.value)
    return None


def _field_call(value: ast.expr | None) -> ast.Call | None:
    """``FieldInfo(alias=...)`` / ``Field(...)`` as a field's value (a pydantic field spec)."""
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name in ("FieldInfo", "Field"):
            return value
    return None


def _has_default(call: ast.Call) -> bool:
    return bool(call.args) or any(k.arg in ("default", "default_factory") for k in call.keywords)


def _optional(annotation: ast.expr) -> bool:
    text = ast.unparse(annotation)
    return any(w in text for w in ("Optional[", "NotRequired[", "OptionalNullable[", "None"))


def _read_class(node: ast.ClassDef) -> _Class:
    found = _Class()
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        name = stmt.target.id
        field_call = _field_call(stmt.value)
        wire = _alias(stmt.annotation) or (field_call and _alias(field_call)) or name
        no_default = stmt.value is None or (field_call is not None and not _has_default(field_call))
        found.fields[wire] = no_default and not _optional(stmt.annotation)
        found.annotations[name] = stmt.annotation
        values = _literal_values(stmt.annotation)
        if values:
            found.literals[name] = values
    return found


def _read_module(tree: ast.Module, into: _Module) -> None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            if node.name.endswith(("TypedDict", "Param")) or node.name.startswith("Unknown"):
                continue
            into.classes.setdefault(node.name, _read_class(node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if value is None:
                continue
            for target in targets:
                if not isinstance(target, ast.Name) or target.id.endswith("TypedDict"):
                    continue
                members = [m for m in _union_members(value) if not m.startswith("Unknown")]
                if _literal_values(value):  # Literal[...], or Union[Literal[...], str]
                    into.literals.setdefault(target.id, _literal_values(value))
                elif members:
                    into.unions.setdefault(target.id, members)


def read_tree(folder: Path) -> _Module:
    module = _Module()
    # Only the folder itself: subfolders (``beta/``) redefine the same names.
    for path in sorted(folder.glob("*.py")):
        _read_module(ast.parse(path.read_text(encoding="utf-8")), module)
    return module


def _member(module: _Module, name: str) -> dict[str, Any] | None:
    cls = module.classes.get(name)
    if cls is None:
        return None
    wire = next((cls.literals[d] for d in _DISCRIMINATORS if d in cls.literals), None)
    if wire is None:
        return None
    return {
        "types": sorted(set(wire)),
        "required": sorted(k for k, req in cls.fields.items() if req),
        "optional": sorted(k for k, req in cls.fields.items() if not req),
    }


def _expand(module: _Module, names: list[str], seen: set[str]) -> dict[str, dict[str, Any]]:
    """Member classes of a union, nested unions flattened, keyed by wire type."""
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if name in module.unions:
            found.update(_expand(module, module.unions[name], seen))
            continue
        member = _member(module, name)
        if member is not None:
            for wire in member["types"]:
                found[wire] = {"class": name, **member}
    return found


def _class(module: _Module, name: str) -> dict[str, Any]:
    cls = module.classes.get(name)
    if cls is None:
        return {"members": {}}
    required = sorted(k for k, req in cls.fields.items() if req)
    optional = sorted(k for k, req in cls.fields.items() if not req)
    return {"members": {name: {"class": name, "types": [name], "required": required,
                               "optional": optional}}}  # fmt: skip


def _root(module: _Module, kind: str, name: str) -> dict[str, Any]:
    if kind == "class":
        return _class(module, name)
    if kind == "union":
        return {"members": _expand(module, module.unions.get(name, []), set())}
    if kind == "literal":
        return {"values": sorted(set(module.literals.get(name, [])))}
    cls_name, _, attr = name.partition(".")
    cls = module.classes.get(cls_name)
    annotation = cls.annotations.get(attr) if cls else None
    if annotation is None:
        return {"values": []}
    values = set(_literal_values(annotation))
    members = {}
    for ref in (n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)):
        values |= set(module.literals.get(ref, []))
        members.update(_expand(module, [ref], set()))
    result: dict[str, Any] = {"values": sorted(values)}
    if members:
        result["members"] = members
    return result


def read_unions(package: str, site: Path) -> dict[str, Any]:
    """The roots of ``package`` read from an unpacked wheel (or site-packages) at ``site``."""
    if package not in ROOTS:
        raise UsageError(f"unknown SDK package {package!r}; known: {', '.join(ROOTS)}")
    found: dict[str, Any] = {}
    for folder, roots in ROOTS[package]:
        module = read_tree(site / folder)
        for label, kind, name in roots:
            scope = module
            if ":" in name:  # one file of the folder
                stem, _, name = name.partition(":")
                scope = _Module()
                path = site / folder / f"{stem}.py"
                if path.is_file():
                    _read_module(ast.parse(path.read_text(encoding="utf-8")), scope)
            found[label] = _root(scope, kind, name)
    return found


def _fetch(package: str, version: str, into: Path) -> Path:
    where = into / version
    where.mkdir()
    spec = f"{package}=={version}"
    run = subprocess.run(  # noqa: S603 - fixed argv, no shell
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", "-q", "-d", str(where), spec],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    wheels = list(where.glob("*.whl"))
    if run.returncode != 0 or len(wheels) != 1:
        raise UsageError(f"pip download {spec} failed: {run.stderr.strip()[-400:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(where / "site")
    return where / "site"


def diff_sdk(package: str, old: str, new: str) -> tuple[str, dict[str, Any]]:
    """Download, read and diff; returns (markdown report, both readings by version)."""
    if package not in ROOTS:
        raise UsageError(f"unknown SDK package {package!r}; known: {', '.join(ROOTS)}")
    with tempfile.TemporaryDirectory(prefix="callgate-drift-") as tmp:
        before = read_unions(package, _fetch(package, old, Path(tmp)))
        after = read_unions(package, _fetch(package, new, Path(tmp)))
    data = {"package": package, "versions": {old: before, new: after}}
    return render_diff(package, old, new, before, after), data


def _diff_members(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = [f"- new type `{t}` ({new[t]['class']})" for t in sorted(set(new) - set(old))]
    lines += [f"- removed type `{t}`" for t in sorted(set(old) - set(new))]
    for wire in sorted(set(old) & set(new)):
        a, b = old[wire], new[wire]
        req_a, req_b = set(a["required"]), set(b["required"])
        all_a, all_b = req_a | set(a["optional"]), req_b | set(b["optional"])
        changes = [f"now required `{f}`" for f in sorted(req_b - req_a)]
        changes += [f"no longer required `{f}`" for f in sorted((req_a - req_b) & all_b)]
        changes += [f"new field `{f}`" for f in sorted(all_b - all_a - req_b)]
        changes += [f"removed field `{f}`" for f in sorted(all_a - all_b)]
        if changes:
            lines.append(f"- `{wire}`: " + ", ".join(changes))
    return lines


def render_diff(
    package: str, old: str, new: str, before: dict[str, Any], after: dict[str, Any]
) -> str:
    """The markdown report of what changed between two readings."""
    out = [f"# SDK drift: {package} {old} -> {new}", ""]
    out += [
        "Read by AST from the two wheels (`callgate drift sdk`), never imported. A union lists",
        "its members by wire type; fields are wire names, required = no default and not",
        "Optional.",
        "",
    ]
    for label in after:
        a, b = before.get(label, {}), after[label]
        lines = _diff_members(a.get("members", {}), b.get("members", {}))
        va, vb = set(a.get("values", [])), set(b.get("values", []))
        lines += [f"- new value `{v}`" for v in sorted(vb - va)]
        lines += [f"- removed value `{v}`" for v in sorted(va - vb)]
        count = len(b.get("members", {})) or len(vb)
        out.append(f"## {label} ({count} in {new})")
        out.append("")
        out += lines or ["- no change"]
        out.append("")
    return "\n".join(out)


def registry_from(readings: list[dict[str, Any]]) -> dict[str, Any]:
    """``sdk_types.json`` (what ``check --drift`` compares with) from ``--data`` outputs:
    per package and version, each root's members (required and declared fields) and
    values. Regenerate it with the reports in ``docs/drift/``::

        registry_from([json.load(open(p)) for p in sorted(glob("docs/drift/*.json"))])
    """
    out: dict[str, Any] = {}
    for data in readings:
        for version, labels in data["versions"].items():
            compact: dict[str, Any] = {}
            for label, root in labels.items():
                entry: dict[str, Any] = {}
                if "members" in root:
                    entry["members"] = {
                        wire: {
                            "required": m["required"],
                            "fields": sorted(set(m["required"]) | set(m["optional"])),
                        }
                        for wire, m in root["members"].items()
                    }
                if root.get("values"):
                    entry["values"] = root["values"]
                compact[label] = entry
            out.setdefault(data["package"], {})[version] = compact
    return out
