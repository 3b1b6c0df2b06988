"""The official google-genai SDK streams every golden fixture from a local server; feeding its
events' dicts to ``feed_event`` gives exactly the turn ``feed_bytes`` gives on the same bytes."""

from __future__ import annotations

import pytest

from callgate.contracts import Fixture, load_fixtures
from callgate.gemini_interactions import Parser, parse_stream

from .sdk_server import serve_sse
from .wire import FIXTURES

genai = pytest.importorskip("google.genai")

STREAMS = [f for f in load_fixtures(FIXTURES) if f.layer == "wire-sse"]


def sdk_event_dicts(body: bytes) -> tuple[list[dict[str, object]], list[str]]:
    with serve_sse(body) as (url, paths):
        client = genai.Client(
            api_key="test",
            http_options={"base_url": url, "api_version": "v1", "retry_options": {"attempts": 1}},
        )
        stream = client.interactions.create(model="gemini-3-flash-preview", input="hi", stream=True)
        # by_alias + exclude_none reproduces the wire object (absent optionals stay absent)
        events = [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in stream]
        client.close()
    return events, paths


@pytest.mark.parametrize("fixture", STREAMS, ids=[f.name for f in STREAMS])
def test_sdk_events_through_feed_event_equal_feed_bytes(fixture: Fixture) -> None:
    events, paths = sdk_event_dicts(fixture.data)
    assert paths == ["/v1/interactions"]  # the stable v1 endpoint, no ?alt=sse
    assert events, "the SDK yielded no events"
    parser = Parser(baseline=fixture.contract_revision)
    for event in events:
        parser.feed_event(event)
    via_sdk = parser.finish()
    via_bytes = parse_stream(fixture.data, baseline=fixture.contract_revision)
    assert via_sdk == via_bytes
    assert via_sdk.digest == via_bytes.digest
