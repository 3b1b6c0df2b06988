"""OpenAI Responses: is this continuation one the real API would accept?

First ``openai_previous_response_found``: a ``previous_response_id`` must name a stored,
undeleted response of this session (OpenAI's 400 ``previous_response_not_found``).

The context of a request is the chain its ``previous_response_id`` names (that response
and the ones it continued) plus the items replayed in ``input``. An ``item_reference``
input item (``{"type": "item_reference", "id"}``; ``type`` is optional) stands for the
stored output item with that id and is replaced by it before the checks run. The checks,
in order:

0. ``openai_item_reference_found``: a reference must name an output item of a stored,
   undeleted response of this session (else OpenAI's 404).
1. ``openai_replay_matches_emitted``: an input item carrying the id of an item this
   session's mock emitted must equal it in what the model produced (a call's ``call_id``,
   ``name`` and ``arguments``; a message's role, text and annotations; a reasoning item's
   summary and ``encrypted_content``; a hosted item's ``action``, ``queries`` and
   ``results``, or ``container_id``, ``code`` and ``outputs``). Status fields and absent
   optional fields are not compared.
2. ``openai_reasoning_has_next_item``: a replayed reasoning item must be followed, right
   after it, by the item that followed it in the output (matched by ``id``, or by
   ``call_id`` for a call replayed without its optional ``id``).
3. ``openai_output_has_call``: a ``function_call_output`` must answer a call of the chain
   or a ``function_call`` replayed earlier in ``input``.
4. ``openai_call_has_output``: every call of the previous response, and every replayed
   ``function_call``, must get an output (a replayed call: later in ``input``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .._kit import Reply
from .._openai_common import openai_error

if TYPE_CHECKING:
    from ..._store_state import SessionStore


__all__ = ["Emitted", "check", "emitted_index"]

_PROTOCOL = "openai_responses"


@dataclasses.dataclass(slots=True)
class Emitted:
    """The output items this session's mock emitted, for replayed items to be checked."""

    items: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # id -> item
    owner: dict[str, str] = dataclasses.field(default_factory=dict)  # id -> record id
    # reasoning item id -> the item that followed it in the output
    followers: dict[str, dict[str, Any] | None] = dataclasses.field(default_factory=dict)


def emitted_index(store: SessionStore) -> Emitted:
    """This session's index (filled by the provider's ``index``)."""
    found: Emitted | None = store.indexes.get(_PROTOCOL)
    if found is None:
        found = store.indexes[_PROTOCOL] = Emitted()
    return found


def _previous_problem(store: SessionStore, body: dict[str, Any]) -> Reply | None:
    """``openai_previous_response_found``: the previous id names a stored response."""
    previous = body.get("previous_response_id")
    if previous is None or store.referable(_PROTOCOL, previous) is not None:
        return None
    return openai_error(
        400,
        f"Previous response with id '{previous}' not found.",
        param="previous_response_id",
        code="previous_response_not_found",
    )


def _items(body: dict[str, Any]) -> list[Any]:
    value = body.get("input")
    return value if isinstance(value, list) else []


def _is_reference(item: Any) -> bool:
    """``{"type": "item_reference", "id"}`` or ``{"id"}`` (the reference's ``type`` is
    optional)."""
    if not isinstance(item, dict):
        return False
    return item.get("type") == "item_reference" or set(item) == {"id"}


def _resolve(items: list[Any], store: SessionStore) -> tuple[list[Any], Any]:
    """``items`` with every resolvable reference replaced by the stored item, and the id
    of the first reference that names no stored item (``None`` if all resolve)."""
    resolved: list[Any] = []
    unknown: Any = None
    for item in items:
        found = None
        if _is_reference(item):
            item_id = item.get("id")
            owner = emitted_index(store).owner.get(item_id) if isinstance(item_id, str) else None
            if owner is not None and store.referable(_PROTOCOL, owner) is not None:
                found = emitted_index(store).items[item_id]
            elif unknown is None:
                unknown = item_id
        resolved.append(dict(found) if found is not None else item)
    return resolved, unknown


def _reference_problem(item_id: Any) -> Reply:
    shown = item_id if isinstance(item_id, str) else repr(item_id)
    return openai_error(
        404,
        f"Item with id '{shown}' not found. Items are not persisted when `store` is set to "
        "false. Try again with `store` set to true, or remove this item from your input.",
        param="input",
    )


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _abbreviated(value: str) -> str:
    return value if len(value) <= 8 else f"{value[:4]}...{value[-4:]}"


def _changed_field(sent: dict[str, Any], emitted: dict[str, Any]) -> str | None:
    """The first model-produced field of ``sent`` that differs from ``emitted``."""
    kind = emitted.get("type")
    if "type" in sent and sent["type"] != kind:
        return "type"
    if kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if key in sent and sent[key] != emitted.get(key):
                return key
    elif kind == "message":
        if "role" in sent and sent["role"] != emitted.get("role"):
            return "role"
        if "content" in sent and _texts(sent["content"]) != _texts(emitted.get("content")):
            return "content"
        if "content" in sent and _annotations(sent["content"]) not in (
            None,
            _annotations(emitted.get("content")),
        ):
            return "annotations"
    elif (
        kind == "reasoning"
        and "summary" in sent
        and _texts(sent["summary"]) != _texts(emitted.get("summary"))
    ):
        return "summary"
    for key in _HOSTED_FIELDS.get(str(kind), ()):
        if key in sent and sent[key] != emitted.get(key):
            return key
    return None


# What a hosted item's replay must keep as emitted (status is not compared, as elsewhere).
_HOSTED_FIELDS = {
    "web_search_call": ("action",),
    "file_search_call": ("queries", "results"),
    "code_interpreter_call": ("container_id", "code", "outputs"),
}


def _annotations(content: Any) -> list[Any] | None:
    """The annotations of a message's output_text parts (``None``: the replay sent none)."""
    if not isinstance(content, list):
        return None
    found = [p.get("annotations") for p in content if isinstance(p, dict) and "annotations" in p]
    return found or None


def _replay_problem(items: list[Any], store: SessionStore) -> Reply | None:
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        if _is_reference(item):  # left unresolved: openai_item_reference_found is off
            continue
        emitted = emitted_index(store).items.get(item["id"])
        if emitted is None:
            continue
        secret = item.get("encrypted_content")
        if (
            emitted.get("type") == "reasoning"
            and secret is not None
            and secret != emitted.get("encrypted_content")
        ):
            shown = _abbreviated(secret) if isinstance(secret, str) else "<not a string>"
            return openai_error(
                400,
                f"The encrypted content {shown} could not be verified.",
                code="invalid_encrypted_content",
            )
        field = _changed_field(item, emitted)
        if field is not None:
            return openai_error(
                400,
                f"Item '{item['id']}' of type '{emitted.get('type')}' does not match the item "
                f"with that id in the model's output: its '{field}' was changed.",
                param="input",
            )
    return None


def _same_item(sent: Any, emitted: dict[str, Any]) -> bool:
    if not isinstance(sent, dict):
        return False
    if "id" in sent:
        return bool(sent["id"] == emitted.get("id"))
    if emitted.get("type") == "function_call":
        return sent.get("type") == "function_call" and bool(
            sent.get("call_id") == emitted.get("call_id")
        )
    return bool(sent.get("type", "message") == emitted.get("type"))


def _reasoning_problem(items: list[Any], store: SessionStore) -> Reply | None:
    for position, item in enumerate(items):
        if not isinstance(item, dict) or item.get("type") != "reasoning":
            continue
        following = emitted_index(store).followers.get(str(item.get("id")))
        if following is None:
            continue
        after = items[position + 1] if position + 1 < len(items) else None
        if not _same_item(after, following):
            return openai_error(
                400,
                f"Item '{item['id']}' of type 'reasoning' was provided without its required "
                "following item.",
                param="input",
            )
    return None


def _output_problem(items: list[Any], chain_calls: set[str]) -> Reply | None:
    known: set[Any] = set(chain_calls)
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            known.add(item.get("call_id"))
        elif item.get("type") == "function_call_output" and item.get("call_id") not in known:
            return openai_error(
                400,
                f"No tool call found for function call output with call_id {item.get('call_id')}.",
                param="input",
            )
    return None


def _missing_output(items: list[Any], previous_calls: list[str]) -> Reply | None:
    last_output: dict[Any, int] = {}
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            last_output[item.get("call_id")] = position
    for call_id in previous_calls:
        if call_id not in last_output:
            return _no_output(call_id)
    for position, item in enumerate(items):
        if (
            isinstance(item, dict)
            and item.get("type") == "function_call"
            and last_output.get(item.get("call_id"), -1) < position
        ):
            return _no_output(item.get("call_id"))
    return None


def _no_output(call_id: Any) -> Reply:
    return openai_error(400, f"No tool output found for function call {call_id}.", param="input")


def check(store: SessionStore, body: dict[str, Any], on: Collection[str]) -> Reply | None:
    """The first problem the enabled checks find, as OpenAI's error; ``None`` if none."""
    if "openai_previous_response_found" in on:
        problem = _previous_problem(store, body)
        if problem is not None:
            return problem
    items = _items(body)
    previous = store.get(_PROTOCOL, body.get("previous_response_id"))
    if previous is None and not items:
        return None  # nothing replayed and nothing continued: the checks below pass
    chain_calls: set[str] = set()
    previous_calls: list[str] = []
    if previous is not None:
        previous_calls = [call_id for call_id, _ in previous.calls]
        for record in store.chain(previous):
            chain_calls.update(call_id for call_id, _ in record.calls)
    problem = None
    if items:
        store.index()
        items, unknown = _resolve(items, store)
        if unknown is not None and "openai_item_reference_found" in on:
            problem = _reference_problem(unknown)
    if problem is None and "openai_replay_matches_emitted" in on:
        problem = _replay_problem(items, store)
    if problem is None and "openai_reasoning_has_next_item" in on:
        problem = _reasoning_problem(items, store)
    if problem is None and "openai_output_has_call" in on:
        problem = _output_problem(items, chain_calls)
    if problem is None and "openai_call_has_output" in on:
        problem = _missing_output(items, previous_calls)
    return problem
