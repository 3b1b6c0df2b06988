"""Write the golden OpenAI Responses fixtures.

Run ``python tests/openai_responses/oai_make_fixtures.py`` from the project root.

The streams are hand-constructed from the wire contract (openai SDK models of the named
baseline), not recorded. The files are committed; this script documents how they were made
and regenerates them byte-identically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .wire import Stream, fc_item, message_item, reasoning_item

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "openai_responses"
GH = "https://github.com/openai/openai-python/blob/v{v}/src/openai/"
DOCS = "https://platform.openai.com/docs/api-reference/responses-streaming"
SDK = {"2026-11": "3.57.0", "2026-07-21": "2.46.0"}


def meta(
    revision: str, description: str, expected: dict[str, Any], sdk_paths: list[str]
) -> dict[str, Any]:
    version = SDK[revision]
    return {
        "provider": "openai",
        "api_family": "openai_responses",
        "api_version": "v1",
        "contract_revision": revision,
        "layer": "wire-sse",
        "sdk_baseline": {"name": "openai", "version": version},
        "review_date": "2026-11-29",
        "source_urls": [DOCS, *(GH.format(v=version) + p for p in sdk_paths)],
        "description": description,
        "expected": expected,
    }


def calls_of(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"call_id": i["call_id"], "name": i["name"], "arguments": json.loads(i["arguments"])}
        for i in items
        if i["type"] == "function_call"
    ]


def ok(s: Stream, text: str = "") -> dict[str, Any]:
    out = s.output()
    return {
        "outcome": "completed",
        "response_id": s.rid,
        "item_types": [i["type"] for i in out],
        "calls": calls_of(out),
        "text": text,
    }


EVENT_TYPES = "types/responses/response_stream_event.py"
FC = "types/responses/response_function_tool_call.py"


def parallel_calls_reasoning() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_68f1c0d2a4e08190b3e4f5a6b7c8d9e0").created()
    s.reasoning(0, reasoning_item("rs_68f1c0d3aa7c8190", "Two lookups are independent."))
    a = fc_item(
        "fc_68f1c0d4b1f48190a1",
        "call_Q2kVb8cZ1mN4",
        "get_weather",
        '{"city":"Paris","unit":"c"}',
    )
    b = fc_item("fc_68f1c0d4b1f48190b2", "call_Jx7TpL0sW9aE", "get_time", '{"tz":"Europe/Paris"}')
    s.added(1, a)
    s.added(2, b)
    pieces_a = ['{"city"', ':"Par', 'is","unit"', ':"c"}']
    pieces_b = ['{"tz":', '"Europe/', 'Paris"}']
    for i in range(max(len(pieces_a), len(pieces_b))):
        for index, item, pieces in ((1, a, pieces_a), (2, b, pieces_b)):
            if i < len(pieces):
                s.ev(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=pieces[i],
                    obfuscation="k3Q",
                )
    for index, item in ((2, b), (1, a)):
        s.ev(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            arguments=item["arguments"],
        )
        s.item_done(index, item)
    s.completed()
    return s.to_bytes(), meta(
        "2026-11",
        "Reasoning item, then two function calls whose argument deltas interleave; "
        "their .done events arrive in reverse order; obfuscation on deltas.",
        ok(s),
        [EVENT_TYPES, FC],
    )


def text_with_citation() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_68f1c1000000").created()
    ws = {
        "type": "web_search_call",
        "id": "ws_68f1c1010000",
        "status": "completed",
        "action": {"type": "search", "query": "callgate"},
    }
    s.added(0, ws)
    for phase in ("in_progress", "searching", "completed"):
        s.ev(f"response.web_search_call.{phase}", item_id=ws["id"], output_index=0)
    s.item_done(0, ws)
    text = "Callgate gates tool calls."
    annotation = {
        "type": "url_citation",
        "url": "https://example.com/callgate",
        "title": "callgate",
        "start_index": 0,
        "end_index": 8,
    }
    msg = message_item("msg_68f1c1020000", text)
    msg["content"][0]["annotations"] = [annotation]
    s.added(1, msg)
    ids = {"item_id": msg["id"], "output_index": 1, "content_index": 0}
    s.ev(
        "response.content_part.added",
        **ids,
        part={"type": "output_text", "text": "", "annotations": []},
    )
    for piece in ("Callgate", " gates", " tool calls."):
        s.ev("response.output_text.delta", **ids, delta=piece, logprobs=[])
    s.ev("response.output_text.annotation.added", **ids, annotation_index=0, annotation=annotation)
    s.ev("response.output_text.done", **ids, text=text, logprobs=[])
    s.ev("response.content_part.done", **ids, part=msg["content"][0])
    s.item_done(1, msg)
    s.completed()
    return s.to_bytes(), meta(
        "2026-11",
        "Hosted web search with its status events, then a cited assistant message; no calls.",
        ok(s, text),
        [EVENT_TYPES, "types/responses/response_output_text.py"],
    )


def synthetic_ids_zero_arg() -> tuple[bytes, dict[str, Any]]:
    s = Stream("r-7f3a")
    s.seq = 1
    s.created()
    note = message_item("item-0001", "Checking.", phase="commentary")
    s.message(0, note, chunks=["Check", "ing."])
    s.call(1, fc_item("item-0002", "k9", "list_tasks", "{}"))
    s.completed()
    data = s.to_bytes(crlf=True)
    # Keep-alive comments between events, as proxies add them.
    marker = b"\r\n\r\nevent: response.output_item.added"
    data = data.replace(marker, b"\r\n\r\n: keep-alive\r\n\r\n" + marker[4:])
    return data, meta(
        "2026-11",
        "IDs without provider prefixes, CRLF line endings, keep-alive comments, a commentary "
        "message and a zero-argument call {}; sequence numbers start at 1.",
        ok(s, "Checking."),
        [EVENT_TYPES, FC],
    )


def code_interpreter_then_call() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_ci_0001").created()
    ci = {
        "type": "code_interpreter_call",
        "id": "ci_0001",
        "container_id": "cntr_0001",
        "status": "completed",
        "code": "print(6*7)",
        "outputs": None,
    }
    s.added(0, ci)
    ids = {"item_id": ci["id"], "output_index": 0}
    s.ev("response.code_interpreter_call.in_progress", **ids)
    for piece in ("print(", "6*7)"):
        s.ev("response.code_interpreter_call_code.delta", **ids, delta=piece)
    s.ev("response.code_interpreter_call_code.done", **ids, code=ci["code"])
    s.ev("response.code_interpreter_call.interpreting", **ids)
    s.ev("response.code_interpreter_call.completed", **ids)
    s.item_done(0, ci)
    s.call(1, fc_item("fc_ci_1", "call_ci_1", "save_result", '{"value":42}'), ['{"val', 'ue":42}'])
    s.completed()
    return s.to_bytes(), meta(
        "2026-11",
        "Hosted code interpreter with code deltas and status events, then a function call.",
        ok(s),
        [EVENT_TYPES, "types/responses/response_code_interpreter_tool_call.py"],
    )


def sequence_gaps_resumed() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_gap_1", seq=40).created()
    s.seq += 7
    s.call(0, fc_item("fc_gap", "call_gap", "lookup", '{"id":7}'), ['{"id"', ":7}"])
    s.seq += 100
    s.completed()
    return s.to_bytes(event_lines=False), meta(
        "2026-11",
        "Sequence numbers start at 40 and skip values (a resumed stream); no event: lines.",
        ok(s),
        [EVENT_TYPES, "resources/responses/responses.py"],
    )


def old_baseline_done_name() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_old_1").created()
    item = fc_item("fc_old", "call_old", "get_weather", '{"city":"Oslo"}')
    s.added(0, item)
    s.ev(
        "response.function_call_arguments.delta",
        item_id="fc_old",
        output_index=0,
        delta=item["arguments"],
    )
    s.ev(
        "response.function_call_arguments.done",
        item_id="fc_old",
        output_index=0,
        arguments=item["arguments"],
        name="get_weather",
    )
    s.item_done(0, item)
    s.completed()
    return s.to_bytes(), meta(
        "2026-07-21",
        "Baseline 2026-07-21: function_call_arguments.done carries the function name.",
        ok(s),
        [EVENT_TYPES, "types/responses/response_function_call_arguments_done_event.py"],
    )


def incomplete_with_call() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_inc_1").created()
    item = fc_item("fc_inc", "call_inc", "get_weather", '{"city":"Rome"}')
    s.call(0, item)
    body = s.events[0]["response"] | {"status": "incomplete", "output": s.output()}
    body["incomplete_details"] = {"reason": "max_output_tokens"}
    s.ev("response.incomplete", response=body)
    return s.to_bytes(), meta(
        "2026-11",
        "A complete function call inside a response that ends incomplete: nothing is released.",
        {"outcome": "ProviderError", "error_code": "max_output_tokens", "done_items": 1},
        [EVENT_TYPES, "types/responses/response_incomplete_event.py"],
    )


def failed_after_error() -> tuple[bytes, dict[str, Any]]:
    s = Stream("resp_fail_1").created()
    s.ev(
        "error",
        error={
            "type": "too_many_requests",
            "code": "rate_limit_exceeded",
            "message": "Rate limit reached",
            "param": None,
        },
    )
    body = s.events[0]["response"] | {"status": "failed"}
    body["error"] = {"code": "rate_limit_exceeded", "message": "Rate limit reached"}
    s.ev("response.failed", response=body)
    return s.to_bytes(), meta(
        "2026-11",
        "The nested error shape seen on the wire, followed by response.failed.",
        {"outcome": "ProviderError", "error_code": "rate_limit_exceeded", "done_items": 0},
        [EVENT_TYPES, "types/responses/response_error_event.py"],
    )


def old_baseline_done_without_name() -> tuple[bytes, dict[str, Any]]:
    # What the live API sends under 2026-07-21: openai 2.46.0's type declares `name`
    # required, but recorded streams never carry it on function_call_arguments.done.
    s = Stream("resp_old_2").created()
    s.call(0, fc_item("fc_old2", "call_old2", "get_weather", '{"city":"Bergen"}'))
    s.completed()
    return s.to_bytes(), meta(
        "2026-07-21",
        "Baseline 2026-07-21 as the live API sends it: function_call_arguments.done "
        "without the function name that the SDK type declares required.",
        ok(s),
        [EVENT_TYPES, "types/responses/response_function_call_arguments_done_event.py"],
    )


CASES = {
    "parallel_calls_reasoning": parallel_calls_reasoning,
    "text_with_citation": text_with_citation,
    "synthetic_ids_zero_arg": synthetic_ids_zero_arg,
    "code_interpreter_then_call": code_interpreter_then_call,
    "sequence_gaps_resumed": sequence_gaps_resumed,
    "old_baseline_done_name": old_baseline_done_name,
    "old_baseline_done_without_name": old_baseline_done_without_name,
    "incomplete_with_call": incomplete_with_call,
    "failed_after_error": failed_after_error,
}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in CASES.items():
        data, metadata = make()
        (OUT / f"{name}.sse").write_bytes(data)
        text = json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"
        (OUT / f"{name}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
    print(f"wrote {len(CASES)} fixtures to {OUT}")
