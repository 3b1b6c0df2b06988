"""Generator of the gemini_generate_content golden fixtures, hand-built from
contracts/gemini-generate-content.md (shapes as the Developer API streams them).

Run ``.venv/bin/python tests/gemini_generate_content/ggc_make_fixtures.py`` to rewrite them;
``test_ggc_golden.py`` checks the committed files equal :data:`FILES`.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

OUT = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gemini_generate_content"
FILES: dict[str, bytes] = {}
DOCS = "https://ai.google.dev/api/generate-content"
SIG_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"
FC_DOCS = "https://ai.google.dev/gemini-api/docs/function-calling"
MODEL = "gemini-3-flash-preview"


def gh(v: str, path: str) -> str:
    return f"https://github.com/googleapis/python-genai/blob/v{v}/google/genai/{path}"


def d(o: Any) -> str:
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def sse(chunks: list[Any], *, eol: str = "\n", last_blank: bool = True) -> bytes:
    out = [f"data: {d(c)}{eol}{eol}" for c in chunks]
    if not last_blank:
        out[-1] = out[-1][: -len(eol)]
    return "".join(out).encode()


def meta(desc: str, expected: dict[str, Any], *, rev: str = "2026-11", layer: str = "wire-sse"):
    v = "3.6.1" if rev == "2026-11" else "2.12.1"
    return {
        "provider": "google",
        "api_family": "gemini_generate_content",
        "api_version": "v1" if rev == "2026-11" else "v1beta",
        "contract_revision": rev,
        "layer": layer,
        "sdk_baseline": {"name": "google-genai", "version": v},
        "review_date": "2026-11-20" if rev == "2026-11" else "2026-07-21",
        "source_urls": [DOCS, gh(v, "types.py"), gh(v, "_api_client.py")],
        "description": desc,
        "expected": expected,
    }


def write(name: str, data: bytes, m: dict[str, Any]) -> None:
    FILES[f"{name}.sse"] = data
    FILES[f"{name}.json"] = (json.dumps(m, indent=2, ensure_ascii=False) + "\n").encode()


def chunk(parts=None, *, finish=None, usage=None, rid="r-1", extra=None, cand_extra=None):
    cand: dict[str, Any] = {}
    if parts is not None:
        cand["content"] = {"parts": parts, "role": "model"}
    if finish is not None:
        cand["finishReason"] = finish
    cand.update(cand_extra or {})
    cand["index"] = 0
    c: dict[str, Any] = {"candidates": [cand]}
    if usage is not None:
        c["usageMetadata"] = usage
    c["modelVersion"] = MODEL
    c["responseId"] = rid
    c.update(extra or {})
    return c


def usage(prompt: int, out: int, thoughts: int | None = None) -> dict[str, int]:
    u = {"promptTokenCount": prompt, "candidatesTokenCount": out}
    if thoughts is not None:
        u["thoughtsTokenCount"] = thoughts
    u["totalTokenCount"] = prompt + out + (thoughts or 0)
    return u


# -- 1. a plain text answer, usage as a running total ------------------------------------
write(
    "text_answer",
    sse(
        [
            chunk([{"text": "It is "}], usage=usage(9, 2)),
            chunk([{"text": "18 °C and "}], usage=usage(9, 5)),
            chunk([{"text": "sunny in Paris."}], finish="STOP", usage=usage(9, 9)),
        ]
    ),
    meta(
        "A final text answer streamed as three deltas; usageMetadata is a running total "
        "(the last one wins).",
        {
            "finish_reason": "STOP",
            "calls": [],
            "text": "It is 18 °C and sunny in Paris.",
            "n_parts": 1,
            "usage": usage(9, 9),
        },
    ),
)

# -- 2. Gemini 3: thoughts, parallel calls in one chunk, signature on the first call -----
SIG_A = "c2lnLWEtAAEC/+8="  # standard alphabet, padded
SIG_B = "c2lnLWItAwQF-_8"  # URL-safe alphabet, unpadded: kept byte-exact as received
write(
    "parallel_calls_one_chunk",
    sse(
        [
            chunk([{"text": "Checking the ", "thought": True}], usage=usage(20, 0, 4)),
            chunk([{"text": "weather and time.", "thought": True}], usage=usage(20, 0, 9)),
            chunk(
                [
                    {
                        "functionCall": {
                            "id": "fc-1",
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                        },
                        "thoughtSignature": SIG_A,
                    },
                    {"functionCall": {"id": "fc-2", "name": "get_time", "args": {"tz": "CET"}}},
                ],
                usage=usage(20, 14, 9),
            ),
            chunk([{"text": "", "thoughtSignature": SIG_B}], finish="STOP", usage=usage(20, 14, 9)),
        ]
    ),
    meta(
        "Thought summary deltas, two parallel calls with ids in one chunk (signature on the "
        "first call only), and a trailing empty text part carrying a URL-safe unpadded "
        "signature that must stay its own part.",
        {
            "finish_reason": "STOP",
            "calls": [
                ["fc-1", "get_weather", {"city": "Paris"}],
                ["fc-2", "get_time", {"tz": "CET"}],
            ],
            "text": "",
            "n_parts": 4,
            "signatures": [SIG_A, SIG_B],
            "usage": usage(20, 14, 9),
        },
    ),
)

# -- 3. v1beta, 2.12.1: calls without ids, split over chunks -> local ids ----------------
write(
    "calls_without_ids_split",
    sse(
        [
            chunk([{"text": "Let me look that up."}], rid="r-old"),
            chunk([{"functionCall": {"name": "lookup", "args": {"q": "euro 2024"}}}], rid="r-old"),
            chunk(
                [{"functionCall": {"name": "lookup", "args": {"q": "copa 2024"}}}],
                finish="STOP",
                usage=usage(30, 12),
                rid="r-old",
            ),
        ]
    ),
    meta(
        "Two calls of one function without functionCall.id, one per chunk (2.12.1, "
        "v1beta): the turn gives them deterministic local ids by position.",
        {
            "finish_reason": "STOP",
            "calls": [
                [None, "lookup", {"q": "euro 2024"}],
                [None, "lookup", {"q": "copa 2024"}],
            ],
            "text": "Let me look that up.",
            "n_parts": 3,
            "usage": usage(30, 12),
        },
        rev="2026-07-21",
    ),
)

# -- 4. hosted code execution kept raw, then a client call, then a usage-only trailer ----
write(
    "hosted_code_then_call",
    sse(
        [
            chunk(
                [
                    {"executableCode": {"language": "PYTHON", "code": "print(6*7)"}},
                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
                ]
            ),
            chunk([{"functionCall": {"id": "c-9", "name": "record", "args": {"value": 42}}}]),
            chunk([{"text": ""}], finish="STOP"),
            {"usageMetadata": usage(40, 22), "modelVersion": MODEL, "responseId": "r-1"},
        ]
    ),
    meta(
        "Server-side code execution parts (never released, kept raw), one client call, the "
        "finish, then a usage-only chunk with no candidates (last usage wins).",
        {
            "finish_reason": "STOP",
            "calls": [["c-9", "record", {"value": 42}]],
            "text": "",
            "n_parts": 4,
            "usage": usage(40, 22),
            "hosted": [["codeExecution", None, "OUTCOME_OK"]],
        },
    ),
)

# -- 5. CRLF and multi-line data --------------------------
multi = (
    "data: " + d(chunk([{"text": "Bonjour"}], rid="r-crlf")) + "\r\n\r\n"
    'data: {"candidates":[{"content":{"parts":[{"text":" à tous"}],\r\n'
    'data: "role":"model"},"index":0}],"responseId":"r-crlf"}\r\n\r\n'
    "data: "
    + d(chunk([{"text": "."}], finish="STOP", usage=usage(3, 4), rid="r-crlf"))
    + "\r\n\r\n"
)
write(
    "crlf_multiline",
    multi.encode(),
    meta(
        "CRLF line ends and one chunk split over two data: lines (joined with a newline, "
        "as the SDK joins them).",
        {
            "finish_reason": "STOP",
            "calls": [],
            "text": "Bonjour à tous.",
            "n_parts": 1,
            "usage": usage(3, 4),
        },
        rev="2026-07-21",
    ),
)

# -- 6. 3.6.1 automatic continuation: CONTINUATION is not a terminal ----------------------
write(
    "continuation_token",
    sse(
        [
            chunk([{"text": "Chapter one: "}]),
            chunk(
                [{"text": "it was a dark night"}],
                finish="CONTINUATION",
                usage=usage(5, 8192),
                cand_extra={"continuationToken": "Y29udC10b2tlbi0x"},
            ),
        ]
    ),
    meta(
        "finishReason CONTINUATION with a continuationToken (3.6.1): surfaced on the turn, "
        "nothing released, needs_continuation is true.",
        {
            "finish_reason": "CONTINUATION",
            "calls": [],
            "text": "Chapter one: it was a dark night",
            "n_parts": 1,
            "continuation_token": "Y29udC10b2tlbi0x",
            "usage": usage(5, 8192),
        },
    ),
)

# -- bodies -------------------------------------------------------------------------------
body = chunk(
    [
        {"text": "I will check both.", "thoughtSignature": SIG_A},
        {"functionCall": {"id": "b-1", "name": "get_weather", "args": {"city": "Oslo"}}},
        {"functionCall": {"id": "b-2", "name": "get_weather", "args": {"city": "Rome"}}},
    ],
    finish="STOP",
    usage=usage(11, 20),
    rid="r-body",
    cand_extra={
        "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
    },
)
write(
    "body_two_calls",
    (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode(),
    meta(
        "A non-streaming generateContent body with a signed text part and two calls.",
        {
            "finish_reason": "STOP",
            "calls": [
                ["b-1", "get_weather", {"city": "Oslo"}],
                ["b-2", "get_weather", {"city": "Rome"}],
            ],
            "text": "I will check both.",
            "n_parts": 3,
            "signatures": [SIG_A],
            "usage": usage(11, 20),
        },
        layer="json-body",
    ),
)
write(
    "body_text_v1beta",
    (d(chunk([{"text": "Hello."}], finish="STOP", rid="r-b2")) + "\n").encode(),
    meta(
        "A non-streaming text answer without usageMetadata (absence stays None).",
        {"finish_reason": "STOP", "calls": [], "text": "Hello.", "n_parts": 1, "usage": None},
        rev="2026-07-21",
        layer="json-body",
    ),
)

# -- hosted tools: grounding with citations (UTF-8 byte offsets), streamed and as a body ----
GROUND_DOCS = "https://ai.google.dev/gemini-api/docs/google-search"
ANSWER = "L’Espagne a gagné l’Euro 2024. Final: 2–1."
CITED_1 = "L’Espagne a gagné l’Euro 2024."
CITED_2 = "Final: 2–1."
B1 = len(CITED_1.encode())
B2 = B1 + 1
WEB = [
    {
        "web": {
            "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/a1",
            "title": "uefa.com",
        }
    },
    {
        "web": {
            "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/b2",
            "title": "lequipe.fr",
        }
    },
]
SUPPORTS = [
    {
        "segment": {"endIndex": B1, "text": CITED_1},
        "groundingChunkIndices": [0, 1],
        "confidenceScores": [0.93, 0.71],
    },
    {
        "segment": {"startIndex": B2, "endIndex": B2 + len(CITED_2.encode()), "text": CITED_2},
        "groundingChunkIndices": [1],
    },
]
GROUNDING = {
    "webSearchQueries": ["vainqueur euro 2024", "finale euro 2024 score"],
    "searchEntryPoint": {
        "renderedContent": '<style>.c{}</style><div class="c">vainqueur euro 2024</div>'
    },
    "groundingChunks": WEB,
    "groundingSupports": SUPPORTS,
}
URL_META = {
    "urlMetadata": [
        {
            "retrievedUrl": "https://www.uefa.com/euro2024/",
            "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
        }
    ]
}
SIG_G = "Z3JvdW5kZWQtc2lnbmF0dXJl"
GROUNDED_EXPECTED = {
    "finish_reason": "STOP",
    "calls": [],
    "text": ANSWER,
    "n_parts": 2,
    "usage": {**usage(9, 30), "toolUsePromptTokenCount": 120, "totalTokenCount": 159},
    "signatures": [SIG_G],
    "hosted": [
        ["googleSearch", None, None],
        ["googleSearch", None, None],
        ["urlContext", None, "URL_RETRIEVAL_STATUS_SUCCESS"],
    ],
    "citations": [
        ["web", WEB[0]["web"]["uri"], 0, B1],
        ["web", WEB[1]["web"]["uri"], 0, B1],
        ["web", WEB[1]["web"]["uri"], B2, B2 + len(CITED_2.encode())],
    ],
}
GROUNDED_USAGE = GROUNDED_EXPECTED["usage"]


def _grounded_meta(desc: str, layer: str = "wire-sse") -> dict[str, Any]:
    m = meta(desc, GROUNDED_EXPECTED, layer=layer)
    m["source_urls"].append(GROUND_DOCS)
    return m


write(
    "grounded_search_stream",
    sse(
        [
            chunk(
                [{"text": "L’Espagne a gagné"}],
                cand_extra={
                    "groundingMetadata": {"webSearchQueries": GROUNDING["webSearchQueries"][:1]}
                },
            ),
            chunk(
                [{"text": " l’Euro 2024."}],
                cand_extra={
                    "groundingMetadata": {"webSearchQueries": GROUNDING["webSearchQueries"]}
                },
            ),
            chunk([{"text": " Final: 2–1."}]),
            chunk(
                [{"text": "", "thoughtSignature": SIG_G}],
                finish="STOP",
                usage=GROUNDED_USAGE,
                cand_extra={"groundingMetadata": GROUNDING, "urlContextMetadata": URL_META},
            ),
        ]
    ),
    _grounded_meta(
        "A googleSearch + urlContext grounded answer: the queries stream early and are re-sent "
        "whole with the chunks and supports on the finishReason chunk (the cumulative rule); "
        "segment offsets are UTF-8 bytes of the joined text part (multi-byte characters before "
        "and inside the cited text); the signature rides on a trailing empty part."
    ),
)
write(
    "grounded_search_body",
    (
        json.dumps(
            chunk(
                [{"text": ANSWER}, {"text": "", "thoughtSignature": SIG_G}],
                finish="STOP",
                usage=GROUNDED_USAGE,
                cand_extra={"groundingMetadata": GROUNDING, "urlContextMetadata": URL_META},
            ),
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    ).encode(),
    _grounded_meta(
        "The same grounded answer as a non-streaming body (equal projection).", "json-body"
    ),
)

STORE = "fileSearchStores/handbook-7"
RETRIEVED = [
    {
        "retrievedContext": {
            "title": "handbook.pdf",
            "text": "Leave: 25 days a year.",
            "fileSearchStore": STORE,
        }
    },
    {
        "retrievedContext": {
            "uri": "https://intranet.example/faq",
            "title": "faq.md",
            "text": "Ask HR.",
            "fileSearchStore": STORE,
        }
    },
]
write(
    "file_search_and_code_v1beta",
    sse(
        [
            chunk(
                [{"executableCode": {"language": "PYTHON", "code": "print(25 - 3)", "id": "e-1"}}]
            ),
            chunk(
                [{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "22\n", "id": "e-1"}}],
                cand_extra={"groundingMetadata": {"groundingChunks": RETRIEVED[:1]}},
            ),
            chunk([{"text": "You have 22 days left."}]),
            chunk(
                [{"text": " Ask HR for more."}],
                finish="STOP",
                usage=usage(14, 12),
                cand_extra={
                    "groundingMetadata": {
                        "groundingChunks": RETRIEVED,
                        "groundingSupports": [
                            {
                                "segment": {
                                    "partIndex": 2,
                                    "endIndex": 22,
                                    "text": "You have 22 days left.",
                                },
                                "groundingChunkIndices": [0],
                            },
                            {
                                "segment": {
                                    "partIndex": 2,
                                    "startIndex": 23,
                                    "endIndex": 39,
                                    "text": "Ask HR for more.",
                                },
                                "groundingChunkIndices": [1, 0],
                            },
                        ],
                    }
                },
            ),
        ]
    ),
    meta(
        "fileSearch retrieved contexts, sent partly early and whole on the last chunk, with "
        "code execution parts paired by id before the cited text (partIndex 2).",
        {
            "finish_reason": "STOP",
            "calls": [],
            "text": "You have 22 days left. Ask HR for more.",
            "n_parts": 3,
            "usage": usage(14, 12),
            "hosted": [["codeExecution", "e-1", "OUTCOME_OK"], ["fileSearch", None, None]],
            "citations": [
                ["retrievedContext", None, 0, 22],
                ["retrievedContext", "https://intranet.example/faq", 23, 39],
                ["retrievedContext", None, 23, 39],
            ],
        },
        rev="2026-07-21",
    ),
)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in FILES.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {len(FILES)} files to {OUT}")
