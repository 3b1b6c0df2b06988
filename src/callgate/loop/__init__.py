"""callgate.loop: the host tool loop over the execution ledger.

``HostLoop(protocol=..., base_url=..., api_key=..., ledger=..., tools=[ToolSpec(...)],
model=...)`` streams each model turn through the protocol room's strict parser and gate,
records it with its calls in the ledger (R1), executes each effect by its class, builds
the continuation from the ledger's results and repeats until a final answer, a refusal or
a wait for a decision. ``resume(run_id)`` goes on after a crash or a decision;
:class:`AsyncHostLoop` is the same for asyncio. The HTTP
transport is ``httpx`` (extra ``http``); ``send=`` takes your own client instead
(:mod:`callgate.loop.sdk` for the official SDKs). See docs/ledger.md.
"""

from ._async import AsyncHostLoop, AsyncSend
from ._core import MODEL_FAULT_POINTS
from ._host import HostLoop
from ._model import LoopError, LoopResult, ProviderHTTPError, Send, ToolSpec, TurnRefused

__all__ = [
    "MODEL_FAULT_POINTS",
    "AsyncHostLoop",
    "AsyncSend",
    "HostLoop",
    "LoopError",
    "LoopResult",
    "ProviderHTTPError",
    "Send",
    "ToolSpec",
    "TurnRefused",
]
