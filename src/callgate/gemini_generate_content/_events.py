"""What each baseline knows of a ``GenerateContentResponse`` chunk, as data.

Facts from ``contracts/gemini-generate-content.md`` §2, §4 and §11 (read from google-genai
2.12.1 and 3.6.1 ``types.py`` and the ``_*_from_mldev`` converters). A chunk is classified
into one of five kinds, which is the ``kind`` of ``_state.TRANSITIONS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "BLOCK_REASONS",
    "CALL_PART",
    "CANDIDATE_KEYS",
    "CONTINUATION",
    "DATA_KEYS",
    "FINISH_REASONS",
    "HOSTED_PARTS",
    "KINDS",
    "K_BLOCKED",
    "K_CONTENT",
    "K_EMPTY",
    "K_ERROR",
    "K_FINISH",
    "MODIFIER_KEYS",
    "PROVIDER",
    "REFUSALS",
    "SNAKE_ALIASES",
    "STOP",
    "TOP_KEYS",
]

_OLD, _CURRENT = "2026-07-21", "2026-11"

#: The provider tag on every error this room raises.
PROVIDER = "google"

# -- chunk kinds ---------------------------------------------------------------------
K_ERROR = "error"  # {"error": {...}}: the provider's own error chunk
K_BLOCKED = "blocked"  # promptFeedback.blockReason: the prompt was refused
K_FINISH = "finish"  # the (selected) candidate carries finishReason
K_CONTENT = "content"  # the candidate streams content, no finishReason yet
K_EMPTY = "empty"  # no candidate for us: usage / model metadata only
KINDS: tuple[str, ...] = (K_ERROR, K_BLOCKED, K_FINISH, K_CONTENT, K_EMPTY)

# -- finish reasons (types.FinishReason) ---------------------------------------------
STOP = "STOP"
CONTINUATION = "CONTINUATION"
_OLD_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "UNEXPECTED_TOOL_CALL",
    "IMAGE_PROHIBITED_CONTENT",
    "NO_IMAGE",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
)
_NEW_REASONS = (
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "ESCALATION",
    "PUP_LIMITED_DISABLED",
    "CONTINUATION",
    "MODEL_ARMOR",
)
#: Every finishReason the baseline's SDK enum knows (17 in 2.12.1, 24 in 3.6.1).
FINISH_REASONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        _OLD: frozenset(_OLD_REASONS),
        _CURRENT: frozenset(_OLD_REASONS + _NEW_REASONS),
    }
)
#: The known reasons that end the turn in a refusal (all but STOP and CONTINUATION).
REFUSALS: Mapping[str, frozenset[str]] = MappingProxyType(
    {rev: reasons - {STOP, CONTINUATION} for rev, reasons in FINISH_REASONS.items()}
)
#: promptFeedback.blockReason values (types.BlockedReason; unchanged between baselines).
_BLOCKS = frozenset(
    {
        "BLOCKED_REASON_UNSPECIFIED",
        "SAFETY",
        "OTHER",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "IMAGE_SAFETY",
        "MODEL_ARMOR",
        "JAILBREAK",
    }
)
BLOCK_REASONS: Mapping[str, frozenset[str]] = MappingProxyType({_OLD: _BLOCKS, _CURRENT: _BLOCKS})

# -- keys the SDK maps from camelCase only (§2 "Receiving") --------------------------
_TOP = ("candidates", "modelVersion", "promptFeedback", "responseId", "usageMetadata")
TOP_KEYS: frozenset[str] = frozenset((*_TOP, "modelStatus", "createTime"))
_CAND = (
    "content",
    "citationMetadata",
    "tokenCount",
    "finishReason",
    "finishMessage",
    "groundingMetadata",
    "avgLogprobs",
    "index",
    "logprobsResult",
    "safetyRatings",
    "urlContextMetadata",
)
CANDIDATE_KEYS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: frozenset(_CAND), _CURRENT: frozenset((*_CAND, "continuationToken"))}
)

# -- parts (types.Part): exactly one data key, any number of modifiers ---------------
CALL_PART = "functionCall"
HOSTED_PARTS: frozenset[str] = frozenset(
    {"executableCode", "codeExecutionResult", "toolCall", "toolResponse"}
)
DATA_KEYS: frozenset[str] = frozenset(
    {"text", CALL_PART, "functionResponse", "inlineData", "fileData"} | HOSTED_PARTS
)
_MODIFIERS = ("thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata")
_NEW_MODIFIERS = (
    "audioTranscription",
    "mediaProcessing",
    "speechMetadata",
    "documentMetadata",
    "spreadsheetMetadata",
    "audioMetadata",
)
MODIFIER_KEYS: Mapping[str, frozenset[str]] = MappingProxyType(
    {_OLD: frozenset(_MODIFIERS), _CURRENT: frozenset(_MODIFIERS + _NEW_MODIFIERS)}
)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


#: snake_case spelling -> the camelCase key, for every key that has a distinct one. At the
#: top and candidate levels the SDK silently drops these; inside parts it would accept
#: them. The server never sends them, so callgate refuses both (drift, not data).
SNAKE_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        _snake(k): k
        for k in (
            TOP_KEYS
            | CANDIDATE_KEYS[_CURRENT]
            | DATA_KEYS
            | MODIFIER_KEYS[_CURRENT]
            | {"partialArgs", "willContinue", "blockReason"}
        )
        if _snake(k) != k
    }
)
