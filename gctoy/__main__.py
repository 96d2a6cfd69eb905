"""``python -m gctoy``: the same as the ``gctoy`` command."""

from .cli import entry

entry()
