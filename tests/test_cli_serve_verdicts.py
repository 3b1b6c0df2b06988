"""``callgate serve`` prints each verdict as it happens and counts them in its summary."""

from __future__ import annotations

import re
import signal

import httpx

from .test_cli_serve_log import CLOCK
from .test_cli_serve_log import serve as serve_fixture  # noqa: F401 - provides `serve`

SCRIPT = {
    "turns": [
        {
            "protocol": "anthropic_messages",
            "respond": {"text": "ok", "fault": {"type": "http_error", "status": 400}},
        }
    ]
}
BODY = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def test_a_verdict_is_printed_as_it_happens_and_in_the_summary(serve: object) -> None:
    served = serve("--quiet", script=SCRIPT)  # type: ignore[operator]
    url = f"{served.url}/anthropic/v1/messages"
    assert httpx.post(url, json=BODY, headers=HEADERS).status_code == 400
    assert httpx.post(url, json=BODY, headers=HEADERS).status_code == 200  # retried anyway
    code, err = served.stop(signal.SIGINT)
    assert code == 0
    lines = err.splitlines()
    assert re.fullmatch(
        CLOCK + r" VERDICT error retried_non_retryable test=default request=#1: "
        r"the request answered 400 \(#0\) was sent again",
        lines[0],
    ), lines[0]
    assert lines[1:] == [
        "callgate serve stopped. Sessions:",
        "  test id 'default': served 1, left 0, mismatches 0 (done)",
        "verdicts: 1 error(s), 0 warning(s): retried_non_retryable x1",
        "every session done",
    ]
