"""The ``callgate`` command: one subcommand per job (see docs/cli.md).

One module per command group: :mod:`._main` (the top-level parser, ``demo``, ``check``),
:mod:`._serve`, :mod:`._script`, :mod:`._ledger` and :mod:`._recording` (``record``,
``drift``, ``serve --recordings``, ``check --drift``). ``python -m callgate.cli`` and
``python -m callgate`` run :func:`main`, as the ``callgate`` console script does.

Exit codes shared by every command: 0 success, 2 usage error (argparse's own) or a
callgate error (one line on stderr). Each command documents its own 1 (and ``ledger``
its 3 and 4).
"""

from ._main import main, parser, version
from ._serve import base_url_table

__all__ = ["base_url_table", "main", "parser", "version"]
