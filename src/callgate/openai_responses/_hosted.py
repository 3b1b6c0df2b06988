"""Hosted tools on the Responses wire: their item shapes, their status pings, the tools
that may produce them, and the projection into ``Turn.hosted_calls`` / ``Turn.citations``.

Hosted items (``web_search_call``, ``file_search_call``, ``code_interpreter_call``,
``image_generation_call``) ran on OpenAI's side: they are kept raw for replay, never
released as calls. Their results arrive only in the ``output_item.done`` item and the
terminal Response (contract §9.2-9.3); the stream carries payload-less status pings, in a
fixed order per tool, and ``code_interpreter_call_code`` deltas.

Citations are the ``annotations`` of ``output_text`` parts (§9.4). ``start``/``end`` are
the provider's ``start_index``/``end_index`` for the span kinds (``url_citation``,
``container_file_citation``); a ``file_citation`` gives one insertion ``index`` (``start``,
with ``end`` ``None``); a ``file_path``'s ``index`` is a position in a file list, not in the
text, so both are ``None`` (it stays in ``raw``). Hosted-tool details (a search's
``action``, results, outputs) and citations are telemetry: nothing about them refuses a
turn; a citation the projection cannot read fully is a ``turn.warnings`` entry.

The writer side (used by :mod:`._render`, the mock's seam) lives here too, beside the
reader: a hosted item is scripted as the item it is when done; the stream shows it added in
progress and without results, then the tool's status pings in order (``completed`` only
when the item completed; a failed or incomplete item stops after the middle ping), the code
deltas of a code interpreter call, and the done item. Annotations stream as
``output_text.annotation.added``, in their list order, each once the text deltas reached
its end offset (counted in code points, as the offsets are).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from .._errors import (
    SchemaError,
    SequenceError,
    UsageError,
)
from .._hosted import Citation, HostedCall
from .._json import json_copy
from .._limits import Limits, room_for_one_more

__all__ = [
    "ANNOTATION_FIELDS",
    "HOSTED",
    "PING_ORDER",
    "PRODUCERS",
    "Annotator",
    "Splitter",
    "add_annotation",
    "added_hosted",
    "annotation_problem",
    "check_declared",
    "check_not_stopped",
    "check_streamed_annotations",
    "declared_tools",
    "emit_hosted",
    "project",
    "request_copy",
]

# Which declared tool types may produce each hosted item (the SDK tool runner's
# `_SERVER_ITEMS`, openai 3.57.0).
PRODUCERS: Final = MappingProxyType(
    {
        "web_search_call": frozenset(
            {
                "web_search",
                "web_search_2025_08_26",
                "web_search_preview",
                "web_search_preview_2025_03_11",
            }
        ),
        "file_search_call": frozenset({"file_search"}),
        "code_interpreter_call": frozenset({"code_interpreter"}),
        "image_generation_call": frozenset({"image_generation"}),
    }
)
# The status pings of each tool, in the only order they may come (each at most once).
PING_ORDER: Final = MappingProxyType(
    {
        "web_search_call": ("in_progress", "searching", "completed"),
        "file_search_call": ("in_progress", "searching", "completed"),
        "code_interpreter_call": ("in_progress", "interpreting", "completed"),
        "image_generation_call": ("in_progress", "generating", "completed"),
    }
)
_STR = (str,)
_INT = (int,)
# The fields of each annotation shape (all required in response_output_text.py, 3.57.0):
# one lacking is a warning on the turn, never a refusal (citations are telemetry).
ANNOTATION_FIELDS: Final = MappingProxyType(
    {
        "url_citation": (
            ("url", _STR), ("title", _STR), ("start_index", _INT), ("end_index", _INT),
        ),
        "file_citation": (("file_id", _STR), ("filename", _STR), ("index", _INT)),
        "container_file_citation": (
            ("container_id", _STR), ("file_id", _STR), ("filename", _STR),
            ("start_index", _INT), ("end_index", _INT),
        ),
        "file_path": (("file_id", _STR), ("index", _INT)),
    }
)  # fmt: skip


def annotation_problem(annotation: Any, where: str) -> str | None:
    """What is wrong with one ``output_text`` annotation as a citation, or ``None``.

    Annotations are telemetry: a problem is a warning on the turn, never a refusal. An
    annotation type callgate does not know is no problem (it is projected with no source
    and no offsets); a known type lacking a field, or holding one of another type, is."""
    if type(annotation) is not dict:
        return f"{where} is not an object"
    kind = annotation.get("type")
    if type(kind) is not str:
        return f"{where} has no string 'type'"
    for key, kinds in ANNOTATION_FIELDS.get(kind, ()):
        if type(annotation.get(key)) not in kinds:
            return f"{where} ({kind}) lacks a {kinds[0].__name__} {key!r}"
    return None


def declared_tools(request: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The tool types a request declared (``None``: no request was given)."""
    if request is None:
        return None
    tools = request.get("tools")
    if tools is None:
        return frozenset()
    if type(tools) is not list:
        raise SchemaError("request 'tools' is not a list")
    found = set()
    for tool in tools:
        kind = tool.get("type") if type(tool) is dict else None
        if type(kind) is not str:
            raise SchemaError("request tool has no string 'type'")
        found.add(kind)
    return frozenset(found)


def check_declared(kind: str, declared: frozenset[str] | None, where: str) -> None:
    """A hosted item needs one of its producing tools declared in the request (when the
    caller passed the request): :class:`SequenceError` otherwise."""
    producers = PRODUCERS.get(kind)
    if declared is None or producers is None or producers & declared:
        return
    raise SequenceError(
        f"{where} is a {kind}, but the request declared none of {sorted(producers)}"
    )


def check_not_stopped(items: tuple[dict[str, Any], ...]) -> None:
    """Function calls run only after every hosted item of the turn completed: a failed or
    incomplete hosted item stops the turn (:class:`SequenceError`), as the SDK's tool runner
    does ("stop before dependent local effects"). The turn on the error shows it."""
    for index, item in enumerate(items):
        if item.get("type") in PRODUCERS and item.get("status") not in (None, "completed"):
            raise SequenceError(
                f"hosted {item['type']} {item.get('id')!r} (output_index={index}) has status "
                f"{item.get('status')!r}: the turn's function calls are not released"
            )


def request_copy(request: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The request body a caller passed to a parser, copied as JSON; :class:`UsageError`
    for another type, a non-JSON value or a ``tools`` list without typed tool objects."""
    if request is None:
        return None
    if not isinstance(request, Mapping):
        raise UsageError(f"request must be a mapping, not {type(request).__name__}")
    copied: dict[str, Any] = json_copy(dict(request), what="request")
    try:
        declared_tools(copied)
    except SchemaError as exc:  # a malformed tools list is the caller's argument error
        raise UsageError(exc.message) from None
    return copied


def add_annotation(
    streamed: list[Any], obj: dict[str, Any], limits: Limits, warnings: list[str]
) -> None:
    """Apply one ``output_text.annotation.added`` to its part's ``streamed`` list, bounded
    by ``max_items_per_turn``. Citation bookkeeping never refuses a turn: an annotation
    that is no citation, or an ``annotation_index`` other than the next one, is a warning
    (the done part's ``annotations`` are what the turn keeps)."""
    annotation = obj.get("annotation")
    if annotation is not None:  # nullable in openai 3.57.0 (untyped in 2.46.0)
        problem = annotation_problem(annotation, "output_text.annotation.added 'annotation'")
        if problem is not None:
            warnings.append(problem)
    index = obj.get("annotation_index")
    if index != len(streamed) or type(index) is not int:
        warnings.append(f"annotation_index {index!r} where {len(streamed)} was next")
    room_for_one_more(len(streamed), limits, "annotations in one part")
    streamed.append(annotation)


def check_streamed_annotations(streamed: list[Any], final: Any, warnings: list[str]) -> None:
    """The annotations streamed by ``annotation.added`` are the part's, in order (a null
    one, allowed by the 3.57.0 model, only holds its place); a difference is a warning."""
    same = type(final) is list and len(final) == len(streamed)
    if same:
        same = all(
            given is None or given == done for given, done in zip(streamed, final, strict=True)
        )
    if not same:
        warnings.append("content_part.done annotations differ from the streamed ones")


def project(
    items: tuple[dict[str, Any], ...],
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...], tuple[str, ...]]:
    """``(hosted_calls, citations, warnings)`` of a turn's raw output items, in wire order.
    Never raises: an annotation that is no citation is skipped with a warning, a known
    one lacking a field is projected with ``None`` there and a warning."""
    calls: list[HostedCall] = []
    citations: list[Citation] = []
    warnings: list[str] = []
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind in PRODUCERS:
            item_id, status = item.get("id"), item.get("status")
            calls.append(
                HostedCall(
                    tool=str(kind),
                    id=item_id if type(item_id) is str else None,
                    status=status if type(status) is str else None,
                    raw=item,
                )
            )
        elif kind == "message" and type(item.get("content")) is list:
            for n, part in enumerate(item["content"]):
                if type(part) is not dict or part.get("type") != "output_text":
                    continue
                annotations = part.get("annotations")
                where = f"output item {index} content {n}"
                if annotations is not None and type(annotations) is not list:
                    warnings.append(f"{where} 'annotations' is not a list")
                    continue
                for k, annotation in enumerate(annotations or ()):
                    problem = annotation_problem(annotation, f"{where} annotation {k}")
                    if problem is not None:
                        warnings.append(problem)
                    if type(annotation) is dict and type(annotation.get("type")) is str:
                        citations.append(_citation(annotation))
    return tuple(calls), tuple(citations), tuple(warnings)


def _citation(annotation: dict[str, Any]) -> Citation:
    kind = annotation["type"]
    source = annotation.get("url") if kind == "url_citation" else annotation.get("file_id")
    if kind == "file_citation":
        start, end = annotation.get("index"), None
    elif kind == "file_path":
        start = end = None
    else:
        start, end = annotation.get("start_index"), annotation.get("end_index")
    return Citation(
        kind=kind,
        source=source if type(source) is str else None,
        start=start if type(start) is int else None,
        end=end if type(end) is int else None,
        raw=annotation,
    )


# -- the writer side ----------------------------------------------------------------------

Splitter = Callable[[str], list[str]]
"""Turns a text into the pieces streamed as deltas (a chunk plan)."""

# The hosted items the writer renders, with their status pings in order.
HOSTED: Final = {
    "web_search_call": ("in_progress", "searching", "completed"),
    "file_search_call": ("in_progress", "searching", "completed"),
    "code_interpreter_call": ("in_progress", "interpreting", "completed"),
}


def added_hosted(item: dict[str, Any]) -> dict[str, Any]:
    """A hosted item as ``output_item.added`` shows it: in progress, without results (a
    search action only says it is a search; the strict SDK needs ``action``, ``queries``
    and ``container_id`` there)."""
    added: dict[str, Any] = {"id": item["id"], "type": item["type"], "status": "in_progress"}
    if item["type"] == "web_search_call":
        action = item["action"]
        added["action"] = {"type": "search"} if action["type"] == "search" else action
    elif item["type"] == "file_search_call":
        added["queries"] = []
    else:
        added |= {"container_id": item["container_id"], "code": "", "outputs": None}
    return added


def _end(annotation: Mapping[str, Any], text_length: int) -> int:
    """Where an annotation's citation ends (one without a text span: after the text)."""
    kind = annotation.get("type")
    if kind == "file_citation":
        return int(annotation["index"])
    if kind == "file_path" or "end_index" not in annotation:
        return text_length  # no span in the text: after the whole text
    return int(annotation["end_index"])


class Annotator:
    """Streams one part's annotations as its text deltas pass their end offsets."""

    def __init__(
        self, emit: Any, item_id: str, index: int, annotations: list[Mapping[str, Any]]
    ) -> None:
        self._emit, self._item_id, self._index = emit, item_id, index
        self._annotations = annotations
        self._sent = 0  # code points streamed so far
        self._next = 0

    def after(self, piece: str) -> None:
        """``piece`` was streamed: send the annotations it completes."""
        self._sent += len(piece)
        self._flush(self._sent)

    def rest(self) -> None:
        """The text is whole: send every annotation left."""
        self._flush(None)

    def _flush(self, upto: int | None) -> None:
        while self._next < len(self._annotations):
            annotation = self._annotations[self._next]
            if upto is not None and _end(annotation, upto + 1) > upto:
                return
            self._emit(
                "response.output_text.annotation.added",
                item_id=self._item_id,
                output_index=self._index,
                content_index=0,
                annotation_index=self._next,
                annotation=copy.deepcopy(dict(annotation)),
            )
            self._next += 1


def emit_hosted(emit: Any, index: int, item: Mapping[str, Any], split: Splitter) -> None:
    kind, item_id = item["type"], item["id"]
    phases = HOSTED[kind]
    pings = phases if item["status"] == "completed" else phases[:2]
    emit(f"response.{kind}.{pings[0]}", item_id=item_id, output_index=index)
    code = item.get("code")
    if kind == "code_interpreter_call" and type(code) is str:
        for piece in split(code):
            emit(
                "response.code_interpreter_call_code.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        emit(
            "response.code_interpreter_call_code.done",
            item_id=item_id,
            output_index=index,
            code=code,
        )
    for phase in pings[1:]:
        emit(f"response.{kind}.{phase}", item_id=item_id, output_index=index)
