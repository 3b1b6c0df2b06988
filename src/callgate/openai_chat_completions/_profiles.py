"""Named compatibility profiles: which strict rules an OpenAI-compatible server needs relaxed.

The gate is strict by default (OpenAI's own wire, ``docs/contracts/openai-chat-completions.md``).
A :class:`Profile` is a small record of exactly which of the relaxable rules below it
relaxes, and the public source that shows each server needs it. No profile relaxes the
terminal requirement: a stream must end with ``data: [DONE]`` after its ``finish_reason``,
an in-stream error is always a refusal, and every released call needs an id, a name and
arguments that are a strict JSON object. ``docs/compat-profiles.md`` is the reader's copy.

The relaxable rules:

- ``missing_tool_index``: a tool-call delta without ``index`` is accepted when it carries
  the whole call (``id``, ``function.name`` and ``function.arguments``); it takes the next
  free index. A partial delta without ``index`` is still refused.
- ``stop_with_calls``: ``finish_reason: "stop"`` beside complete tool calls releases them
  (strict: only when the request's ``tool_choice`` forced that one function).
- ``empty_identity``: on a later delta of an index, ``id``, ``type`` or ``function.name``
  sent as ``""`` reads as absent (strict: a changed id or name is refused).
- ``eos_is_stop``: ``finish_reason: "eos"`` reads as ``"stop"`` (strict: an unknown
  finish reason fails closed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._errors import UsageError

__all__ = ["PROFILES", "RULES", "Profile", "get_profile"]

RULES: frozenset[str] = frozenset(
    {"missing_tool_index", "stop_with_calls", "empty_identity", "eos_is_stop"}
)


@dataclasses.dataclass(frozen=True, slots=True)
class Profile:
    """One server's relaxations: ``relaxes`` maps each rule it relaxes (one of
    :data:`RULES`) to the public sources that show the server needs it."""

    name: str
    server: str
    relaxes: Mapping[str, tuple[str, ...]]

    def allows(self, rule: str) -> bool:
        return rule in self.relaxes


_GH = "https://github.com/"
_MAGENTIC = _GH + "jackmpcollins/magentic/blob/"
_CASSETTES = "/tests/chat_model/cassettes/"
_OPENINFERENCE = (
    _GH + "Arize-ai/openinference/blob/8ea4b0f19face88b75889c049ff67aec23801a11/python/"
    "instrumentation/openinference-instrumentation-mistralai/tests/openinference/"
    "instrumentation/mistralai/cassettes/test_instrumentor/"
)
#: The public recordings (tests/fixtures/corpus/openai_chat_completions) that show a quirk.
RECORDED: Mapping[str, str] = MappingProxyType(
    {
        "ollama": _MAGENTIC
        + "21aedb856a196ca5a4cbe9d9cfc516502250965a"
        + _CASSETTES
        + "test_openai_chat_model_ollama/"
        + "test_openai_chat_model_acomplete_ollama[Return True.-output_types1-bool].yaml",
        "mistral": _OPENINFERENCE
        + "test_synchronous_streaming_chat_completions_with_tool_call_response_emits_"
        + "expected_spans[False].yaml",
        "openrouter": _MAGENTIC
        + "1bf6eedf5ed97447d46791cf7a6679460cd30f9d"
        + _CASSETTES
        + "test_openrouter_chat_model/"
        + "test_openrouter_chat_model_acomplete_raises_tool_schema_parse_error.yaml",
    }
)


def _profile(name: str, server: str, **relaxes: tuple[str, ...]) -> Profile:
    if not set(relaxes) <= RULES or not all(relaxes.values()):
        raise UsageError(f"profile {name!r}: unknown rule or a rule without a source")
    return Profile(name, server, MappingProxyType(relaxes))


#: The shipped profiles, by name.
PROFILES: Mapping[str, Profile] = MappingProxyType(
    {
        p.name: p
        for p in (
            _profile(
                "ollama",
                "Ollama (/v1/chat/completions)",
                missing_tool_index=(
                    _GH + "ollama/ollama/issues/7881",
                    RECORDED["ollama"],
                ),
                stop_with_calls=(
                    _GH + "ollama/ollama/issues/7963",
                    _GH + "ollama/ollama/issues/5995",
                ),
            ),
            _profile(
                "mistral",
                "Mistral La Plateforme (api.mistral.ai/v1/chat/completions)",
                missing_tool_index=(
                    "https://pypi.org/project/mistralai/3.7.0/",
                    RECORDED["mistral"],
                ),
            ),
            _profile(
                "openrouter",
                "OpenRouter (openrouter.ai/api/v1/chat/completions)",
                empty_identity=(
                    RECORDED["openrouter"],
                    _GH + "anomalyco/opencode/pull/40969",
                ),
            ),
            _profile(
                "vllm",
                "vLLM (vllm serve, OpenAI-compatible server)",
                stop_with_calls=(
                    _GH + "vllm-project/vllm/pull/25054",
                    _GH + "vllm-project/vllm/issues/9209",
                ),
                empty_identity=(_GH + "InternLM/lmdeploy/issues/3412",),
            ),
            _profile(
                "together",
                "Together AI (api.together.xyz/v1/chat/completions)",
                eos_is_stop=(
                    _GH + "openai/openai-dotnet/pull/267",
                    _GH + "vibrantlabsai/ragas/issues/1548",
                ),
            ),
        )
    }
)

#: The strict gate: relaxes nothing.
STRICT = Profile("strict", "OpenAI", MappingProxyType({}))


def get_profile(profile: Any) -> Profile:
    """The :class:`Profile` for ``profile``: ``None`` (strict), a shipped name, or a
    :class:`Profile` the caller built from :data:`RULES`. Anything else is a UsageError."""
    if profile is None:
        return STRICT
    if isinstance(profile, Profile):
        if not set(profile.relaxes) <= RULES:
            raise UsageError(f"profile {profile.name!r} relaxes unknown rule(s)")
        return profile
    if type(profile) is str and profile in PROFILES:
        return PROFILES[profile]
    raise UsageError(
        f"profile must be None, a Profile or one of {sorted(PROFILES)}, not {profile!r}"
    )
