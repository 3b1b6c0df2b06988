"""Generator of the gemini_interactions golden fixtures, hand-built from contracts/gemini.md.

Run ``.venv/bin/python tests/gemini_interactions/gemini_make_fixtures.py`` to rewrite them;
``test_gemini_golden.py`` checks the committed files equal :func:`build`'s output.
"""

from __future__ import annotations

import json
import pathlib

OUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gemini_interactions"
FILES: dict[str, bytes] = {}
DOCS = "https://ai.google.dev/gemini-api/docs/interactions/streaming"
FC_DOCS = "https://ai.google.dev/gemini-api/docs/interactions/function-calling"


def gh(v, path):
    return f"https://github.com/googleapis/python-genai/blob/v{v}/google/genai/_gaos/types/interactions/{path}"


def d(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def sse(events, *, names=False, eol="\n", done=True):
    out = []
    for e in events:
        lines = []
        if names:
            lines.append(f"event: {e['event_type']}")
        lines.append(f"data: {d(e)}")
        out.append(eol.join(lines) + eol + eol)
    if done:
        out.append(f"data: [DONE]{eol}{eol}")
    return "".join(out).encode()


def meta(desc, expected, *, rev="2026-11", layer="wire-sse", urls=None):
    v = "3.6.1" if rev == "2026-11" else "2.12.1"
    return {
        "provider": "google",
        "api_family": "gemini_interactions",
        "api_version": "v1",
        "contract_revision": rev,
        "layer": layer,
        "sdk_baseline": {"name": "google-genai", "version": v},
        "review_date": "2026-11-20" if rev == "2026-11" else "2026-07-21",
        "source_urls": urls or [DOCS, gh(v, "interactionsseevent.py"), gh(v, "step.py")],
        "description": desc,
        "expected": expected,
    }


def write(name, data, m):
    FILES[f"{name}.sse"] = data
    FILES[f"{name}.json"] = (json.dumps(m, indent=2, ensure_ascii=False) + "\n").encode()


def created(i, eid=None):
    e = {
        "event_type": "interaction.created",
        "interaction": {
            "id": i,
            "status": "in_progress",
            "model": "gemini-3-flash-preview",
            "object": "interaction",
            "created": "2026-11-20T10:00:00Z",
        },
    }
    if eid:
        e["event_id"] = eid
    return e


def status(i, s="in_progress", eid=None):
    e = {"event_type": "interaction.status_update", "interaction_id": i, "status": s}
    if eid:
        e["event_id"] = eid
    return e


def start(idx, step, eid=None):
    e = {"event_type": "step.start", "index": idx, "step": step}
    if eid:
        e["event_id"] = eid
    return e


def delta(idx, dl, eid=None):
    e = {"event_type": "step.delta", "index": idx, "delta": dl}
    if eid:
        e["event_id"] = eid
    return e


def stop(idx, eid=None, **kw):
    e = {"event_type": "step.stop", "index": idx, **kw}
    if eid:
        e["event_id"] = eid
    return e


def completed(i, s, usage=None, eid=None):
    inter = {
        "id": i,
        "status": s,
        "model": "gemini-3-flash-preview",
        "object": "interaction",
        "updated": "2026-11-20T10:00:02Z",
    }
    if usage is not None:
        inter["usage"] = usage
    e = {"event_type": "interaction.completed", "interaction": inter}
    if eid:
        e["event_id"] = eid
    return e


def args_chunks(text, n):
    size = max(1, len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


# 1. weather call with thought, args in deltas, event ids, event: lines, [DONE]
IID1 = "v1_ChdXZWF0aGVySW50ZXJhY3Rpb24"
args = d({"city": "Paris", "unit": "celsius"})
ev = [
    created(IID1, "e1"),
    status(IID1, eid="e2"),
    start(0, {"type": "thought"}, "e3"),
    delta(
        0,
        {
            "type": "thought_summary",
            "content": {"type": "text", "text": "The user wants the weather."},
        },
        "e4",
    ),
    delta(0, {"type": "thought_signature", "signature": "c2lnbmF0dXJlLTE="}, "e5"),
    stop(0, "e6"),
    start(
        1, {"type": "function_call", "id": "fc_7f3a", "name": "get_weather", "arguments": {}}, "e7"
    ),
]
n = 8
for chunk in args_chunks(args, 5):
    ev.append(delta(1, {"type": "arguments_delta", "arguments": chunk}, f"e{n}"))
    n += 1
ev += [
    stop(1, f"e{n}", usage={"total_output_tokens": 12}),
    completed(
        IID1,
        "requires_action",
        {
            "total_input_tokens": 41,
            "total_output_tokens": 12,
            "total_thought_tokens": 9,
            "total_tokens": 62,
        },
        f"e{n + 1}",
    ),
]
usage1 = {
    "total_input_tokens": 41,
    "total_output_tokens": 12,
    "total_thought_tokens": 9,
    "total_tokens": 62,
}
write(
    "weather_call_with_thought",
    sse(ev, names=True),
    meta(
        (
            "A thought (summary + signature deltas) then one function_call whose arguments arrive "
            "only in arguments_delta strings; requires_action; event: lines agree with event_type; "
            "ends with [DONE]."
        ),
        {
            "source": "stream",
            "interaction_id": IID1,
            "status": "requires_action",
            "step_types": ["thought", "function_call"],
            "calls": [
                {
                    "call_id": "fc_7f3a",
                    "name": "get_weather",
                    "arguments": {"city": "Paris", "unit": "celsius"},
                }
            ],
            "usage": usage1,
            "opaque": [],
        },
        urls=[
            DOCS,
            FC_DOCS,
            gh("3.6.1", "interactionsseevent.py"),
            gh("3.6.1", "stepdeltadata.py"),
        ],
    ),
)

# 2. interleaved parallel calls, negative/non-contiguous indexes, synthetic ids, CRLF,
#    no status_update, no [DONE]
I2 = "x9"
a = d({"sku": "A-1", "qty": 2})
b = d({"query": "röd cykel", "limit": 3})
ev = [
    created(I2),
    start(-7, {"type": "function_call", "id": "q", "name": "reserve", "arguments": {}}),
    start(2147483647, {"type": "function_call", "id": "7", "name": "search", "arguments": {}}),
    start(40, {"type": "function_call", "id": "zz", "name": "ping", "arguments": {}}),
    start(
        3,
        {
            "type": "function_call",
            "id": "k-2",
            "name": "lookup",
            "arguments": {"key": "alpha", "deep": {"n": [1, 2.5, None, True]}},
        },
    ),
]
ca, cb = args_chunks(a, 4), args_chunks(b, 6)
for i in range(max(len(ca), len(cb))):
    if i < len(cb):
        ev.append(delta(2147483647, {"type": "arguments_delta", "arguments": cb[i]}))
    if i < len(ca):
        ev.append(delta(-7, {"type": "arguments_delta", "arguments": ca[i]}))
    if i == 1:
        ev.append(delta(-7, {"type": "arguments_delta"}))
ev += [stop(40), stop(2147483647), stop(3), stop(-7), completed(I2, "requires_action")]
write(
    "parallel_interleaved_calls",
    sse(ev, eol="\r\n", done=False),
    meta(
        (
            "Four parallel function calls: two with interleaved argument deltas on indexes -7 and "
            "2147483647 (int32 max), a zero-argument call completing from {}, and one with its "
            "arguments only in step.start; one delta without 'arguments'; stops out of order; CRLF "
            "framing; no status_update, no [DONE], no usage; prefix-free synthetic ids."
        ),
        {
            "source": "stream",
            "interaction_id": I2,
            "status": "requires_action",
            "step_types": ["function_call"] * 4,
            "calls": [
                {"call_id": "q", "name": "reserve", "arguments": {"sku": "A-1", "qty": 2}},
                {"call_id": "7", "name": "search", "arguments": {"query": "röd cykel", "limit": 3}},
                {"call_id": "zz", "name": "ping", "arguments": {}},
                {
                    "call_id": "k-2",
                    "name": "lookup",
                    "arguments": {"key": "alpha", "deep": {"n": [1, 2.5, None, True]}},
                },
            ],
            "usage": None,
            "opaque": [],
        },
    ),
)

# 3. final text answer; usage with zeros
I3 = "ans-1"
ev = [created(I3, "a1"), status(I3, eid="a2"), start(0, {"type": "model_output"}, "a3")]
for k, t in enumerate(["It is ", "18 °C ", "and sunny ", "in Paris."]):
    ev.append(delta(0, {"type": "text", "text": t}, f"a{4 + k}"))
ev += [
    stop(0, "a8"),
    completed(
        I3,
        "completed",
        {
            "total_input_tokens": 0,
            "total_output_tokens": 0,
            "total_tokens": 0,
            "total_cached_tokens": 0,
        },
        "a9",
    ),
]
write(
    "final_text_answer",
    sse(ev),
    meta(
        (
            "A completed final answer assembled from text deltas; usage is present with zero "
            "counts "
            "(kept as zeros, distinct from absent)."
        ),
        {
            "source": "stream",
            "interaction_id": I3,
            "status": "completed",
            "step_types": ["model_output"],
            "calls": [],
            "text": "It is 18 °C and sunny in Paris.",
            "usage": {
                "total_input_tokens": 0,
                "total_output_tokens": 0,
                "total_tokens": 0,
                "total_cached_tokens": 0,
            },
            "opaque": [],
        },
    ),
)

# 4. hosted google search steps then a function call
I4 = "hs-42"
ev = [
    created(I4),
    status(I4),
    start(
        0,
        {
            "type": "google_search_call",
            "id": "gs1",
            "arguments": {"queries": ["paris weather"]},
            "signature": "Z3M=",
        },
    ),
    stop(0),
    start(
        1,
        {
            "type": "google_search_result",
            "call_id": "gs1",
            "result": [{"search_suggestions": "<div>paris weather</div>"}],
            "signature": "Z3I=",
        },
    ),
    stop(1),
    start(2, {"type": "model_output", "content": []}),
    delta(2, {"type": "text", "text": "Checking the forecast tool."}),
    stop(2),
    start(
        3,
        {
            "type": "function_call",
            "id": "call-9",
            "name": "forecast",
            "arguments": {"city": "Paris", "days": 3},
        },
    ),
    stop(3),
    completed(
        I4,
        "requires_action",
        {"total_tokens": 300, "grounding_tool_count": [{"type": "google_search", "count": 1}]},
    ),
]
write(
    "hosted_search_then_call",
    sse(ev),
    meta(
        (
            "Hosted google_search call/result steps (complete in step.start, no deltas) and a "
            "model_output are kept as non-client steps; only the function_call (arguments in "
            "step.start) is released."
        ),
        {
            "source": "stream",
            "interaction_id": I4,
            "status": "requires_action",
            "step_types": [
                "google_search_call",
                "google_search_result",
                "model_output",
                "function_call",
            ],
            "calls": [
                {"call_id": "call-9", "name": "forecast", "arguments": {"city": "Paris", "days": 3}}
            ],
            "usage": {
                "total_tokens": 300,
                "grounding_tool_count": [{"type": "google_search", "count": 1}],
            },
            "opaque": [],
        },
    ),
)

# 5. MCP server steps (current baseline knows them; 2026-07-21 refuses them)
I5 = "mcp-1"
ev = [
    created(I5),
    start(
        0,
        {
            "type": "mcp_server_tool_call",
            "id": "m1",
            "name": "list_issues",
            "server_name": "tracker",
            "arguments": {"repo": "demo"},
        },
    ),
    stop(0),
    start(
        1,
        {
            "type": "mcp_server_tool_result",
            "call_id": "m1",
            "name": "list_issues",
            "server_name": "tracker",
            "result": {"open": 3},
        },
    ),
    stop(1),
    start(2, {"type": "model_output"}),
    delta(2, {"type": "text", "text": "There are 3 open issues."}),
    stop(2),
    completed(I5, "completed", {"total_tokens": 77}),
]
write(
    "mcp_server_steps",
    sse(ev),
    meta(
        (
            "MCP server tool call/result steps (server-executed, never released) followed by a "
            "final "
            "answer. Known to the 2026-11 baseline; the 2026-07-21 stable-v1 baseline fails "
            "closed on"
            " them."
        ),
        {
            "source": "stream",
            "interaction_id": I5,
            "status": "completed",
            "step_types": ["mcp_server_tool_call", "mcp_server_tool_result", "model_output"],
            "calls": [],
            "usage": {"total_tokens": 77},
            "opaque": [],
        },
        urls=[DOCS, gh("3.6.1", "step.py"), gh("3.6.1", "mcpservertoolcallstep.py")],
    ),
)

# 6. stable v1 baseline fixture (2026-07-21, google-genai 2.12.1)
I6 = "stable-7"
args6 = d({"to": "ops@example.com", "subject": "Disk 91%"})
ev = [
    created(I6, "s1"),
    start(0, {"type": "function_call", "id": "n1", "name": "send_alert"}, "s2"),
]
for k, ch in enumerate(args_chunks(args6, 3)):
    ev.append(delta(0, {"type": "arguments_delta", "arguments": ch}, f"s{3 + k}"))
ev += [stop(0, "s9"), completed(I6, "requires_action", {"total_tokens": 20}, "s10")]
write(
    "stable_v1_call",
    sse(ev, names=True),
    meta(
        (
            "A function call under the 2026-07-21 baseline (stable v1, 15 step types); step.start "
            "carries no 'arguments' at all, the deltas do."
        ),
        {
            "source": "stream",
            "interaction_id": I6,
            "status": "requires_action",
            "step_types": ["function_call"],
            "calls": [
                {
                    "call_id": "n1",
                    "name": "send_alert",
                    "arguments": {"to": "ops@example.com", "subject": "Disk 91%"},
                }
            ],
            "usage": {"total_tokens": 20},
            "opaque": [],
        },
        rev="2026-07-21",
    ),
)

# 7. event-id replay (resumed delivery): duplicates with identical payloads
I7 = "rp-3"
base = [
    created(I7, "r1"),
    start(5, {"type": "function_call", "id": "c", "name": "add", "arguments": {}}, "r2"),
    delta(5, {"type": "arguments_delta", "arguments": '{"a":1,'}, "r3"),
    delta(5, {"type": "arguments_delta", "arguments": '"b":2}'}, "r4"),
    stop(5, "r5"),
    completed(I7, "requires_action", None, "r6"),
]
replayed = [*base[:4], base[2], base[3], base[4], base[4], base[5], base[5]]
data7 = sse(replayed)
# one replay re-serialised with another key order and spacing: same payload, different bytes
alt = (
    'data: {"index": 5, "event_id": "r3", "delta": {"arguments": "{\\"a\\":1,", '
    '"type": "arguments_delta"}, "event_type": "step.delta"}\n\n'
)
data7 = data7.replace(b"data: [DONE]", alt.encode() + b"data: [DONE]", 0)
parts = data7.split(b"\n\n")
parts.insert(6, alt.strip().encode())
data7 = b"\n\n".join(parts)
write(
    "event_id_replay",
    data7,
    meta(
        (
            "A resumed delivery: events r3, r4, r5 and the terminal r6 are re-delivered with "
            "identical payloads (one re-serialised with another key order); each replay is ignored."
        ),
        {
            "source": "stream",
            "interaction_id": I7,
            "status": "requires_action",
            "step_types": ["function_call"],
            "calls": [{"call_id": "c", "name": "add", "arguments": {"a": 1, "b": 2}}],
            "usage": None,
            "opaque": [],
        },
    ),
)

# 8. non-streaming bodies
body_create = {
    "id": "cr-1",
    "object": "interaction",
    "status": "requires_action",
    "model": "gemini-3-flash-preview",
    "steps": [
        {"type": "thought", "signature": "dGhvdWdodA=="},
        {"type": "function_call", "id": "f1", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {"type": "function_call", "id": "f2", "name": "get_time", "arguments": {}},
    ],
    "usage": {"total_input_tokens": 10, "total_output_tokens": 5, "total_tokens": 15},
}
write(
    "create_body_two_calls",
    (json.dumps(body_create, indent=1) + "\n").encode(),
    meta(
        (
            "Non-streaming create body: model steps only (thought with signature, two function "
            "calls); requires_action."
        ),
        {
            "source": "create",
            "interaction_id": "cr-1",
            "status": "requires_action",
            "step_types": ["thought", "function_call", "function_call"],
            "calls": [
                {"call_id": "f1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                {"call_id": "f2", "name": "get_time", "arguments": {}},
            ],
            "usage": {"total_input_tokens": 10, "total_output_tokens": 5, "total_tokens": 15},
            "opaque": [],
        },
        layer="json-body",
        urls=[FC_DOCS, gh("3.6.1", "interaction.py")],
    ),
)

body_get = {
    "id": "gt-1",
    "status": "requires_action",
    "model": "gemini-3-flash-preview",
    "steps": [
        {
            "type": "user_input",
            "content": [{"type": "text", "text": "Weather in Oslo and the time?"}],
        },
        {"type": "thought", "signature": "b2xk"},
        {"type": "function_call", "id": "h1", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {
            "type": "function_result",
            "call_id": "h1",
            "name": "get_weather",
            "result": {"temp_c": 4},
        },
        {"type": "thought", "signature": "bmV3"},
        {
            "type": "function_call",
            "id": "h2",
            "name": "get_time",
            "arguments": {"tz": "Europe/Oslo"},
        },
    ],
}
write(
    "get_body_with_history",
    (json.dumps(body_get) + "\n").encode(),
    meta(
        (
            "GET body: the whole timeline with user_input first; the earlier call h1 is "
            "answered in "
            "the body (history), only h2 is pending; no usage."
        ),
        {
            "source": "get",
            "interaction_id": "gt-1",
            "status": "requires_action",
            "step_types": [
                "user_input",
                "thought",
                "function_call",
                "function_result",
                "thought",
                "function_call",
            ],
            "calls": [{"call_id": "h2", "name": "get_time", "arguments": {"tz": "Europe/Oslo"}}],
            "usage": None,
            "opaque": [],
        },
        layer="json-body",
        urls=[FC_DOCS, gh("3.6.1", "interaction.py")],
    ),
)


def main() -> None:
    for name, data in FILES.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()
