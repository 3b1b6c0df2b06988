"""Generator of the openai_chat_completions golden fixtures, hand-built from
docs/contracts/openai-chat-completions.md (shapes as OpenAI streams them, §1.3).

Run ``.venv/bin/python -m tests.openai_chat_completions.make_fixtures`` to rewrite them;
``test_golden.py`` checks the committed files equal :data:`FILES`.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

from callgate.contracts import get_baseline

OUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "openai_chat_completions"
FILES: dict[str, bytes] = {}
ID = "chatcmpl-golden-1"
HEAD = {"id": ID, "object": "chat.completion.chunk", "created": 1764979200, "model": "gpt-4o-mini"}
USAGE = {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}


def d(o: Any) -> str:
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def sse(chunks: list[Any], *, eol: str = "\n", done: bool = True, extra: str = "") -> bytes:
    out = [extra] + [f"data: {d(c)}{eol}{eol}" for c in chunks]
    if done:
        out.append(f"data: [DONE]{eol}{eol}")
    return "".join(out).encode()


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        **HEAD,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        **top,
    }


def first(index: int, call_id: str, name: str) -> dict[str, Any]:
    entry = {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    return chunk({"tool_calls": [entry]})


def args(index: int, text: str) -> dict[str, Any]:
    return chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})


def meta(desc: str, expected: dict[str, Any], *, rev: str = "2026-11", layer: str = "wire-sse"):
    base = get_baseline("openai_chat_completions", rev)
    return {
        "provider": "openai",
        "api_family": "openai_chat_completions",
        "api_version": base.api_version,
        "contract_revision": rev,
        "layer": layer,
        "sdk_baseline": {"name": "openai", "version": base.sdk_version},
        "review_date": base.review_date.isoformat(),
        "source_urls": list(base.source_urls),
        "description": desc,
        "expected": expected,
    }


def write(name: str, data: bytes, m: dict[str, Any]) -> None:
    FILES[f"{name}.sse"] = data
    FILES[f"{name}.json"] = (json.dumps(m, indent=2, ensure_ascii=False) + "\n").encode()


ROLE = chunk({"role": "assistant", "content": None, "refusal": None})

write(
    "parallel_calls_interleaved",
    sse(
        [
            ROLE,
            first(0, "call_a", "get_weather"),
            args(0, '{"city"'),
            first(1, "call_b", "get_time"),
            args(1, '{"tz":'),
            args(0, ':"Paris"}'),
            args(1, '"CET"}'),
            chunk({}, "tool_calls"),
            {**HEAD, "choices": [], "usage": USAGE},
        ]
    ),
    meta(
        "Two parallel calls whose argument deltas interleave by index (0, 1, 0, 1), "
        "finish_reason tool_calls, then the include_usage chunk with empty choices.",
        {
            "finish_reason": "tool_calls",
            "calls": [
                ["call_a", "get_weather", {"city": "Paris"}],
                ["call_b", "get_time", {"tz": "CET"}],
            ],
            "text": "",
            "usage": True,
        },
    ),
)
write(
    "text_stop",
    sse(
        [chunk({"role": "assistant", "content": ""})]
        + [chunk({"content": t}) for t in ("Hel", "lo ", "wörld")]
        + [chunk({}, "stop")]
    ),
    meta(
        "A text answer in three deltas (one non-ASCII), finish_reason stop, no usage.",
        {"finish_reason": "stop", "calls": [], "text": "Hello wörld", "usage": False},
        rev="2026-07-21",
    ),
)
write(
    "forced_function_stop",
    sse([ROLE, first(0, "call_f", "lookup"), args(0, '{"q":"x"}'), chunk({}, "stop")]),
    meta(
        "tool_choice named 'lookup': OpenAI ends the forced call with finish_reason stop "
        "(vllm-project/vllm#25054); released only when the parser is told the tool_choice.",
        {
            "finish_reason": "stop",
            "calls": [["call_f", "lookup", {"q": "x"}]],
            "text": "",
            "usage": False,
            "tool_choice": {"type": "function", "function": {"name": "lookup"}},
        },
    ),
)
write(
    "refusal",
    sse(
        [chunk({"role": "assistant", "content": None, "refusal": ""})]
        + [chunk({"refusal": t}) for t in ("I can't ", "help with that.")]
        + [chunk({}, "stop"), {**HEAD, "choices": [], "usage": USAGE}]
    ),
    meta(
        "A refusal in delta.refusal fragments: an outcome on the turn, not text.",
        {
            "finish_reason": "stop",
            "calls": [],
            "text": "",
            "usage": True,
            "refusal": "I can't help with that.",
        },
    ),
)
write(
    "comments_crlf_event_lines",
    sse(
        [ROLE, first(0, "call_k", "ping"), args(0, "{}"), chunk({}, "tool_calls")],
        eol="\r\n",
        extra=": keep-alive\r\n\r\nevent: message\r\n",
    ),
    meta(
        "CRLF line ends, a ': keep-alive' comment (vLLM, DeepSeek under load) and an "
        "event: line, both ignored as the SDK ignores them.",
        {
            "finish_reason": "tool_calls",
            "calls": [["call_k", "ping", {}]],
            "text": "",
            "usage": False,
        },
    ),
)
write(
    "reasoning_usage_last_chunk",
    sse(
        [
            chunk({"role": "assistant", "reasoning_content": "think "}),
            chunk({"reasoning_content": "more"}),
            chunk({"content": "ok"}),
            chunk({}, "stop", usage=USAGE),
        ]
    ),
    meta(
        "reasoning_content deltas (llama.cpp, DeepSeek) kept in message_extra; usage on the "
        "last content chunk (llama.cpp before its usage chunk): telemetry, never a refusal.",
        {
            "finish_reason": "stop",
            "calls": [],
            "text": "ok",
            "usage": True,
            "reasoning_content": "think more",
        },
    ),
)
write(
    "length_truncated",
    sse([ROLE, first(0, "call_t", "write"), args(0, '{"text":"abc'), chunk({}, "length")]),
    meta(
        "finish_reason length with a cut call: refused, nothing released.",
        {"refused": "ProviderError", "because": "length"},
    ),
)
BODY = {
    "id": "chatcmpl-golden-body",
    "object": "chat.completion",
    "created": 1764979200,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"tz":"CET"}'},
                    },
                ],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": USAGE,
    "service_tier": "default",
    "system_fingerprint": "fp_golden",
}
write(
    "body_two_calls",
    (json.dumps(BODY, indent=2) + "\n").encode(),
    meta(
        "A non-streamed chat.completion with two tool calls.",
        {
            "finish_reason": "tool_calls",
            "calls": [
                ["call_1", "get_weather", {"city": "Oslo"}],
                ["call_2", "get_time", {"tz": "CET"}],
            ],
            "text": "",
            "usage": True,
        },
        layer="json-body",
    ),
)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in FILES.items():
        (OUT / name).write_bytes(data)


if __name__ == "__main__":
    main()
