"""Generate the mock's request specs from the installed official SDK's request param types.

``python tests/mock/request_spec_gen.py`` writes, for the SDK generation installed in the
running interpreter (the current one in ``.venv``, the 2026-07-21 one in
``.venv-baseline``), one JSON file per protocol under
``src/callgate/mock/_providers/request_specs/``. The mock merges both generations' files
when it loads them (a field either generation can send is accepted; a field is required
only when both require it). ``tests/mock/test_mock_request_spec_drift.py`` regenerates
them in memory and compares, so a spec cannot drift from the SDK it was read from.

What is read, per protocol (the wire the SDK sends, not its Python names):

* OpenAI Responses: ``ResponseCreateParamsStreaming`` and ``...NonStreaming`` (TypedDicts;
  ``PropertyInfo(alias=...)`` gives the wire name).
* OpenAI Chat Completions: ``CompletionCreateParamsStreaming`` and ``...NonStreaming``.
* Anthropic Messages: ``MessageCreateParams*`` and the beta ``MessageCreateParams*`` (the
  mock serves the beta threads on the same route); ``betas`` is a header, not a field.
* Gemini Interactions: ``CreateModelInteractionParam`` | ``CreateAgentInteractionParam``
  (Speakeasy TypedDicts; the pydantic twin's ``alias`` gives the wire name).
* Gemini generateContent: the SDK builds the wire in ``models._GenerateContentParameters_to_mldev``
  and the converters it calls; they are read by AST (each ``setv(target, [wire], value)``
  under ``if getv(from_object, [field]) is not None``). A field a converter refuses for the
  Gemini API (``raise ValueError``) is not on the wire. A value passed through unconverted
  is the pydantic type's ``model_dump`` (Python field names); names are stored in
  snake_case, and the mock accepts the lowerCamelCase spelling too, as proto JSON does.

Spec format (plain JSON): ``{"sdk", "root", "types": {name: {"fields": {wire: T},
"required": [...]}}}`` where a type expression ``T`` is ``"str" | "int" | "float" |
"bool" | "null" | "any"``, ``{"enum": [...]}``, ``{"list": T}``, ``{"map": T}``,
``{"ref": name}`` or ``{"union": [T, ...]}``.
"""

from __future__ import annotations

import ast
import collections.abc
import enum
import importlib
import importlib.metadata
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

import typing_extensions as te

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "src" / "callgate" / "mock" / "_providers" / "request_specs"

# package -> {version: generation}
GENERATIONS = {
    "openai": {"3.57.0": "2026-11", "2.46.0": "2026-07-21"},
    "anthropic": {"2.14.0": "2026-11", "0.117.0": "2026-07-21"},
    "google-genai": {"3.6.1": "2026-11", "2.12.1": "2026-07-21"},
}
PACKAGES = {
    "openai_responses": "openai",
    "openai_chat_completions": "openai",
    "anthropic_messages": "anthropic",
    "gemini_interactions": "google-genai",
    "gemini_generate_content": "google-genai",
}

_LIST_ORIGINS = (list, collections.abc.Iterable, collections.abc.Sequence, tuple, set)
_MAP_ORIGINS = (dict, collections.abc.Mapping)


def generation(package: str) -> str | None:
    """The generation of ``package`` installed here, or ``None`` (not installed, or a
    version no baseline pins)."""
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None
    return GENERATIONS[package].get(version)


class _Reader:
    """Turns Python annotations into spec type expressions, collecting named objects."""

    def __init__(self, strip: str, aliases: Any = None) -> None:
        self.strip = strip  # module prefix dropped from type names
        self.types: dict[str, dict[str, Any]] = {}
        self.aliases = aliases or (lambda cls: {})

    def name(self, cls: type) -> str:
        module = cls.__module__
        if module.startswith(self.strip):
            module = module[len(self.strip) :]
        return f"{module}.{cls.__qualname__}"

    def typeddict(self, cls: type, *, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
        if not typing.get_type_hints(cls):
            return {"map": "any"}  # Speakeasy's free-form object: a TypedDict with no keys
        name = self.name(cls)
        if name not in self.types:
            self.types[name] = {}  # placeholder against recursion
            hints = typing.get_type_hints(cls, include_extras=True)
            required = set(cls.__required_keys__)  # type: ignore[attr-defined]
            aliases = self.aliases(cls)
            fields: dict[str, Any] = {}
            wire_required = []
            for key, hint in hints.items():
                if key in drop:
                    continue
                marker = typing.get_origin(hint)
                if marker is te.Required:
                    required.add(key)
                elif marker is te.NotRequired:  # (string annotations hide it from the class)
                    required.discard(key)
                wire, hint = self._alias(key, hint)
                wire = aliases.get(key, wire)
                if "-" in wire:
                    continue  # a header the SDK method sends (anthropic-user-profile-id)
                fields[wire] = self.expr(hint)
                if key in required:
                    wire_required.append(wire)
            self.types[name] = {"fields": fields, "required": sorted(wire_required)}
        return {"ref": name}

    def _alias(self, key: str, hint: Any) -> tuple[str, Any]:
        """The wire name (``PropertyInfo(alias=...)``) and the bare hint."""
        hint = _unwrap_required(hint)
        if typing.get_origin(hint) is te.Annotated:
            base, *meta = typing.get_args(hint)
            for item in meta:
                alias = getattr(item, "alias", None)
                if isinstance(alias, str):
                    return alias, base
            return key, base
        return key, hint

    def expr(self, hint: Any) -> Any:
        hint = _unwrap_required(hint)
        if isinstance(hint, te.TypeAliasType) or type(hint).__name__ == "TypeAliasType":
            return self.expr(hint.__value__)
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is te.Annotated:
            return self.expr(args[0])
        if hint is typing.Any or hint is object:
            return "any"
        if hint is type(None) or hint is None:
            return "null"
        if hint is str:
            return "str"
        if hint is bool:
            return "bool"
        if hint is int:
            return "int"
        if hint is float:
            return "float"
        if hint is bytes:
            return "str"  # base64 on the wire
        if origin is typing.IO or _named(hint, "PathLike"):
            return "str"  # a file the SDK sends base64-encoded
        if origin is typing.Literal or origin is te.Literal:
            return _literal(args)
        if origin in (typing.Union, types.UnionType):
            return union([self.expr(a) for a in args])
        if origin in _LIST_ORIGINS or _named(hint, "SequenceNotStr"):
            return {"list": self.expr(args[0]) if args else "any"}
        if origin in _MAP_ORIGINS:
            return {"map": self.expr(args[1]) if len(args) == 2 else "any"}
        if inspect.isclass(hint):
            if te.is_typeddict(hint):
                return self.typeddict(hint)
            if issubclass(hint, enum.Enum):
                return {"enum": sorted(str(m.value) for m in hint)}
            return self.other(hint)
        raise TypeError(f"cannot read annotation {hint!r}")

    def other(self, hint: type) -> Any:
        """A class that is no TypedDict: a pydantic model (an SDK response object the SDK
        accepts as input, dumped by alias), a date, a file type."""
        import pydantic

        if issubclass(hint, pydantic.BaseModel):
            return self.pydantic(hint)
        if hint.__name__ == "UnrecognizedStr":  # Speakeasy's open enum: any string
            return "str"
        if hint.__name__ == "UnrecognizedInt":
            return "int"
        if hint.__name__ in ("datetime", "date"):
            return "str"
        if hint.__name__ in ("Image", "File", "PathLike") or hint.__module__ in ("io", "os"):
            return "any"
        raise TypeError(f"cannot read class {hint!r}")

    def pydantic(self, cls: type) -> dict[str, Any]:
        name = self.name(cls)
        if name not in self.types:
            self.types[name] = {}
            fields, required = {}, []
            for field_name, info in cls.model_fields.items():  # type: ignore[attr-defined]
                wire = self.wire_name(field_name, info)
                fields[wire] = self.expr(info.annotation)
                if info.is_required():
                    required.append(wire)
            self.types[name] = {"fields": fields, "required": sorted(required)}
        return {"ref": name}

    def wire_name(self, field_name: str, info: Any) -> str:
        return info.alias or field_name


def _unwrap_required(hint: Any) -> Any:
    while typing.get_origin(hint) in (te.Required, te.NotRequired, typing.ClassVar):
        hint = typing.get_args(hint)[0]
    return hint


def _named(hint: Any, name: str) -> bool:
    origin = typing.get_origin(hint)
    return getattr(origin, "__name__", "") == name or getattr(hint, "__name__", "") == name


def _literal(values: tuple[Any, ...]) -> Any:
    flat: list[Any] = []
    for value in values:
        if typing.get_origin(value) is typing.Literal:
            flat += typing.get_args(value)
        else:
            flat.append(value.value if isinstance(value, enum.Enum) else value)
    bools = {v for v in flat if isinstance(v, bool)}
    others = [v for v in flat if not isinstance(v, bool)]
    parts: list[Any] = []
    if bools:
        parts.append("bool" if bools == {True, False} else {"enum": sorted(bools)})
    if others:
        parts.append({"enum": sorted(others, key=repr)})
    return union(parts)


def _key(expr: Any) -> str:
    return json.dumps(expr, sort_keys=True)


def union(members: list[Any]) -> Any:
    """A normalised union: nested unions flattened, duplicates dropped, string enums merged
    (and absorbed by a plain ``str``), ``any`` absorbing everything."""
    flat: list[Any] = []
    for member in members:
        flat += member["union"] if isinstance(member, dict) and "union" in member else [member]
    if "any" in flat:
        return "any"
    enums: dict[str, list[Any]] = {}
    out: list[Any] = []
    seen: set[str] = set()
    for member in flat:
        if isinstance(member, dict) and "enum" in member:
            kind = (
                "bool" if isinstance(member["enum"][0], bool) else type(member["enum"][0]).__name__
            )
            enums.setdefault(kind, [])
            enums[kind] += [v for v in member["enum"] if v not in enums[kind]]
            continue
        key = _key(member)
        if key not in seen:
            seen.add(key)
            out.append(member)
    for kind, values in enums.items():
        if kind in out or (kind == "int" and "float" in out):
            continue  # the plain type accepts every value of the enum
        if kind == "bool" and set(values) == {True, False}:
            out.append("bool")
        else:
            out.append({"enum": sorted(values, key=repr)})
    if "bool" in out:
        out = [m for m in out if not (isinstance(m, dict) and m.get("enum") in ([True], [False]))]
    return out[0] if len(out) == 1 else {"union": out}


def _merge_roots(reader: _Reader, classes: list[type], name: str, drop: frozenset[str]) -> str:
    """One root object whose fields are the union of ``classes``' fields (a field is
    required when every class requires it)."""
    fields: dict[str, list[Any]] = {}
    required: set[str] | None = None
    for cls in classes:
        ref = reader.typeddict(cls, drop=drop)["ref"]
        spec = reader.types.pop(ref)
        for wire, expr in spec["fields"].items():
            fields.setdefault(wire, []).append(expr)
        required = set(spec["required"]) if required is None else required & set(spec["required"])
    reader.types[name] = {
        "fields": {wire: union(exprs) for wire, exprs in sorted(fields.items())},
        "required": sorted(required or ()),
    }
    return name


# -- per protocol -----------------------------------------------------------------------------


def _openai() -> dict[str, Any]:
    from openai.types.responses import response_create_params as params

    reader = _Reader("openai.types.")
    classes = [params.ResponseCreateParamsNonStreaming, params.ResponseCreateParamsStreaming]
    root = _merge_roots(reader, classes, "ResponseCreateParams", frozenset())
    return {"root": {"ref": root}, "types": reader.types}


def _openai_chat() -> dict[str, Any]:
    from openai.types.chat import completion_create_params as params

    reader = _Reader("openai.types.")
    classes = [params.CompletionCreateParamsNonStreaming, params.CompletionCreateParamsStreaming]
    root = _merge_roots(reader, classes, "CompletionCreateParams", frozenset())
    return {"root": {"ref": root}, "types": reader.types}


def _anthropic() -> dict[str, Any]:
    from anthropic.types import message_create_params as plain
    from anthropic.types.beta import message_create_params as beta

    reader = _Reader("anthropic.types.")
    classes = [
        plain.MessageCreateParamsNonStreaming,
        plain.MessageCreateParamsStreaming,
        beta.MessageCreateParamsNonStreaming,
        beta.MessageCreateParamsStreaming,
    ]
    # Headers the create method takes beside the body (anthropic-beta, the workspace, ...).
    headers = frozenset({"betas", "user_profile_id", "workspace_id"})
    root = _merge_roots(reader, classes, "MessageCreateParams", headers)
    return {"root": {"ref": root}, "types": reader.types}


def _interactions() -> dict[str, Any]:
    from google.genai._gaos.types import interactions as gi

    def aliases(cls: type) -> dict[str, str]:
        module = sys.modules[cls.__module__]
        twin = getattr(module, cls.__name__.removesuffix("Param"), None)
        fields = getattr(twin, "model_fields", {})
        return {name: f.alias for name, f in fields.items() if f.alias and f.alias != name}

    reader = _Reader("google.genai._gaos.types.", aliases)
    root = reader.expr(gi.CreateModelInteractionParam | gi.CreateAgentInteractionParam)
    return {"root": root, "types": reader.types}


# -- generateContent: the converters, read by AST ---------------------------------------------

# The SDK's transformers (``t.t_*``) the mldev converters call, as the wire sees them.
_TRANSFORMED = {
    "t_schema": ("pydantic", "Schema"),
    "t_json_schema": ("expr", "any"),
    "t_speech_config": ("pydantic", "SpeechConfig"),
    "t_cached_content_name": ("expr", "str"),
    "t_bytes": ("expr", "str"),
}


class _GenAI(_Reader):
    """generateContent: converter output objects and pass-through pydantic models."""

    def __init__(self) -> None:
        super().__init__("google.genai.")
        from google.genai import models as sdk_models
        from google.genai import types as sdk_types

        self.sdk_types = sdk_types
        self.module = sdk_models
        self.source = inspect.getsource(sdk_models)
        self.tree = ast.parse(self.source)
        self.functions = {
            node.name: node for node in self.tree.body if isinstance(node, ast.FunctionDef)
        }

    def wire_name(self, field_name: str, info: Any) -> str:
        return field_name  # model_dump() without by_alias: the Python (snake_case) name

    def converter(self, cls_name: str) -> dict[str, Any]:
        """The object ``_<cls_name>_to_mldev`` builds (fields it sets on ``to_object``);
        the fields it sets on ``parent_object`` are returned under ``"parent"``."""
        name = f"mldev.{cls_name}"
        if name in self.types:
            return {"ref": name}
        self.types[name] = {}
        own, parent = self._convert(cls_name)
        self.types[name] = {"fields": own, "required": []}
        return {"ref": name, "parent": parent}

    def _convert(self, cls_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        function = self.functions[f"_{cls_name}_to_mldev"]
        cls = getattr(self.sdk_types, cls_name)
        own: dict[str, Any] = {}
        parent: dict[str, Any] = {}
        for node in ast.walk(function):
            if not isinstance(node, ast.If):
                continue
            field = _getv_field(node.test)
            if field is None:
                continue
            for stmt in node.body:
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                if not (isinstance(call, ast.Call) and _called(call) == "setv"):
                    continue
                target, path, value = call.args[0], call.args[1], call.args[2]
                wire = [e.value for e in path.elts]  # type: ignore[attr-defined]
                if wire[0] == "_url" or len(wire) != 1:
                    continue  # the model name goes into the path, not the body
                expr = self._value(value, cls, field)
                where = own if isinstance(target, ast.Name) and target.id == "to_object" else parent
                where[_snake(wire[0])] = expr
        return own, parent

    def _value(self, value: ast.expr, cls: type, field: str) -> Any:
        names = [_called(n) for n in ast.walk(value) if isinstance(n, ast.Call)]
        converted = [n for n in names if n.startswith("_") and n.endswith("_to_mldev")]
        is_list = isinstance(value, ast.ListComp)
        if converted:
            inner = self.converter(converted[0][1 : -len("_to_mldev")])
            inner.pop("parent", None)
            expr: Any = inner
        else:
            transformed = [n for n in names if n in _TRANSFORMED]
            if transformed:
                kind, what = _TRANSFORMED[transformed[0]]
                expr = what if kind == "expr" else self.pydantic(getattr(self.sdk_types, what))
                is_list = False
            else:
                annotation = cls.model_fields[field].annotation
                return self.expr(annotation)
        return {"list": expr} if is_list else expr


def _getv_field(test: ast.expr) -> str | None:
    """``getv(from_object, ['field']) is not None`` -> ``'field'``."""
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Call)):
        return None
    call = test.left
    if _called(call) != "getv" or len(call.args) != 2:
        return None
    path = call.args[1]
    if isinstance(path, ast.List) and len(path.elts) == 1:
        element = path.elts[0]
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            return element.value
    return None


def _called(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _generate_content() -> dict[str, Any]:
    reader = _GenAI()
    # GenerateContentParameters: contents (converted), config -> generationConfig, and the
    # config fields its converter moves to the request's top level.
    config = reader.converter("GenerateContentConfig")
    content = reader.converter("Content")
    content.pop("parent", None)
    fields = {"contents": {"list": content}, "generation_config": {"ref": config["ref"]}}
    fields.update(config["parent"])
    reader.types["GenerateContentRequest"] = {"fields": dict(sorted(fields.items())),
                                              "required": ["contents"]}  # fmt: skip
    return {"root": {"ref": "GenerateContentRequest"}, "types": reader.types}


READERS = {
    "openai_responses": _openai,
    "openai_chat_completions": _openai_chat,
    "anthropic_messages": _anthropic,
    "gemini_interactions": _interactions,
    "gemini_generate_content": _generate_content,
}


def generate(protocol: str) -> dict[str, Any] | None:
    """``protocol``'s spec from the SDK installed here, or ``None`` if no pinned one is."""
    package = PACKAGES[protocol]
    gen = generation(package)
    if gen is None:
        return None
    spec = READERS[protocol]()
    version = importlib.metadata.version(package)
    return {"sdk": f"{package}=={version}", "generation": gen, **_sorted(spec)}


def _sorted(spec: dict[str, Any]) -> dict[str, Any]:
    return {"root": spec["root"], "types": dict(sorted(spec["types"].items()))}


def path_of(protocol: str, gen: str) -> Path:
    return OUT / f"{protocol}.{gen}.json"


def dumps(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=None, separators=(",", ":"), sort_keys=False) + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for protocol in READERS:
        spec = generate(protocol)
        if spec is None:
            print(f"{protocol}: no pinned SDK installed here", file=sys.stderr)
            continue
        target = path_of(protocol, spec["generation"])
        target.write_text(dumps(spec), encoding="utf-8")
        print(f"{protocol}: {spec['sdk']} -> {target.relative_to(ROOT)} "
              f"({len(spec['types'])} types)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
