"""The `synthorg` command's entry point: it takes SIGTERM like Ctrl-C before anything heavy is
imported, so a run stopped while it starts says so and exits 130."""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    from synthorg import interrupts

    signal.signal(signal.SIGTERM, interrupts.note_and_interrupt)
    interrupts.quiet_lost_interrupts()
    try:
        from synthorg.cli.app import main as run
    except BaseException as exc:
        # an interrupt, possibly wrapped by Python (a class body's __set_name__ raises
        # RuntimeError from it)
        if not (isinstance(exc, KeyboardInterrupt) or interrupts.take_noted()):
            raise
        interrupts.forget_half_imported_ray()
        # straight to the descriptor: an import the signal cut short may have left
        # sys.stderr redirected
        os.write(2, b"interrupted\n")
        sys.exit(130)
    try:
        run()
    finally:  # the command is done: a signal now would only break the shutdown
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
