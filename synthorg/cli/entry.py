"""The `synthorg` command's entry point: it takes SIGTERM like Ctrl-C before anything heavy is
imported, so a run stopped while it starts says so and exits 130."""

from __future__ import annotations

import os
import signal
import sys


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    try:
        from synthorg.cli.app import main as run
    except KeyboardInterrupt:
        # straight to the descriptor: an import the signal cut short may have left
        # sys.stderr redirected
        os.write(2, b"interrupted\n")
        sys.exit(130)
    try:
        run()
    finally:  # the command is done: a signal now would only break the shutdown
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
