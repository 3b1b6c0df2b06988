"""Hosted-tool projection of a Chat Completions turn: ``turn.citations``, ``turn.hosted_calls``.

Chat Completions runs one hosted tool itself: web search (``web_search_options`` with a
search model). Its only trace on the wire is the message's ``annotations``:
``{"type": "url_citation", "url_citation": {"url", "title", "start_index",
"end_index"}}`` (``ChatCompletionMessage.annotations`` in both SDK generations). Each
becomes one :class:`callgate.Citation` (``kind`` the annotation type, ``source`` the URL,
``start``/``end`` the character indices as given). The wire names no search call, so
``hosted_calls`` is always empty.

Telemetry (docs/required-fields.md): nothing here refuses a turn; what cannot be read is a
``turn.warnings`` entry.
"""

from __future__ import annotations

from typing import Any

from .._hosted import Citation, HostedCall

__all__ = ["project"]


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def project(
    extra: dict[str, Any],
) -> tuple[tuple[HostedCall, ...], tuple[Citation, ...], list[str]]:
    """``(hosted_calls, citations, warnings)`` of a message's extra fields."""
    annotations = extra.get("annotations")
    if annotations is None:
        return (), (), []
    if type(annotations) is not list:
        return (), (), ["message 'annotations' is not a list: no citations"]
    citations: list[Citation] = []
    warnings: list[str] = []
    for position, annotation in enumerate(annotations):
        kind = annotation.get("type") if type(annotation) is dict else None
        if type(kind) is not str:
            warnings.append(f"annotation #{position} has no type: skipped")
            continue
        body = annotation.get(kind)
        body = body if type(body) is dict else {}
        url = body.get("url")
        citations.append(
            Citation(
                kind=kind,
                source=url if type(url) is str else None,
                start=_int(body.get("start_index")),
                end=_int(body.get("end_index")),
                raw=annotation,
            )
        )
    return (), tuple(citations), warnings
