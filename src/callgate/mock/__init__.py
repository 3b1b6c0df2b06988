"""A deterministic, scripted mock of the provider APIs on their real wire protocols.

Needs the ``server`` extra (Starlette + uvicorn): ``pip install 'callgate[server]'``.
"""

from ._app import create_app
from ._http import CONVERSATION_HEADER, TEST_ID_HEADER
from ._journal import Journal, JournalEntry
from ._providers import PROTOCOLS
from ._script import Script, ScriptBuilder, ScriptError, ScriptTurn, call, load_script
from ._server import MockServer, serve_forever
from ._state import Mismatch, MockState, Served, Session
from ._validate import CHECKS as VALIDATION_CHECKS

__all__ = [
    "CONVERSATION_HEADER",
    "PROTOCOLS",
    "TEST_ID_HEADER",
    "VALIDATION_CHECKS",
    "Journal",
    "JournalEntry",
    "Mismatch",
    "MockServer",
    "MockState",
    "Script",
    "ScriptBuilder",
    "ScriptError",
    "ScriptTurn",
    "Served",
    "Session",
    "call",
    "create_app",
    "load_script",
    "serve_forever",
]
