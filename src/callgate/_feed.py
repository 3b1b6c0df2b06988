"""The parser boundary every room shares: what ``feed_event`` and ``parse_response`` take.

For now it holds one step of that boundary, the input check: a decoded wire object is a
mapping, or an official SDK object, converted here once, in the JSON mode that keeps wire
values (strings, never ``datetime`` or ``bytes``) and wire field names:

- openai, anthropic and the google-genai Interactions models: ``to_dict(mode="json")``
  (their generated base models: aliases = wire names, only the fields the wire set);
- the other google-genai models (generateContent): pydantic
  ``model_dump(mode="json", by_alias=True, exclude_none=True)`` (aliases = the wire's
  camelCase; ``exclude_none`` drops the fields the wire did not send, which the SDK holds
  as ``None``).

A plain dict passes first, untouched (the hot path pays one type check). Anything else is
a :class:`~callgate.UsageError` that leaves the parser as it was.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ._errors import UsageError

__all__ = ["wire_mapping"]


def wire_mapping(obj: Any, what: str, *, sdk_only: Collection[str] = ()) -> Mapping[str, Any]:
    """``obj`` as a wire mapping: a mapping as it is, an SDK object converted once.

    ``sdk_only`` names top-level fields the SDK adds to a converted object that no wire
    carries (google-genai's ``sdkHttpResponse``...): they are dropped. Raises
    :class:`UsageError` (naming ``what``, the callable) for any other type, or for an SDK
    object whose conversion fails or does not give a JSON object.
    """
    if type(obj) is dict or isinstance(obj, Mapping):
        return obj
    kind = type(obj)
    try:
        if callable(getattr(kind, "to_dict", None)):
            value = obj.to_dict(mode="json")
        elif callable(getattr(kind, "model_dump", None)):
            value = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            raise UsageError(
                f"{what} takes a mapping or an official SDK object, not {kind.__name__}"
            )
    except UsageError:
        raise
    except Exception as exc:  # an SDK's own serialisation error, whatever its class
        raise UsageError(f"{what}: the {kind.__name__} could not be converted: {exc}") from exc
    if type(value) is not dict:
        raise UsageError(f"{what}: the {kind.__name__} did not convert to a JSON object")
    for key in sdk_only:
        value.pop(key, None)
    return value
