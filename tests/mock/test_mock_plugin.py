"""The pytest plugin, used from a test file the way a user would (through ``pytester``).

Each test writes a user's test module and its JSON script into a temporary directory and
runs pytest on it with the plugin loaded, then checks the outcome pytest reported.
"""

from __future__ import annotations

import importlib.metadata
import json
from typing import Any

# Imported here so that pytester's in-process runs find them already loaded (they are
# slow to import and pytester would otherwise re-import them for every run).
import anthropic  # noqa: F401
import openai  # noqa: F401
import pytest
from google import genai  # noqa: F401

pytest_plugins = ["pytester"]


def _plugin_args() -> list[str]:
    """Load the plugin explicitly unless the installed entry point already does."""
    installed = {ep.value for ep in importlib.metadata.entry_points(group="pytest11")}
    return [] if "callgate.pytest_plugin" in installed else ["-p", "callgate.pytest_plugin"]


# The user's suite runs as strictly as ours (warnings are errors; the -O notice is not).
STRICT = (
    "--strict-markers",
    "-W",
    "error",
    "-W",
    "ignore:assertions not in test modules:pytest.PytestConfigWarning",
)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*_plugin_args(), *STRICT, *args)


WEATHER = {
    "seed": 3,
    "turns": [
        {
            "protocol": "openai_responses",
            "expect": {"model": "gpt-test", "tools": ["get_weather"], "previous_id": "absent"},
            "respond": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        },
        {
            "protocol": "openai_responses",
            "expect": {
                "previous_id": "previous",
                "function_results": [{"name": "get_weather", "output": "sunny"}],
            },
            "respond": {"text": "It is sunny in Paris."},
        },
    ],
}

OPENAI_LOOP = """
import json

TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def ask(client, stream):
    first = client.responses.create(model="gpt-test", input="Weather in Paris?", tools=TOOLS)
    call = first.output[0]
    assert call.type == "function_call" and json.loads(call.arguments) == {"city": "Paris"}
    output = [{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}]
    kwargs = {"model": "gpt-test", "input": output, "previous_response_id": first.id}
    if not stream:
        return client.responses.create(**kwargs).output_text
    with client.responses.stream(**kwargs) as events:
        return events.get_final_response().output_text
"""


def _write_weather(pytester: pytest.Pytester, test_body: str, script: Any = None) -> None:
    scripts = pytester.mkdir("scripts")
    (scripts / "weather.json").write_text(json.dumps(script or WEATHER))
    pytester.makepyfile(test_user=OPENAI_LOOP + test_body)


def test_marked_script_drives_the_openai_sdk_through_a_tool_loop(
    pytester: pytest.Pytester,
) -> None:
    _write_weather(
        pytester,
        """
import pytest

@pytest.mark.callgate_script("scripts/weather.json")
@pytest.mark.parametrize("stream", [False, True])
def test_loop(callgate_server, stream):
    assert ask(callgate_server.openai_client(), stream) == "It is sunny in Paris."
    assert [e.outcome for e in callgate_server.journal] == ["matched", "matched"]
    assert callgate_server.remaining() == {"default": 0}

@pytest.mark.callgate_script("scripts/weather.json")
def test_each_test_gets_its_own_server(callgate_server):
    assert len(callgate_server.journal) == 0
    assert ask(callgate_server.openai_client(azure=True), False) == "It is sunny in Paris."
""",
    )
    # Run from another directory: the script path is relative to the test file.
    pytester.mkdir("elsewhere")
    pytester.chdir()
    result = run(pytester, str(pytester.path / "test_user.py"), "--rootdir", str(pytester.path))
    result.assert_outcomes(passed=3)


def test_unserved_turn_fails_the_test_naming_the_turn(pytester: pytest.Pytester) -> None:
    _write_weather(
        pytester,
        """
import pytest

@pytest.mark.callgate_script("scripts/weather.json")
def test_stops_after_first_turn(callgate_server):
    first = callgate_server.openai_client().responses.create(
        model="gpt-test", input="hi", tools=TOOLS
    )
    assert first.output[0].name == "get_weather"
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*callgate mock script not done*",
            "*1 turn(s) of conversation 'default' never requested "
            "(test id 'test_user.py::test_stops_after_first_turn')*",
        ]
    )


def test_a_mismatch_caught_by_the_user_still_fails_the_test(pytester: pytest.Pytester) -> None:
    _write_weather(
        pytester,
        """
import openai
import pytest

@pytest.mark.callgate_script("scripts/weather.json")
def test_swallows_the_error(callgate_server):
    with pytest.raises(openai.BadRequestError):
        callgate_server.openai_client().responses.create(model="other-model", input="hi")
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mismatch at /turns/0 (test id 'test_user.py::test_swallows_the_error', "
            "conversation 'default', "
            "openai_responses): model is 'other-model', expected 'gpt-test'; "
            "tool(s) get_weather not declared*",
        ]
    )


def test_a_failing_test_gets_the_journal_in_its_report(pytester: pytest.Pytester) -> None:
    _write_weather(
        pytester,
        """
import pytest

@pytest.mark.callgate_script("scripts/weather.json")
def test_sdk_error_propagates(callgate_server):
    callgate_server.openai_client().responses.create(model="other-model", input="hi")
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*BadRequestError*request does not match the script at /turns/0*",
            "*Captured callgate call*",
            "script: *weather.json",
            "problem: mismatch at /turns/0*",
            "#0 POST /openai/v1/responses test_id=test_user.py::test_sdk_error_propagates "
            "conversation=default -> 400 mismatch /turns/0",
        ]
    )


def test_unchecked_marker_and_ini_option_turn_the_check_off(pytester: pytest.Pytester) -> None:
    _write_weather(
        pytester,
        """
import pytest

pytestmark = pytest.mark.callgate_script("scripts/weather.json")

@pytest.mark.callgate_unchecked
def test_marked_unchecked(callgate_server):
    assert callgate_server.problems() == [
        "2 turn(s) of conversation 'default' never requested "
        "(test id 'test_user.py::test_marked_unchecked')"
    ]

def test_not_marked(callgate_server):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED test_user.py::test_not_marked*"])
    pytester.makeini("[pytest]\ncallgate_check = false\n")
    run(pytester, "--strict-config").assert_outcomes(passed=2)


def test_missing_marker_and_bad_script_are_setup_errors(pytester: pytest.Pytester) -> None:
    bad = {"turns": [{"protocol": "openai_responses", "respond": {"text": 7}}]}
    _write_weather(
        pytester,
        """
import pytest

def test_no_script(callgate_server):
    pass

@pytest.mark.callgate_script("scripts/weather.json")
def test_bad_script(callgate_server):
    pass

@pytest.mark.callgate_script("scripts/absent.json")
def test_absent_script(callgate_server):
    pass
""",
        script=bad,
    )
    result = run(pytester)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*callgate_server needs a script: mark the test with*",
            "*ScriptError: *weather.json:/turns/0/respond/text: expected str*",
            "*ScriptError: *absent.json: cannot read script*",
        ]
    )


def test_builder_fixture_override_with_sessions_and_every_sdk(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest
from callgate.mock import ScriptBuilder, call

@pytest.fixture
def callgate_script():
    builder = ScriptBuilder(seed=9)
    builder.turn("anthropic_messages", conversation="claude", expect={"model": "c"},
                 calls=[call("lookup", q="x")])
    builder.turn("gemini_interactions", conversation="gemini", expect={"model": "g"},
                 text="from gemini")
    return builder
"""
    )
    pytester.makepyfile(
        test_sdks="""
import asyncio

def _claude(client):
    message = client.messages.create(
        model="c", max_tokens=16, messages=[{"role": "user", "content": "q"}]
    )
    return [(b.name, b.input) for b in message.content]

def test_two_sessions_consume_the_script_each(callgate_server):
    for test_id in ("a", "b"):
        claude = callgate_server.anthropic_client(test_id=test_id, conversation="claude")
        assert _claude(claude) == [("lookup", {"q": "x"})]
        gemini = callgate_server.gemini_client(test_id=test_id, conversation="gemini")
        interaction = gemini.interactions.create(model="g", input="hello")
        assert interaction.steps[-1].content[0].text == "from gemini"
    assert {e.test_id for e in callgate_server.journal} == {"a", "b"}

def test_a_session_left_unfinished_is_named(callgate_server):
    claude = callgate_server.anthropic_client(test_id="a", conversation="claude")
    _claude(claude)
    gemini = callgate_server.gemini_client(test_id="b", conversation="gemini")
    gemini.interactions.create(model="g", input="hello")

def test_async_client(callgate_server):
    async def main():
        async with callgate_server.async_anthropic_client(conversation="claude") as client:
            message = await client.messages.create(
                model="c", max_tokens=16, messages=[{"role": "user", "content": "q"}]
            )
        gemini = callgate_server.gemini_client(conversation="gemini").aio
        await gemini.interactions.create(model="g", input="hello")
        await gemini.aclose()
        return message.content[0].name
    assert asyncio.run(main()) == "lookup"
"""
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines_random(
        [
            "*1 turn(s) of conversation 'gemini' never requested (test id 'a')*",
            "*1 turn(s) of conversation 'claude' never requested (test id 'b')*",
        ]
    )


def test_sdk_retries_are_off_by_default_and_can_be_turned_on(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_retries="""
import pytest
from callgate.mock import ScriptBuilder

@pytest.fixture
def callgate_script():
    return {"turns": [{"protocol": "openai_responses", "respond": {"text": "ok"}}]}

@pytest.mark.callgate_unchecked
def test_clients(callgate_server):
    openai_client = callgate_server.openai_client(test_id="t", conversation="c")
    assert openai_client.max_retries == 0
    assert openai_client.default_headers["x-callgate-test-id"] == "t"
    assert openai_client.default_headers["x-callgate-conversation"] == "c"
    assert callgate_server.openai_client(max_retries=3).max_retries == 3
    assert callgate_server.async_openai_client().max_retries == 0
    assert callgate_server.anthropic_client().max_retries == 0
    custom = callgate_server.openai_client(default_headers={"x-extra": "1"}, test_id="t")
    assert custom.default_headers["x-extra"] == "1"
    assert custom.default_headers["x-callgate-test-id"] == "t"
    assert "x-callgate-conversation" not in custom.default_headers
"""
    )
    run(pytester).assert_outcomes(passed=1)


def test_markers_are_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(
        ["@pytest.mark.callgate_script(path):*", "@pytest.mark.callgate_unchecked:*"]
    )
