"""Gemini generateContent: does the replayed ``contents`` answer and sign as the API demands?

generateContent is stateless: every request replays the conversation, so each check reads
the request's ``contents`` (consecutive ``model`` Contents are one model turn: the SDK's
chat replays one Content per streamed chunk), and the signature checks compare it with
what this session's mock emitted. In order:

``gemini_gc_response_has_call``
    every ``functionResponse`` sits in the ``user`` Content right after a model turn with
    function calls, and names one of its calls (by ``id`` where both have one, else by name)
``gemini_gc_results_in_one_content``
    the calls of a model turn are answered in that one ``user`` Content, one
    ``functionResponse`` each (not spread over several Contents, none missing)
``gemini_gc_signature_present``
    a call of the current turn (after the newest ``user`` Content that is not only
    function responses) that the mock emitted with a ``thoughtSignature`` still carries
    one; older turns are not validated, as the API does not validate them
``gemini_gc_signature_unaltered``
    every replayed ``thoughtSignature`` carries the bytes the mock emitted on that part
    (compared decoded: the SDK re-encodes them URL-safe)
``gemini_gc_hosted_tools``
    the request's ``googleSearch`` / ``fileSearch`` / ``codeExecution`` / ``urlContext``
    tool objects are well formed (:mod:`._tools`); it runs first

On a ``functionCall`` part, either documented placeholder
(:mod:`._signatures`) passes both signature checks: Google tells
clients to send one where they hold no real signature.

The messages of the first three are the Developer API's as clients have reported them
(status 400 ``INVALID_ARGUMENT``); "Corrupted thought signature." likewise. Where the real
wording is unconfirmed the deviation is listed in ``docs/deviations.md``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from ....gemini_generate_content import same_signature
from .._kit import Reply
from ._signatures import is_placeholder
from ._tools import check_tools

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["CHECKS", "check"]

_PROTOCOL = "gemini_generate_content"
CHECKS = (
    "gemini_gc_response_has_call",
    "gemini_gc_results_in_one_content",
    "gemini_gc_signature_present",
    "gemini_gc_signature_unaltered",
    "gemini_gc_hosted_tools",
)
_FOLLOW = "Please ensure that function response turn comes immediately after a function call turn."
_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
_CORRUPTED = "Corrupted thought signature."


def _invalid(message: str) -> Reply:
    return Reply(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


def _missing(name: Any, position: int) -> Reply:
    return _invalid(
        "Function call is missing a thought_signature in functionCall parts. This is "
        "required for tools to work correctly, and missing thought_signature may lead to "
        f"degraded model performance. Additional data, function call `default_api:{name}` , "
        f"position {position}. Please refer to "
        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
    )


def _get(obj: Any, camel: str, snake: str) -> Any:
    return obj.get(camel, obj.get(snake)) if isinstance(obj, dict) else None


def _parts(content: Any) -> list[Any]:
    parts = _get(content, "parts", "parts")
    return parts if isinstance(parts, list) else []


def _role(content: Any) -> Any:
    return content.get("role", "user") if isinstance(content, dict) else None


def _calls(parts: list[Any]) -> list[dict[str, Any]]:
    found = (_get(p, "functionCall", "function_call") for p in parts)
    return [call for call in found if isinstance(call, dict)]


def _answers(parts: list[Any]) -> list[dict[str, Any]]:
    found = (_get(p, "functionResponse", "function_response") for p in parts)
    return [answer for answer in found if isinstance(answer, dict)]


def _turns(contents: list[Any]) -> Iterator[tuple[int, list[dict[str, Any]], int]]:
    """(index of the model turn's first Content, its calls, index of the Content after it)."""
    position = 0
    while position < len(contents):
        if _role(contents[position]) != "model":
            position += 1
            continue
        start, calls = position, []
        while position < len(contents) and _role(contents[position]) == "model":
            calls += _calls(_parts(contents[position]))
            position += 1
        yield start, calls, position


def _answers_call(answer: dict[str, Any], calls: list[dict[str, Any]]) -> bool:
    for call in calls:
        ids = answer.get("id"), call.get("id")
        if ids[0] and ids[1]:
            if ids[0] == ids[1]:
                return True
        elif answer.get("name") == call.get("name"):
            return True
    return False


def _replays(contents: list[Any]) -> bool:
    """Whether any Content is the model's or answers a call: else the result and
    signature checks have nothing to look at (a first request)."""
    for content in contents:
        role = _role(content)
        if role == "model" or (role == "user" and _answers(_parts(content))):
            return True
    return False


def _result_problem(contents: list[Any], on: Collection[str]) -> Reply | None:
    # user Content index -> the calls of the model turn right before it; and the user
    # Contents after that one which answer the same calls (results spread over Contents).
    answered: dict[int, list[dict[str, Any]]] = {}
    spread: set[int] = set()
    for _start, calls, after in _turns(contents):
        if not calls or after >= len(contents):
            continue
        answered[after] = calls
        later = after + 1
        while later < len(contents) and _role(contents[later]) == "user":
            answers = _answers(_parts(contents[later]))
            if not answers or not all(_answers_call(a, calls) for a in answers):
                break
            spread.add(later)
            later += 1
    for position, content in enumerate(contents):
        answers = _answers(_parts(content)) if _role(content) == "user" else []
        if not answers:
            continue
        if position in spread:
            if "gemini_gc_results_in_one_content" in on:
                return _invalid(_COUNT)
            continue
        asked = answered.get(position)
        if "gemini_gc_response_has_call" in on and (
            asked is None or not all(_answers_call(a, asked) for a in answers)
        ):
            return _invalid(_FOLLOW)
    if "gemini_gc_results_in_one_content" in on:
        for position, calls in answered.items():
            if len(_answers(_parts(contents[position]))) != len(calls):
                return _invalid(_COUNT)
    return None


def _emitted(store: SessionStore) -> tuple[dict[Any, list[Any]], list[str]]:
    """The signatures (``None``: unsigned) the mock emitted on each call it sent in this
    session, by call key, and every signature it emitted."""
    calls: dict[Any, list[Any]] = {}
    signatures: list[str] = []
    for record in store.records.values():
        if record.protocol != _PROTOCOL:
            continue
        received = record.received
        chunks = [received.body] if received.body is not None else list(received.events)
        for chunk in chunks:
            for candidate in chunk.get("candidates", ()):
                for part in candidate.get("content", {}).get("parts", ()):
                    if "thoughtSignature" in part:
                        signatures.append(part["thoughtSignature"])
                    if "functionCall" in part:
                        key = _key(part["functionCall"])
                        calls.setdefault(key, []).append(part.get("thoughtSignature"))
    return calls, signatures


def _key(call: dict[str, Any], emitted: Collection[Any] | None = None) -> Any:
    """A call's key: its id, else (name, arguments). With ``emitted``: an id the mock never
    sent (the Vercel AI SDK and LiteLLM invent one for an id-less call) falls back to
    (name, arguments), so the replayed call still meets the one the mock emitted."""
    if isinstance(call.get("id"), str) and (emitted is None or call["id"] in emitted):
        return call["id"]
    args = json.dumps(call.get("args") or {}, sort_keys=True, separators=(",", ":"))
    return (call.get("name"), args)


def _turn_start(contents: list[Any]) -> int:
    """Where the current turn begins: the newest ``user`` Content with standard content (a
    part that is no ``functionResponse``). The API validates the signatures of the current
    turn only. ``-1`` when there is none (every Content is then of the current turn)."""
    for position in range(len(contents) - 1, -1, -1):
        content = contents[position]
        if _role(content) == "user" and any(
            _get(p, "functionResponse", "function_response") is None for p in _parts(content)
        ):
            return position
    return -1


def _signature_problem(
    store: SessionStore, contents: list[Any], on: Collection[str]
) -> Reply | None:
    emitted, signatures = _emitted(store)
    current = _turn_start(contents)
    for position, content in enumerate(contents):
        if _role(content) != "model":
            continue
        for part in _parts(content):
            sent = _get(part, "thoughtSignature", "thought_signature")
            call = _get(part, "functionCall", "function_call")
            if isinstance(call, dict):
                if sent is not None and is_placeholder(sent):
                    continue  # Google's documented bypass of the validator
                key = _key(call, emitted)
                if key in emitted:
                    expected = emitted[key]
                    if sent is None:
                        required = None not in expected and position > current
                        if required and "gemini_gc_signature_present" in on:
                            return _missing(call.get("name"), position + 1)
                        continue
                    if "gemini_gc_signature_unaltered" in on and not any(
                        e is not None and same_signature(sent, e) for e in expected
                    ):
                        return _invalid(_CORRUPTED)
                    continue
            if (
                sent is not None
                and "gemini_gc_signature_unaltered" in on
                and not any(same_signature(sent, known) for known in signatures)
            ):
                return _invalid(_CORRUPTED)
    return None


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The first problem the enabled checks find, as Google's 400; ``None`` if none."""
    if "gemini_gc_hosted_tools" in on:
        refused = check_tools(body)
        if refused is not None:
            return refused
    contents = body.get("contents")
    if not isinstance(contents, list) or not _replays(contents):
        return None
    problem = _result_problem(contents, on)
    if problem is not None:
        return problem
    if "gemini_gc_signature_present" in on or "gemini_gc_signature_unaltered" in on:
        return _signature_problem(store, contents, on)
    return None
