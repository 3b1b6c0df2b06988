"""Properties: any interleaving of two calls' argument fragments, any split of the bytes and
either input mode give the same released calls; the body of the same turn releases them too."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from callgate.openai_chat_completions import Parser, parse_response, parse_stream

from .wire import ROLE, args, chunk, first, sse

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


def _fragments(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True) if b > a]


@settings(max_examples=150, deadline=None)
@given(
    a=OBJECTS,
    b=OBJECTS,
    cuts_a=st.lists(st.integers(0, 10**4), max_size=6),
    cuts_b=st.lists(st.integers(0, 10**4), max_size=6),
    order=st.lists(st.booleans(), max_size=30),
    splits=st.lists(st.integers(1, 10**5), max_size=6),
)
def test_interleaved_fragments_and_any_split_release_the_same_calls(
    a: dict[str, Any],
    b: dict[str, Any],
    cuts_a: list[int],
    cuts_b: list[int],
    order: list[bool],
    splits: list[int],
) -> None:
    texts = [json.dumps(a), json.dumps(b, separators=(",", ":"))]
    pending = [_fragments(texts[0], cuts_a), _fragments(texts[1], cuts_b)]
    chunks: list[Any] = [ROLE, first(0, "call_a", "get"), first(1, "call_b", "put")]
    flips = iter(order)
    while pending[0] or pending[1]:
        index = 0 if not pending[1] else 1 if not pending[0] else int(next(flips, False))
        chunks.append(args(index, pending[index].pop(0)))
    chunks.append(chunk({}, "tool_calls"))
    data = sse(chunks)
    whole = parse_stream(data)
    assert [(c.call_id, c.arguments) for c in whole.calls] == [("call_a", a), ("call_b", b)]
    assert [c.raw["function"]["arguments"] for c in whole.calls] == texts
    points = sorted({s % len(data) for s in splits} - {0})
    pieces = [data[x:y] for x, y in zip([0, *points], [*points, len(data)], strict=True)]
    assert parse_stream(pieces).digest == whole.digest
    parser = Parser()
    for obj in chunks:
        parser.feed_event(obj)
    assert parser.finish().calls == whole.calls
    message = whole.message()
    body = {"id": "x", "object": "chat.completion", "created": 1, "model": "m"}
    body["choices"] = [{"index": 0, "message": message, "finish_reason": "tool_calls"}]
    assert parse_response(body).calls == whole.calls
