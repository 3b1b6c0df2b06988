"""``python -m callgate.cli``: the ``callgate`` command."""

from . import main

raise SystemExit(main())
