"""Provider-native request validation: malformed requests and broken continuations get
the provider's real 400.

Checks run before script matching (a refused request does not consume its turn) and
each can be switched off per script by name: ``{"validation": {"<name>": false}}``. A
switched-off check lets the request through to the script, which then judges it like
any other request. The names, per provider:

The request itself (every protocol, first, before the body is adapted or matched): its
fields, JSON types, enums and documented ranges, against the spec generated from both
SDK generations' request param types (:mod:`._providers._request_valid`)
    ``openai_request_valid``            OpenAI Responses (plain and Azure)
    ``anthropic_request_valid``         Anthropic Messages (beta threads included)
    ``gemini_request_valid``            Gemini Interactions
    ``gemini_gc_request_valid``         Gemini generateContent / streamGenerateContent
Each of these first checks the media of tool results with the provider's own answer
(unsupported type, oversize, bad base64, media in a Chat Completions tool message; each
provider's ``_media.py``, docs/request-validation.md "Media in tool results").
OpenAI Responses (``previous_response_id`` / replayed ``input`` items)
    ``openai_previous_response_found``  the previous id names a stored response
    ``openai_item_reference_found``     an ``item_reference`` names an output item of a
                                        stored response (404 otherwise)
    ``openai_output_has_call``          every ``function_call_output`` answers a call of the
                                        referenced chain or of an earlier replayed item
    ``openai_call_has_output``          every call of the previous response, and every
                                        replayed ``function_call``, has an output
    ``openai_reasoning_has_next_item``  a replayed reasoning item keeps the item after it
    ``openai_replay_matches_emitted``   a replayed item equals what this session's mock
                                        emitted under that id
Anthropic Messages (the full history)
    ``anthropic_tool_use_has_result``   every ``tool_use`` is answered in the next message
    ``anthropic_tool_result_first``     ``tool_result`` blocks come first in their message
    ``anthropic_tool_result_has_tool_use``  every ``tool_use_id`` names a ``tool_use`` of
                                        the previous message
    ``anthropic_thinking_signature``    a thinking block's signature matches its content
    ``anthropic_thinking_kept``         with thinking on, a continued tool turn keeps the
                                        thinking block it started with
Gemini Interactions (``previous_interaction_id`` / ``input`` steps)
    ``gemini_previous_interaction_found``   the previous id names an interaction (404)
    ``gemini_previous_interaction_stored``  ... created with ``store`` on (400)
    ``gemini_previous_interaction_active``  ... that was not cancelled (400)
    ``gemini_result_is_step``           no ``function_result`` nested in ``user_input``
                                        content (v1 admits only media/text content there)
    ``gemini_result_has_call``          every ``function_result`` answers a known call
    ``gemini_call_has_result``          every pending call gets a ``function_result``
    ``gemini_hosted_tool_declaration``  every hosted tool in ``tools`` is one the mock
                                        models, with pinned options only (runs first)
Gemini generateContent (the replayed ``contents``; stateless)
    ``gemini_gc_response_has_call``     every ``functionResponse`` follows a model turn
                                        with function calls and names one of them
    ``gemini_gc_results_in_one_content``  a turn's calls are answered in one ``user``
                                        Content, one ``functionResponse`` each
    ``gemini_gc_signature_present``     a call emitted with a ``thoughtSignature`` keeps it
    ``gemini_gc_signature_unaltered``   a replayed signature has the bytes emitted there
    ``gemini_gc_hosted_tools``          the hosted tool objects (``googleSearch``,
                                        ``fileSearch``, ``codeExecution``, ``urlContext``)
                                        are well formed; unpinned options are refused

Each provider's checks live in its ``_providers`` module (the previous-id checks first,
then the history checks, in the order listed); this module only holds the switches.
"""

from __future__ import annotations

from typing import Any

from ._http import Reply
from ._providers import PROTOCOLS, provider
from ._script import Script, ScriptError
from ._state import MockState, Session

__all__ = ["CHECKS", "check", "check_switches", "enabled", "refusing_check", "request_problem"]

CHECKS: tuple[str, ...] = tuple(name for p in PROTOCOLS for name in provider(p).checks)

_ALL = frozenset(CHECKS)


def check_switches(script: Script) -> None:
    """Raise :class:`~callgate.mock.ScriptError` for a validation switch with an unknown name."""
    for name in script.validation:
        if name not in CHECKS:
            raise ScriptError(
                f"unknown validation check {name!r} (known: {', '.join(CHECKS)})",
                path=script.path,
                location=f"/validation/{name}",
            )


def enabled(script: Script, name: str) -> bool:
    """Whether check ``name`` runs for this script (every check is on by default)."""
    return script.validation.get(name, True) is not False


def request_problem(session: Session, protocol: str, body: dict[str, Any]) -> Reply | None:
    """The provider's 400 for a create body its API refuses (a missing required field, a
    wrong JSON type, an unknown field, a value out of its enum or range), else ``None``."""
    found = provider(protocol)
    if found.validate is None or found.validate_switch is None:
        return None
    script = session.script
    if script.validation and not enabled(script, found.validate_switch):
        return None
    return found.validate(body)


def check(state: MockState, session: Session, protocol: str, body: dict[str, Any]) -> Reply | None:
    """The provider's error for a request the real API would refuse, else ``None``."""
    script = session.script
    on = _ALL if not script.validation else {n for n in CHECKS if enabled(script, n)}
    with state.lock:
        try:
            return provider(protocol).check(session.store, body, on)
        except TypeError as exc:
            # A field of a shape no provider accepts (an id that is a list or an object):
            # the API refuses it as invalid, so the mock does too, never with a 500.
            message = f"callgate mock: a request field has a shape the API refuses ({exc})"
            return Reply(400, provider(protocol).error_body(400, message))


def refusing_check(
    state: MockState, session: Session, protocol: str, body: dict[str, Any]
) -> str | None:
    """The name of the first enabled check that refuses ``body`` (run one at a time, only
    after :func:`check` refused it: the verdicts name the rule broken)."""
    script = session.script
    found = provider(protocol)
    with state.lock:
        for name in found.checks:
            if not enabled(script, name):
                continue
            try:
                if found.check(session.store, body, {name}) is not None:
                    return name
            except TypeError:
                return None
    return None
