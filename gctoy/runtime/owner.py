"""What the runtimes share about their machine's lifetime: closing a runtime closes its machine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from gctoy.emu import Machine


class MachineOwner:
    """A runtime bound to one machine: ``with Runtime(...) as runtime:`` releases it at the end."""

    machine: Machine

    def close(self) -> None:
        """Release the machine's Unicorn engine (see `Machine.close`)."""
        self.machine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
