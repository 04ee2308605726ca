"""``python -m gateway`` is the ``mnemo`` command."""

from gateway.cli import main

raise SystemExit(main())
