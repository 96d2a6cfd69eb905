"""``python -m gctoy``: the same as the ``gctoy`` command."""

import sys

from .cli import main

sys.exit(main())
