"""The hosted-tool projection every protocol room's ``Turn`` carries.

Hosted (provider-side) tools run on the provider's servers: the host never executes them,
so they are never in ``turn.calls``. Each room projects what its wire says about them into
two read-only tuples on the Turn:

- ``turn.hosted_calls``: one :class:`HostedCall` per hosted tool invocation, in wire order.
- ``turn.citations``: one :class:`Citation` per annotation or grounding support, in wire
  order.

Both are derived from the raw items/blocks/parts the Turn already holds (and which its
digest covers), so they add no state of their own. ``raw`` is the provider's object
exactly as received (a read-only view: mutating it is a caller bug the builders detect
through the digest).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Citation", "HostedCall"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HostedCall:
    """One hosted tool invocation.

    ``tool`` is the provider's own type or name string (``web_search_call``,
    ``web_search``, ``google_search``...), ``id`` the provider's id for it (``None`` when
    the wire gives none), ``status`` the provider's status string, or a status derived only
    from what the wire says (``None`` when it says nothing), ``raw`` the item exactly as
    received.
    """

    tool: str
    id: str | None
    status: str | None
    raw: Any


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """One citation the provider attached to output text.

    ``kind`` is the provider's annotation type (``url_citation``,
    ``web_search_result_location``...), ``source`` the URL, file id or document the
    citation points at (``None`` when absent), ``start``/``end`` the offsets exactly as the
    provider gives them, in its own unit (``None`` when absent), ``raw`` the annotation.
    """

    kind: str
    source: str | None
    start: int | None
    end: int | None
    raw: Any
