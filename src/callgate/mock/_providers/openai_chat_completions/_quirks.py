"""OpenAI Chat Completions in the mock: serving a compatibility profile's quirks.

``respond.profile`` names one of the room's profiles
(:data:`callgate.openai_chat_completions.PROFILES`); the mock then serves exactly the
quirks of the rules that profile relaxes (``docs/compat-profiles.md``), nothing else:

- ``missing_tool_index``: each call arrives whole in one delta (``id``, ``type``,
  ``function.name`` and all of ``function.arguments``) without ``index``;
- ``stop_with_calls``: a turn with calls finishes with ``stop`` (not ``tool_calls``);
- ``empty_identity``: the argument fragments after a call's first delta carry
  ``"id": ""`` and ``"type": ""``;
- ``eos_is_stop``: a turn that would finish with ``stop`` finishes with ``eos``.

A scripted ``status`` is served as scripted (before ``eos_is_stop``). Every stream still
ends with ``data: [DONE]``: no profile relaxes the terminal requirement. The strict gate
(no profile) refuses what the mock serves for a profile; the gate with that profile
accepts it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ....openai_chat_completions import PROFILES
from .._kit import Event

__all__ = ["check_profile", "finish_reason", "relaxes", "serve_stream"]

WHOLE: Final = "missing_tool_index"
STOP: Final = "stop_with_calls"
EMPTY: Final = "empty_identity"
EOS: Final = "eos_is_stop"


def check_profile(respond: Mapping[str, Any]) -> str | None:
    if "profile" in respond and respond["profile"] not in PROFILES:
        return f"profile is one of {', '.join(sorted(PROFILES))}"
    return None


def relaxes(respond: Mapping[str, Any]) -> frozenset[str]:
    """The rules the turn's serving profile relaxes (none without ``profile``)."""
    name = respond.get("profile")
    if name is None:
        return frozenset()
    return frozenset(PROFILES[name].relaxes)


def finish_reason(status: Any, has_calls: bool, rules: frozenset[str]) -> str:
    if isinstance(status, str):
        reason = status
    else:
        reason = "tool_calls" if has_calls and STOP not in rules else "stop"
    return "eos" if reason == "stop" and EOS in rules else reason


def _tool_call(chunk: Event) -> dict[str, Any] | None:
    choices = chunk.get("choices")
    if not choices:
        return None
    found = choices[0].get("delta", {}).get("tool_calls")
    return found[0] if found else None


def serve_stream(chunks: list[Event], rules: frozenset[str]) -> list[Event]:
    """One choice's chunks with the quirks of ``rules`` (``missing_tool_index`` needs the
    calls rendered with their whole arguments as one fragment)."""
    if not rules & {WHOLE, EMPTY}:
        return chunks
    out: list[Event] = []
    for chunk in chunks:
        call = _tool_call(chunk)
        if call is None:
            out.append(chunk)
        elif WHOLE in rules:
            if "id" in call:  # the first delta: it takes the arguments of the next chunk
                del call["index"]
                out.append(chunk)
            else:
                first = _tool_call(out[-1])
                if first is not None:
                    first["function"]["arguments"] += call["function"]["arguments"]
        else:  # EMPTY: later deltas repeat the identity as ""
            if "id" not in call:
                chunk["choices"][0]["delta"]["tool_calls"][0] = {"id": "", "type": "", **call}
            out.append(chunk)
    return out
