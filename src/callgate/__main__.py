"""``python -m callgate``: the ``callgate`` command."""

from .cli import main

raise SystemExit(main())
