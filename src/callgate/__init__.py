"""callgate: a strict gate between an LLM provider's tool calls and the host that runs them."""

from ._digest import canonical_bytes, canonical_digest
from ._errors import (
    BindingError,
    CallgateError,
    ContinuationError,
    ContractError,
    FramingError,
    JSONError,
    LimitExceededError,
    ProtocolError,
    ProvenanceError,
    ProviderError,
    SchemaError,
    SequenceError,
    TruncatedStreamError,
    UnsupportedProviderState,
    UsageError,
)
from ._hosted import Citation, HostedCall
from ._json import loads_strict
from ._limits import DEFAULT_LIMITS, Limits
from ._media import Internal, MediaPart, TextPart
from ._results import ToolResult, bind_results

__all__ = [
    "DEFAULT_LIMITS",
    "BindingError",
    "CallgateError",
    "Citation",
    "ContinuationError",
    "ContractError",
    "FramingError",
    "HostedCall",
    "Internal",
    "JSONError",
    "LimitExceededError",
    "Limits",
    "MediaPart",
    "ProtocolError",
    "ProvenanceError",
    "ProviderError",
    "SchemaError",
    "SequenceError",
    "TextPart",
    "ToolResult",
    "TruncatedStreamError",
    "UnsupportedProviderState",
    "UsageError",
    "bind_results",
    "canonical_bytes",
    "canonical_digest",
    "loads_strict",
]
