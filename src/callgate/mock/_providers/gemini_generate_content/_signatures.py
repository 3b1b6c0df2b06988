"""Gemini generateContent: thought signatures as Gemini 3 models emit them, and the two
placeholders the API takes in place of one.

What the mock renders (Google's thought-signature guide, ``docs/deviations.md``, section
"Gemini thought signatures"): a Gemini 3 model signs every response. With function calls,
the signature rides on the first ``functionCall`` part of the response (parallel calls:
only the first is signed; sequential steps: each response's first call). Without a call,
it rides on the last part the model returns. A Gemini 2.x model signs nothing unless the
script says so. Which models are Gemini 3: a model name ``gemini-<major>...`` with
``major >= 3`` (``models/`` prefix allowed); a turn overrides it with
``respond.thought_signatures`` (true or false). A scripted ``reasoning.signature`` is
always rendered, where it was before.

What the mock accepts (``gemini_gc_signature_*`` checks): the documented placeholders
``skip_thought_signature_validator`` and ``context_engineering_is_the_way_to_go`` on a
``functionCall`` part, sent as the literal text (as REST users and the Vercel AI SDK write
it) or as its base64 (as the Python SDK encodes ``bytes``: pydantic-ai).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from ....gemini_generate_content import same_signature

__all__ = ["PLACEHOLDERS", "is_placeholder", "place_signature", "signs"]

PLACEHOLDERS = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
_ENCODED = tuple(base64.b64encode(p.encode("ascii")).decode("ascii") for p in PLACEHOLDERS)
_MAJOR = re.compile(r"(?:models/)?gemini-(\d+)")


def gemini_3(model: str) -> bool:
    """Whether ``model`` names a Gemini 3 (or later) model: ``gemini-3-flash-preview``,
    ``models/gemini-3.1-pro-preview``, not ``gemini-2.5-flash`` or ``gemini-flash-latest``."""
    found = _MAJOR.match(model)
    return found is not None and int(found.group(1)) >= 3


def signs(respond: Mapping[str, Any], model: str) -> bool:
    """Whether a turn with no scripted signature is signed: ``respond.thought_signatures``
    when given, else whether the request's model is a Gemini 3 model."""
    chosen = respond.get("thought_signatures")
    return gemini_3(model) if chosen is None else chosen is True


def place_signature(parts: list[dict[str, Any]], seed: str) -> None:
    """Sign scripted ``parts`` in place, as a Gemini 3 model does: the first function call,
    else the last text part (its last streamed piece). ``seed`` (a deterministic id of the
    turn) becomes the signature's bytes, so every response carries its own signature.
    Hosted-tool parts (``raw``) are never signed here."""
    signature = base64.b64encode(b"callgate-thought:" + seed.encode("ascii")).decode("ascii")
    calls = [part for part in parts if "function_call" in part]
    texts = [part for part in parts if "text" in part]
    if calls:
        calls[0]["signature"] = signature
    elif texts and texts[-1] is parts[-1]:
        texts[-1]["signature"] = signature


def is_placeholder(value: Any) -> bool:
    """Whether a replayed ``thoughtSignature`` is one of the documented placeholders, as
    text or as the base64 of that text."""
    return value in PLACEHOLDERS or any(same_signature(value, known) for known in _ENCODED)
