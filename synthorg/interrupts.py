"""SIGTERM and SIGINT while a command starts, before a run loop takes signals over.

The handler raises KeyboardInterrupt, as Ctrl-C does. Python runs a handler at the next
bytecode boundary, and when that lies in an at-fork hook or a finaliser (Ray and subprocess
fork while starting), the exception is printed as "Exception ignored" and lost. So the
handler also notes the signal: `raise_if_noted` raises it again at the next safe point, and
the unraisable hook keeps such a lost interrupt off the screen.
"""

from __future__ import annotations

import sys

_noted: list[int] = []


def note_and_interrupt(signum: int, frame: object) -> None:
    _noted.append(signum)
    raise KeyboardInterrupt


def take_noted() -> bool:
    """Whether a signal was noted since the last call (a run loop taking signals over asks:
    one whose interrupt was swallowed stops the run at its first tick boundary)."""
    noted = bool(_noted)
    _noted.clear()
    return noted


def raise_if_noted() -> None:
    """Raise KeyboardInterrupt for a signal whose own interrupt was swallowed."""
    if take_noted():
        raise KeyboardInterrupt


def quiet_lost_interrupts() -> None:
    """Install an unraisable hook that drops KeyboardInterrupts (they are noted) and reports
    everything else as Python would."""
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            default(unraisable)

    sys.unraisablehook = hook


def forget_half_imported_ray() -> None:
    """Drop Ray's exit hook when a signal cut `import ray` short and Ray never started: the
    hook would import the rest of Ray at exit and print a traceback."""
    import atexit

    worker = sys.modules.get("ray._private.worker")
    shutdown = getattr(worker, "shutdown", None)
    if worker is None or shutdown is None:
        return
    started = getattr(getattr(worker, "global_worker", None), "connected", False)
    if not started:
        atexit.unregister(shutdown)
