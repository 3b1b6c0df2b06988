"""The Gemini Interactions wire vocabulary, as data, per contract baseline.

Sources (read from the installed SDK, see ``contracts/gemini.md``):

- SSE events: ``google/genai/_gaos/types/interactions/interactionsseevent.py`` (google-genai
  3.6.1; the same seven types in 2.12.1). Dispatch is by ``event_type`` inside the JSON.
- Steps: ``_gaos/types/interactions/step.py``. google-genai 3.6.1 knows 23 step types,
  the 2026-07-21 baseline (google-genai 2.12.1) 17: the 15 of the first ``v1`` release plus
  the MCP server pair, exactly the union that SDK decodes (no ``retrieval_*``,
  ``tool_search_*`` or ``processing_*`` steps).
- Deltas: ``_gaos/types/interactions/stepdeltadata.py`` (28 in 3.6.1, 24 in 2.12.1: no
  ``tool_search_*`` / ``processing_*`` deltas; its ``retrieval_*`` deltas target steps the
  2026-07-21 baseline does not have, so they are refused there).
- Statuses: ``_gaos/types/interactions/interaction.py`` (``InteractionStatus``).

Per-event objects are deliberately *not* materialised as dataclasses: the parser routes
the decoded JSON dict itself through a table, so a 2,000-delta argument stream allocates
no wrapper objects. What each event must carry is declared here instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..contracts import REVISIONS

__all__ = [
    "CLIENT_STEP",
    "DELTA_TARGETS",
    "DONE",
    "EVENT_TYPES",
    "FAILED_STATUSES",
    "HOSTED_STEPS",
    "INPUT_STEPS",
    "INT32_MAX",
    "INT32_MIN",
    "PROVIDER",
    "STEP_ID_KEY",
    "STEP_TYPES",
    "baseline_deltas",
    "baseline_steps",
]

#: The provider tag every error of this room carries.
PROVIDER = "google"

DONE = "[DONE]"
CREATED = "interaction.created"
STATUS_UPDATE = "interaction.status_update"
STEP_START = "step.start"
STEP_DELTA = "step.delta"
STEP_STOP = "step.stop"
COMPLETED = "interaction.completed"
ERROR = "error"

#: Every SSE event type of the Interactions stream (``InteractionSSEEvent``), both baselines.
EVENT_TYPES: frozenset[str] = frozenset(
    {CREATED, STATUS_UPDATE, STEP_START, STEP_DELTA, STEP_STOP, COMPLETED, ERROR}
)

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

#: The only step the client executes.
CLIENT_STEP = "function_call"
#: Steps that only the client sends (history); a model turn never produces them.
INPUT_STEPS: frozenset[str] = frozenset({"user_input", "function_result"})

_STABLE_STEPS = (
    "user_input",
    "model_output",
    "thought",
    "function_call",
    "function_result",
    "code_execution_call",
    "code_execution_result",
    "url_context_call",
    "url_context_result",
    "google_search_call",
    "google_search_result",
    "file_search_call",
    "file_search_result",
    "google_maps_call",
    "google_maps_result",
)
_MCP_STEPS = ("mcp_server_tool_call", "mcp_server_tool_result")
_NEW_STEPS = (
    "retrieval_call",
    "retrieval_result",
    "tool_search_call",
    "tool_search_result",
    "processing_call",
    "processing_result",
)
_OLD, _CURRENT = REVISIONS

#: Known step discriminators per contract baseline.
STEP_TYPES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        _OLD: frozenset(_STABLE_STEPS + _MCP_STEPS),
        _CURRENT: frozenset(_STABLE_STEPS + _MCP_STEPS + _NEW_STEPS),
    }
)

_ALL_STEPS = _STABLE_STEPS + _MCP_STEPS + _NEW_STEPS

#: The identity key each known step requires (``id`` for calls, ``call_id`` for results).
STEP_ID_KEY: Mapping[str, str] = MappingProxyType(
    {
        **{name: "id" for name in _ALL_STEPS if name.endswith("_call")},
        **{name: "call_id" for name in _ALL_STEPS if name.endswith("_result")},
    }
)

_CONTENT_DELTAS = ("text", "image", "audio", "video", "document", "text_annotation_delta")
_THOUGHT_DELTAS = ("thought_summary", "thought_signature")
#: Hosted (server-run) call and result steps, every baseline's, in pair order.
HOSTED_STEPS: tuple[str, ...] = _STABLE_STEPS[5:] + _MCP_STEPS + _NEW_STEPS

#: Delta type -> the step types it may extend (current baseline).
DELTA_TARGETS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        **{name: frozenset({"model_output"}) for name in _CONTENT_DELTAS},
        **{name: frozenset({"thought"}) for name in _THOUGHT_DELTAS},
        "arguments_delta": frozenset({"function_call"}),
        "function_result": frozenset({"function_result"}),
        **{name: frozenset({name}) for name in HOSTED_STEPS},
    }
)
_OLD_DELTAS = frozenset(DELTA_TARGETS) - {
    "tool_search_call",
    "tool_search_result",
    "processing_call",
    "processing_result",
}
_DELTAS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: _OLD_DELTAS, _CURRENT: frozenset(DELTA_TARGETS)}
)

#: Terminal statuses that end the turn without a result (``ProviderError``).
FAILED_STATUSES: frozenset[str] = frozenset(
    {"failed", "cancelled", "incomplete", "budget_exceeded"}
)


def baseline_steps(baseline: str) -> frozenset[str]:
    """The step discriminators ``baseline`` knows (``baseline`` is valid)."""
    return STEP_TYPES[baseline]


def baseline_deltas(baseline: str) -> frozenset[str]:
    """The delta discriminators ``baseline`` knows (``baseline`` is valid)."""
    return _DELTAS[baseline]
