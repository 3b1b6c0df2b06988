"""Every protocol room exports exactly the shared names plus its declared extras."""

from __future__ import annotations

import pytest

from callgate._protocols import PROTOCOLS, room

SHARED = {"Parser", "State", "Turn", "parse_stream", "parse_response"}
ROOM_NAMES = {
    "openai_responses": {
        "Connection",
        "ConnectionToken",
        "FunctionCall",
        "IMAGE_TYPES",
        "ProviderErrorInfo",
        "Steer",
        "build_stateful_continuation",
        "build_stateless_continuation",
        "parse_connection",
    },
    "anthropic_messages": {
        "IMAGE_BASE64_MAX",
        "IMAGE_TYPES",
        "ToolUse",
        "RECOVERY_ERROR_TEXT",
        "RecoveryCall",
        "SystemMessageCapability",
        "build_continuation",
        "build_thread_continuation",
    },
    "gemini_interactions": {
        "FunctionCall",
        "MEDIA_TYPES",
        "build_stateful_continuation",
        "build_stateless_continuation",
        "parse_interaction",
    },
    "gemini_generate_content": {
        "FunctionCall",
        "LOCAL_ID_PREFIX",
        "build_continuation",
        "same_signature",
    },
    "openai_chat_completions": {
        "PROFILES",
        "Profile",
        "ToolCall",
        "build_continuation",
    },
}


def test_every_registered_room_is_listed_here() -> None:
    assert set(PROTOCOLS) == set(ROOM_NAMES)


@pytest.mark.parametrize("protocol", sorted(ROOM_NAMES))
def test_all_is_exactly_the_shared_names_plus_the_room_extras(protocol: str) -> None:
    module = room(protocol)
    assert len(set(module.__all__)) == len(module.__all__)  # order: ruff's RUF022 sort
    assert set(module.__all__) == SHARED | ROOM_NAMES[protocol]
    for name in module.__all__:
        assert getattr(module, name) is not None


@pytest.mark.parametrize("protocol", sorted(ROOM_NAMES))
def test_every_room_has_the_same_file_set(protocol: str) -> None:
    from pathlib import Path

    folder = Path(room(protocol).__file__).parent
    files = {p.name for p in folder.glob("*.py")}
    required = {
        "__init__.py",
        "_events.py",
        "_state.py",
        "_parser.py",
        "_handlers.py",
        "_assembly.py",
        "_turn.py",
        "_body.py",
        "_continuation.py",
        "_hosted.py",
        "_render.py",
        "_media.py",
    }
    assert required <= files, sorted(required - files)
    # Only the declared roles, plus _threads.py where a protocol has a server-held
    # conversation mode beside its stateful id (Anthropic's message threads), and
    # _event_ids.py where its events carry resume tokens (Interactions' event_id), and
    # _profiles.py where OpenAI-compatible servers need named relaxations (Chat Completions),
    # and _connection.py + _steering.py where one socket carries many responses (the
    # Responses WebSocket mode and its steering), and _history.py where the caller's history
    # is checked against the API's conversation rules (Anthropic's role table).
    optional = {"_threads.py", "_event_ids.py", "_profiles.py", "_connection.py", "_steering.py"}
    optional |= {"_history.py"}
    assert files <= required | optional, sorted(files - required - optional)


@pytest.mark.parametrize("protocol", sorted(ROOM_NAMES))
def test_every_room_names_its_provider_and_its_gate_the_same_way(protocol: str) -> None:
    import importlib

    base = room(protocol).__name__
    events = importlib.import_module(f"{base}._events")
    turn = importlib.import_module(f"{base}._turn")
    assert isinstance(events.PROVIDER, str)
    for name in ("make_turn", "turn_digest", "release_calls"):
        assert callable(getattr(turn, name)), name
