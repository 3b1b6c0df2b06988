"""Contract baselines: which wire contract a parser enforces, as data.

A :class:`Baseline` names one protocol at one contract revision: provider, API family and
version, the official SDK release whose sources the contract was read from, the review date
and the official source URLs. The facts come from ``contracts/*.md`` in the design
material, which were read from the installed SDKs. Source URLs pass
:func:`~callgate.contracts.validate_source_url` (metadata hygiene, not authenticity).

API versions encoded here:

- ``openai_responses``: ``v1`` (``/v1/responses``).
- ``anthropic_messages``: the ``anthropic-version`` header the SDK sends: ``2023-06-01``
  for anthropic 0.117.0 (revision 2026-07-21) and ``2026-10-21`` for anthropic 2.14.0
  (``_constants.ANTHROPIC_API_VERSION``, revision 2026-11).
- ``gemini_interactions``: ``v1`` for both revisions (the Interactions API is GA on the
  stable ``v1`` surface since June 2026).
- ``openai_chat_completions``: ``v1`` (``/v1/chat/completions``), both SDK generations.
- ``gemini_generate_content``: ``v1beta`` for google-genai 2.12.1 (its default) and ``v1``
  for google-genai 3.6.1 (``GOOGLE_AI_API_DEFAULT_VERSION = 'v1'``).
"""

from __future__ import annotations

import dataclasses
import datetime

from .._errors import ContractError, UsageError
from ._urls import validate_source_url

__all__ = [
    "CURRENT_REVISION",
    "PROTOCOLS",
    "REVISIONS",
    "Baseline",
    "all_baselines",
    "get_baseline",
]

PROTOCOLS: tuple[str, ...] = (
    "openai_responses",
    "anthropic_messages",
    "gemini_interactions",
    "gemini_generate_content",
    "openai_chat_completions",
)
REVISIONS: tuple[str, ...] = ("2026-07-21", "2026-11")
CURRENT_REVISION = "2026-11"

_PROVIDER_OF = {
    "openai_responses": "openai",
    "anthropic_messages": "anthropic",
    "gemini_interactions": "google",
    "gemini_generate_content": "google",
    "openai_chat_completions": "openai",
}
_SDK_OF_PROVIDER = {"openai": "openai", "anthropic": "anthropic", "google": "google-genai"}


@dataclasses.dataclass(frozen=True, slots=True)
class Baseline:
    """One protocol's wire contract at one revision (see the module docstring)."""

    protocol: str
    revision: str
    provider: str
    api_family: str
    api_version: str
    review_date: datetime.date
    sdk_name: str
    sdk_version: str
    source_urls: tuple[str, ...]
    notes: str
    # Server-held continuation modes as "mode:beta-name" (empty: replay the whole history).
    stateful_continuation: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ContractError(f"baseline protocol {self.protocol!r} is not one of {PROTOCOLS}")
        if self.revision not in REVISIONS:
            raise ContractError(f"baseline revision {self.revision!r} is not one of {REVISIONS}")
        if self.provider != _PROVIDER_OF[self.protocol]:
            raise ContractError(f"baseline provider {self.provider!r} does not own {self.protocol}")
        if self.sdk_name != _SDK_OF_PROVIDER[self.provider]:
            raise ContractError(f"baseline SDK {self.sdk_name!r} is not the {self.provider} SDK")
        for name in ("api_family", "api_version", "sdk_version", "notes"):
            value = getattr(self, name)
            if type(value) is not str or not value:
                raise ContractError(f"baseline {name} must be a non-empty str")
        if type(self.review_date) is not datetime.date:
            raise ContractError("baseline review_date must be a datetime.date")
        if type(self.source_urls) is not tuple or not self.source_urls:
            raise ContractError("baseline source_urls must be a non-empty tuple")
        for url in self.source_urls:
            validate_source_url(url, provider=self.provider)
        if type(self.stateful_continuation) is not tuple or any(
            type(m) is not str or not m for m in self.stateful_continuation
        ):
            raise ContractError("baseline stateful_continuation must be a tuple of non-empty str")


_OLD, _CURRENT = REVISIONS
_OLD_DATE = datetime.date(2026, 7, 21)
_CURRENT_DATE = datetime.date(2026, 11, 20)
_SDK_VERSIONS = {
    _OLD: {"openai": "2.46.0", "anthropic": "0.117.0", "google": "2.12.1"},
    _CURRENT: {"openai": "3.57.0", "anthropic": "2.14.0", "google": "3.6.1"},
}
_OPENAI_GH = "https://github.com/openai/openai-python/blob/v{v}/src/openai/"
_ANTHROPIC_GH = "https://github.com/anthropics/anthropic-sdk-python/blob/v{v}/src/anthropic/"
_GENAI_GH = "https://github.com/googleapis/python-genai/blob/v{v}/google/genai/"
_GEMINI_API_VERSIONS = "https://ai.google.dev/gemini-api/docs/api-versions"

# (protocol, revision) -> (api_family, api_version, docs URLs, SDK paths, notes)
_TABLE: dict[tuple[str, str], tuple[str, str, tuple[str, ...], tuple[str, ...], str]] = {
    ("openai_responses", _OLD): (
        "OpenAI Responses",
        "v1",
        ("https://platform.openai.com/docs/api-reference/responses-streaming",),
        ("types/responses/response_stream_event.py", "_streaming.py"),
        "response.function_call_arguments.done carried `name`; if sent it must equal the "
        "function_call item's name.",
    ),
    ("openai_responses", _CURRENT): (
        "OpenAI Responses",
        "v1",
        (
            "https://platform.openai.com/docs/api-reference/responses-streaming",
            "https://developers.openai.com/docs/guides/streaming-responses",
        ),
        ("types/responses/response_stream_event.py", "_streaming.py"),
        "59 stream event types, sequence_number required on each; "
        "response.function_call_arguments.done has no `name` (take it from the item).",
    ),
    ("anthropic_messages", _OLD): (
        "Anthropic Messages",
        "2023-06-01",
        (
            "https://platform.claude.com/docs/en/build-with-claude/streaming",
            "https://platform.claude.com/docs/en/api/versioning",
        ),
        ("types/raw_message_stream_event.py", "_streaming.py", "_client.py"),
        "api_version is the anthropic-version header the SDK sends (hard-coded in _client.py).",
    ),
    ("anthropic_messages", _CURRENT): (
        "Anthropic Messages",
        "2026-10-21",
        (
            "https://platform.claude.com/docs/en/build-with-claude/streaming",
            "https://platform.claude.com/docs/en/api/versioning",
            "https://platform.claude.com/docs/en/api/migration-2026-10-21",
        ),
        ("types/raw_message_stream_event.py", "_streaming.py", "_constants.py"),
        "api_version is the anthropic-version header the SDK sends "
        "(_constants.ANTHROPIC_API_VERSION); ping and error are handled by SSE event name.",
    ),
    ("gemini_interactions", _OLD): (
        "Gemini Interactions",
        "v1",
        ("https://ai.google.dev/gemini-api/docs/interactions/streaming", _GEMINI_API_VERSIONS),
        (
            "_gaos/types/interactions/interactionsseevent.py",
            "_gaos/types/interactions/step.py",
            "_api_client.py",
        ),
        "Interactions is GA on stable v1 (SDK 2.12.1 still defaulted to v1beta); stable v1 "
        "has 15 step types and MCP steps fail closed.",
    ),
    ("gemini_interactions", _CURRENT): (
        "Gemini Interactions",
        "v1",
        ("https://ai.google.dev/gemini-api/docs/interactions/streaming", _GEMINI_API_VERSIONS),
        (
            "_gaos/types/interactions/interactionsseevent.py",
            "_gaos/types/interactions/step.py",
            "_api_client.py",
        ),
        "SDK 3.6.1 defaults to v1 and knows 23 step types; unknown step types fail closed.",
    ),
    ("gemini_generate_content", _OLD): (
        "Gemini generateContent",
        "v1beta",
        ("https://ai.google.dev/api/generate-content", _GEMINI_API_VERSIONS),
        ("types.py", "models.py", "_api_client.py"),
        "SDK 2.12.1 defaulted the Gemini Developer API to v1beta.",
    ),
    ("gemini_generate_content", _CURRENT): (
        "Gemini generateContent",
        "v1",
        ("https://ai.google.dev/api/generate-content", _GEMINI_API_VERSIONS),
        ("types.py", "models.py", "_api_client.py"),
        "SDK 3.6.1 defaults the Gemini Developer API to v1 (GOOGLE_AI_API_DEFAULT_VERSION).",
    ),
    ("openai_chat_completions", _OLD): (
        "OpenAI Chat Completions",
        "v1",
        ("https://platform.openai.com/docs/api-reference/chat-streaming",),
        (
            "types/chat/chat_completion_chunk.py",
            "types/chat/chat_completion.py",
            "lib/streaming/chat/_completions.py",
        ),
        "Chunks end with data: [DONE]; ChoiceDelta has no audio and the chunk no "
        "obfuscation field (extra keys); finish_reason stop|length|tool_calls|"
        "content_filter|function_call.",
    ),
    ("openai_chat_completions", _CURRENT): (
        "OpenAI Chat Completions",
        "v1",
        (
            "https://platform.openai.com/docs/api-reference/chat-streaming",
            "https://platform.openai.com/docs/api-reference/chat/object",
        ),
        (
            "types/chat/chat_completion_chunk.py",
            "types/chat/chat_completion.py",
            "lib/streaming/chat/_completions.py",
        ),
        "ChoiceDelta gains audio, the chunk obfuscation, ChatCompletion metadata; the same "
        "five finish reasons; stop beside a forced named function call (OpenAI's own).",
    ),
}
# Stateful continuation modes recorded so far (anthropic 2.14.0 types/beta/message_create_params.py
# ``thread``; https://platform.claude.com/docs/en/build-with-claude/message-threads).
_STATEFUL = {("anthropic_messages", _CURRENT): ("thread:message-threads-2026-08-12",)}
_GH_PREFIX = {"openai": _OPENAI_GH, "anthropic": _ANTHROPIC_GH, "google": _GENAI_GH}


def _build() -> dict[tuple[str, str], Baseline]:
    built: dict[tuple[str, str], Baseline] = {}
    for protocol in PROTOCOLS:
        provider = _PROVIDER_OF[protocol]
        for revision in REVISIONS:
            family, version, docs, sdk_paths, notes = _TABLE[protocol, revision]
            sdk_version = _SDK_VERSIONS[revision][provider]
            prefix = _GH_PREFIX[provider].format(v=sdk_version)
            built[protocol, revision] = Baseline(
                protocol=protocol,
                revision=revision,
                provider=provider,
                api_family=family,
                api_version=version,
                review_date=_OLD_DATE if revision == _OLD else _CURRENT_DATE,
                sdk_name=_SDK_OF_PROVIDER[provider],
                sdk_version=sdk_version,
                source_urls=docs + tuple(prefix + path for path in sdk_paths),
                notes=notes,
                stateful_continuation=_STATEFUL.get((protocol, revision), ()),
            )
    return built


_BASELINES = _build()


def get_baseline(protocol: str, revision: str = CURRENT_REVISION) -> Baseline:
    """The built-in baseline for ``protocol`` at ``revision`` (default: current).

    A non-str argument is a :class:`~callgate.UsageError`; an unknown protocol or revision
    is a :class:`~callgate.ContractError`.
    """
    if type(protocol) is not str or type(revision) is not str:
        raise UsageError("get_baseline() takes a protocol and a revision as str")
    if protocol not in PROTOCOLS:
        raise ContractError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")
    if revision not in REVISIONS:
        raise ContractError(f"unknown contract revision {revision!r}; expected one of {REVISIONS}")
    return _BASELINES[protocol, revision]


def all_baselines() -> tuple[Baseline, ...]:
    """Every built-in baseline, by protocol (in ``PROTOCOLS`` order) then revision."""
    return tuple(_BASELINES.values())
