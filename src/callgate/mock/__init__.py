"""A deterministic, scripted mock of the provider APIs on their real wire protocols.

Needs the ``server`` extra (Starlette + uvicorn): ``pip install 'callgate[server]'``.
"""

from ._app import Mismatch, MockState, create_app
from ._script import PROTOCOLS, Script, ScriptBuilder, ScriptError, ScriptTurn, call, load_script
from ._server import MockServer

__all__ = [
    "PROTOCOLS",
    "Mismatch",
    "MockServer",
    "MockState",
    "Script",
    "ScriptBuilder",
    "ScriptError",
    "ScriptTurn",
    "call",
    "create_app",
    "load_script",
]
