"""The hosted-tool half of the writer seam: hosted items and message annotations on the
stream (contract §9.3), used by :mod:`._render`.

A hosted item is scripted as the item it is when done; the stream shows it added in
progress and without results, then the tool's status pings in order (``completed`` only
when the item completed; a failed or incomplete item stops after the middle ping), the
code deltas of a code interpreter call, and the done item. Annotations stream as
``output_text.annotation.added``, in their list order, each once the text deltas reached
its end offset (counted in code points, as the offsets are).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = ["HOSTED", "Annotator", "Splitter", "added_hosted", "emit_hosted"]

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
